#include "core/cpu_bind.hpp"

#include <algorithm>
#include <tuple>

#include "core/hardware.hpp"

namespace hq {

Result<CpuBind> parse_cpu_bind(std::string_view text) {
  CpuBind b;
  if (text.empty()) return b;
  if (text == "none" || text == "no") b.kind = CpuBindKind::kNone;
  else if (text == "cores") b.kind = CpuBindKind::kCores;
  else if (text == "threads") b.kind = CpuBindKind::kThreads;
  else if (text.rfind("map_cpu:", 0) == 0) {
    auto list = parse_cpulist(text.substr(8));
    if (!list) return list.status().with_context("--cpu-bind=map_cpu");
    if (list->empty()) return invalid("--cpu-bind=map_cpu needs a CPU list");
    b.kind = CpuBindKind::kMap;
    b.map = std::move(list).value();
  } else {
    return invalid("--cpu-bind must be none, cores, threads or map_cpu:<list> (got '" + std::string(text) + "')");
  }
  return b;
}

std::vector<int32_t> choose_cpus(const std::vector<int32_t>& pool, const std::map<int32_t, int32_t>& in_use,
                                 int32_t n, const std::vector<int32_t>& preferred) {
  std::vector<std::tuple<int32_t, int32_t, int32_t>> ranked;  // (jobs on it, not preferred, id)
  for (int32_t cpu : pool) {
    auto it = in_use.find(cpu);
    bool pref = std::binary_search(preferred.begin(), preferred.end(), cpu);
    ranked.emplace_back(it == in_use.end() ? 0 : it->second, pref ? 0 : 1, cpu);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<int32_t> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int32_t>(out.size()) < n; ++i) out.push_back(std::get<2>(ranked[i]));
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<int32_t>> affinity_for(const CpuBind& bind, const std::vector<int32_t>& allocated) {
  switch (bind.kind) {
    case CpuBindKind::kNone: return std::vector<int32_t>{};
    case CpuBindKind::kMap:
      for (int32_t cpu : bind.map)
        if (!std::binary_search(allocated.begin(), allocated.end(), cpu))
          return invalid("--cpu-bind=map_cpu names CPU " + std::to_string(cpu) + ", which is not allocated to the job (" +
                         format_cpulist(allocated) + ")");
      return bind.map;
    default: return allocated;
  }
}

}  // namespace hq
