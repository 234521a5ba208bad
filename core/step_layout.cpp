#include "core/step_layout.hpp"

#include <algorithm>
#include <numeric>

#include "core/job_env.hpp"

namespace hq {
namespace {

struct Candidate {
  const NodeAlloc* node = nullptr;
  int32_t free = 0;       // CPUs no other (non-overlap) step holds
  bool required = false;  // named by -w
};

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

Status check_request(const StepRequest& r) {
  if (r.ntasks < 0 || r.nodes_min < 0 || r.nodes_max < 0 || r.ntasks_per_node < 0) return invalid("Invalid numeric value");
  if (r.cpus_per_task < 1) return invalid("Invalid --cpus-per-task argument");
  if (r.distribution == TaskDistribution::kPlane && r.plane_size < 1) return invalid("Invalid distribution plane size");
  if (r.nodes_max > 0 && r.nodes_max < r.nodes_min) return invalid("Invalid node count specification");
  return Status::ok();
}

// The job's nodes a step may use: not excluded, with what other steps leave free.
std::vector<Candidate> candidates(const std::vector<NodeAlloc>& alloc, const std::map<std::string, int32_t>& busy,
                                  const StepRequest& req) {
  std::vector<Candidate> out;
  for (const NodeAlloc& a : alloc) {
    if (listed(req.exclude, a.node)) continue;
    auto held = busy.find(a.node);
    int32_t taken = req.overlap || held == busy.end() ? 0 : held->second;
    out.push_back({&a, std::max(0, a.cpus - taken), listed(req.nodelist, a.node)});
  }
  return out;
}

bool exact_cpus(const StepRequest& req) { return req.exact || req.cpus_per_task_set; }

// Tasks a node can take: its CPUs (all of them, or only free ones) over -c, at most
// --ntasks-per-node; unbounded with -O.
int32_t capacity(const Candidate& c, const StepRequest& req, int32_t ntasks, bool count_busy) {
  int32_t cpus = c.node->cpus;
  if (count_busy) cpus = exact_cpus(req) ? c.free : (c.free == c.node->cpus ? cpus : 0);
  int32_t cap = req.overcommit ? (cpus > 0 ? ntasks : 0) : cpus / req.cpus_per_task;
  return req.ntasks_per_node > 0 ? std::min(cap, req.ntasks_per_node) : cap;
}

// `count` nodes: the -w ones, then others in the allocation's order, preferring those with
// room now; back in the allocation's order.
std::vector<Candidate> choose_nodes(const std::vector<Candidate>& all, size_t count, const StepRequest& req, int32_t ntasks) {
  std::vector<size_t> picked;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].required) picked.push_back(i);
  for (bool with_room : {true, false})
    for (size_t i = 0; i < all.size() && picked.size() < count; ++i)
      if (!all[i].required && (capacity(all[i], req, ntasks, true) > 0) == with_room &&
          std::find(picked.begin(), picked.end(), i) == picked.end())
        picked.push_back(i);
  std::sort(picked.begin(), picked.end());
  std::vector<Candidate> out;
  for (size_t i : picked) out.push_back(all[i]);
  return out;
}

TaskDistribution resolve(TaskDistribution d, int32_t ntasks, size_t nnodes) {
  if (d != TaskDistribution::kDefault) return d;
  return ntasks > static_cast<int32_t>(nnodes) ? TaskDistribution::kBlock : TaskDistribution::kCyclic;
}

// Deals tasks 0..ntasks-1 to nodes with room, `chunk` at a time, round after round.
void deal(std::vector<StepNode>& nodes, const std::vector<int32_t>& cap, int32_t ntasks, int32_t chunk) {
  uint32_t next = 0;
  while (static_cast<int32_t>(next) < ntasks)
    for (size_t i = 0; i < nodes.size() && static_cast<int32_t>(next) < ntasks; ++i)
      for (int32_t k = 0; k < chunk && static_cast<int32_t>(next) < ntasks; ++k) {
        if (static_cast<int32_t>(nodes[i].tasks.size()) >= cap[i]) break;
        nodes[i].tasks.push_back(next++);
      }
}

// Block: every node one task, the rest filling nodes in order; task ids consecutive per node.
void block(std::vector<StepNode>& nodes, const std::vector<int32_t>& cap, int32_t ntasks) {
  std::vector<int32_t> count(nodes.size(), 1);
  int32_t left = ntasks - static_cast<int32_t>(nodes.size());
  for (size_t i = 0; i < nodes.size() && left > 0; ++i) {
    int32_t more = std::min(left, cap[i] - count[i]);
    count[i] += more;
    left -= more;
  }
  uint32_t next = 0;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int32_t k = 0; k < count[i]; ++k) nodes[i].tasks.push_back(next++);
}

std::string job_words(uint64_t job_id) { return "Unable to create step for job " + std::to_string(job_id) + ": "; }

// The chosen nodes' tasks and CPUs, or why not now (busy) or never (refused).
Result<StepLayout> lay_out(const std::vector<Candidate>& all, const StepRequest& req, int32_t nnodes, StepLayout out,
                           uint64_t job_id);

}  // namespace

Result<StepLayout> plan_step(const std::vector<NodeAlloc>& alloc, const std::map<std::string, int32_t>& busy,
                             const StepRequest& req, uint64_t job_id) {
  if (Status s = check_request(req); !s) return s;
  for (const std::string& name : req.nodelist)
    if (std::none_of(alloc.begin(), alloc.end(), [&](const NodeAlloc& a) { return a.node == name; }) ||
        listed(req.exclude, name))
      return invalid(job_words(job_id) + "Requested node configuration is not available");
  std::vector<Candidate> all = candidates(alloc, busy, req);
  auto have = static_cast<int32_t>(all.size());
  int32_t required = static_cast<int32_t>(req.nodelist.size());
  int32_t nnodes = req.nodes_min > 0 ? req.nodes_min : req.ntasks > 0 ? std::min(req.ntasks, have) : have;
  nnodes = std::max(nnodes, required);
  if (nnodes > have) {
    std::string msg = "Only allocated " + std::to_string(have) + " nodes asked for " + std::to_string(nnodes);
    if (!req.exclude.empty()) msg += "\nAre required nodes explicitly excluded?";
    return invalid(msg);
  }
  StepLayout out;
  out.ntasks = req.ntasks > 0 ? req.ntasks : nnodes * std::max(1, req.ntasks_per_node);
  if (out.ntasks < nnodes) {
    out.warnings.push_back("can't run " + std::to_string(out.ntasks) + " processes on " + std::to_string(nnodes) +
                           " nodes, setting nnodes to " + std::to_string(out.ntasks));
    nnodes = out.ntasks;
  }
  // --ntasks-per-node is a maximum with -n, but Slurm 22.05 drops it when -n cannot fit under it.
  StepRequest r = req;
  if (r.ntasks_per_node > 0 && int64_t{r.ntasks_per_node} * nnodes < out.ntasks) r.ntasks_per_node = 0;
  return lay_out(all, r, nnodes, std::move(out), job_id);
}

namespace {

Result<StepLayout> lay_out(const std::vector<Candidate>& all, const StepRequest& req, int32_t nnodes, StepLayout out,
                           uint64_t job_id) {
  std::vector<Candidate> chosen = choose_nodes(all, static_cast<size_t>(nnodes), req, out.ntasks);
  std::vector<int32_t> cap, cap_idle;
  for (const Candidate& c : chosen) {
    cap.push_back(capacity(c, req, out.ntasks, true));
    cap_idle.push_back(capacity(c, req, out.ntasks, false));
  }
  auto fits = [&](const std::vector<int32_t>& caps) {
    return std::all_of(caps.begin(), caps.end(), [](int32_t c) { return c > 0; }) &&
           std::accumulate(caps.begin(), caps.end(), int64_t{0}) >= out.ntasks;
  };
  if (!fits(cap_idle)) return invalid(job_words(job_id) + "More processors requested than permitted");
  if (!fits(cap)) return unavailable("Requested nodes are busy");
  out.distribution = resolve(req.distribution, out.ntasks, chosen.size());
  for (const Candidate& c : chosen) out.nodes.push_back({c.node->node, c.node->cpus, {}});
  if (out.distribution == TaskDistribution::kBlock) block(out.nodes, cap, out.ntasks);
  else deal(out.nodes, cap, out.ntasks, out.distribution == TaskDistribution::kPlane ? req.plane_size : 1);
  for (StepNode& n : out.nodes)
    if (exact_cpus(req)) n.cpus = std::min(n.cpus, static_cast<int32_t>(n.tasks.size()) * req.cpus_per_task);
  return out;
}

}  // namespace

Status assign_step_memory(const std::vector<NodeAlloc>& alloc, int64_t mem_mib, const std::map<std::string, int64_t>& busy,
                          StepLayout& layout, uint64_t job_id) {
  if (mem_mib < 0 || mem_mib > kMaxStepMemMib) return invalid(job_words(job_id) + "Memory required by task is not available");
  if (mem_mib == 0) return Status::ok();
  bool wait = false;
  for (const StepNode& n : layout.nodes) {
    auto a = std::find_if(alloc.begin(), alloc.end(), [&](const NodeAlloc& x) { return x.node == n.name; });
    if (a == alloc.end() || a->mem_mib <= 0) continue;
    if (mem_mib > a->mem_mib) return invalid(job_words(job_id) + "Memory required by task is not available");
    auto held = busy.find(n.name);
    if (held != busy.end() && mem_mib > a->mem_mib - held->second) wait = true;
  }
  if (wait) return unavailable("Requested nodes are busy");
  for (StepNode& n : layout.nodes) n.mem_mib = mem_mib;
  return Status::ok();
}

std::string distribution_name(TaskDistribution d) {
  switch (d) {
    case TaskDistribution::kCyclic: return "cyclic";
    case TaskDistribution::kPlane: return "plane";
    default: return "block";
  }
}

std::string tasks_per_node(const StepLayout& layout) {
  std::vector<int32_t> counts;
  for (const StepNode& n : layout.nodes) counts.push_back(static_cast<int32_t>(n.tasks.size()));
  return run_length(counts);
}

}  // namespace hq
