#include "core/gpu_select.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace hq {
namespace {

bool is_free(const std::vector<char>& used, size_t i) { return i >= used.size() || !used[i]; }
bool matches(const NodeGpu& g, std::string_view type) { return type.empty() || g.type == type; }

}  // namespace

int32_t free_gpus_of_type(const std::vector<NodeGpu>& gpus, const std::vector<char>& used, std::string_view type) {
  int32_t n = 0;
  for (size_t i = 0; i < gpus.size(); ++i) n += is_free(used, i) && matches(gpus[i], type);
  return n;
}

std::vector<int32_t> pick_gpus(const std::vector<NodeGpu>& gpus, const std::vector<char>& used, int32_t count,
                               std::string_view type) {
  if (count <= 0) return {};
  // Free GPUs by affinity group, each group's indices ascending; groups by first index.
  std::map<std::string, std::vector<int32_t>> by_cpus;
  for (size_t i = 0; i < gpus.size(); ++i)
    if (is_free(used, i) && matches(gpus[i], type)) by_cpus[gpus[i].cpus].push_back(static_cast<int32_t>(i));
  std::vector<std::vector<int32_t>> groups;
  for (auto& [cpus, idx] : by_cpus) groups.push_back(std::move(idx));
  std::sort(groups.begin(), groups.end());
  size_t total = 0;
  for (const auto& g : groups) total += g.size();
  if (total < static_cast<size_t>(count)) return {};
  // One group holds them all: the smallest such group.
  const std::vector<int32_t>* fit = nullptr;
  for (const auto& g : groups)
    if (g.size() >= static_cast<size_t>(count) && (!fit || g.size() < fit->size())) fit = &g;
  std::vector<int32_t> out;
  if (fit) {
    out.assign(fit->begin(), fit->begin() + count);
    return out;
  }
  // Otherwise the fullest groups first: the fewest groups in all.
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const auto& g : groups)
    for (int32_t i : g)
      if (static_cast<int32_t>(out.size()) < count) out.push_back(i);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace hq
