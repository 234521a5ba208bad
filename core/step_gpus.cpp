#include "core/step_gpus.hpp"

namespace hq {
namespace {

// How many GPUs the step wants on its node `index` (of `nodes`), holding `tasks` tasks there
// (64-bit: a count from srun times the tasks cannot overflow).
int64_t wanted_on(const StepGpuRequest& req, size_t index, size_t nodes, size_t tasks) {
  if (req.gpus_per_node > 0) return req.gpus_per_node;
  if (req.gpus_per_task > 0) return int64_t{req.gpus_per_task} * static_cast<int64_t>(tasks);
  int64_t n = static_cast<int64_t>(nodes);
  return req.gpus / n + (static_cast<int64_t>(index) < req.gpus % n ? 1 : 0);
}

const NodeAlloc* alloc_of(const std::vector<NodeAlloc>& alloc, const std::string& node) {
  for (const NodeAlloc& a : alloc)
    if (a.node == node) return &a;
  return nullptr;
}

}  // namespace

Status assign_step_gpus(const std::vector<NodeAlloc>& alloc, const StepGpuRequest& req,
                        const std::map<std::string, std::set<int32_t>>& busy, StepLayout& layout) {
  const Status gres = invalid("Invalid generic resource (gres) specification");
  if (req.gpus < 0 || req.gpus_per_node < 0 || req.gpus_per_task < 0) return gres;
  if (req.gpus > 0 && static_cast<size_t>(req.gpus) < layout.nodes.size()) return gres;  // a node without one
  std::vector<std::vector<int32_t>> picked(layout.nodes.size());
  bool held = false;
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    const NodeAlloc* a = alloc_of(alloc, layout.nodes[i].name);
    if (!a) return gres;
    if (!req.asked()) {
      picked[i] = a->gpus;
      continue;
    }
    int64_t want = wanted_on(req, i, layout.nodes.size(), layout.nodes[i].tasks.size());
    if (want > static_cast<int64_t>(a->gpus.size())) return gres;
    auto b = busy.find(a->node);
    for (int32_t g : a->gpus) {
      if (static_cast<int64_t>(picked[i].size()) == want) break;
      if (b == busy.end() || !b->second.count(g)) picked[i].push_back(g);
    }
    held |= static_cast<int64_t>(picked[i].size()) < want;
  }
  if (held) return unavailable("Requested nodes are busy");
  for (size_t i = 0; i < layout.nodes.size(); ++i) layout.nodes[i].gpus = std::move(picked[i]);
  return Status::ok();
}

}  // namespace hq
