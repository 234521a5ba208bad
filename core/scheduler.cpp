#include "core/scheduler.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/placement.hpp"

namespace hq {
namespace {

std::vector<FreeNode> free_nodes(const ClusterState& s, const std::string& partition,
                                 const std::map<std::string, FreeNode>& working) {
  std::vector<FreeNode> out;
  for (const auto& [name, node] : s.nodes) {
    if (std::find(node.partitions.begin(), node.partitions.end(), partition) == node.partitions.end())
      continue;
    auto it = working.find(name);
    if (it != working.end()) out.push_back(it->second);
  }
  return out;
}

class FirstFitScheduler final : public Scheduler {
 public:
  Plan schedule(const ClusterState& s, Time /*now*/) const override {
    std::map<std::string, FreeNode> working;
    for (const auto& [name, n] : s.nodes) {
      if (node_schedulable(n))
        working[name] = FreeNode{name, n.cpus - n.alloc_cpus, n.mem_mib - n.alloc_mem_mib};
    }
    std::vector<const Job*> order;
    order.reserve(s.pending.size());
    for (JobId id : s.pending) order.push_back(&s.jobs.at(id));
    std::stable_sort(order.begin(), order.end(), [](const Job* a, const Job* b) {
      return a->priority != b->priority ? a->priority > b->priority : a->id < b->id;
    });
    Plan plan;
    std::set<std::string> blocked;
    for (const Job* job : order) {
      if (job->held) { plan.reasons.emplace_back(job->id, "JobHeldUser"); continue; }
      if (blocked.count(job->partition)) { plan.reasons.emplace_back(job->id, "Priority"); continue; }
      auto alloc = place_first_fit(job->spec, free_nodes(s, job->partition, working));
      if (alloc.empty()) {
        blocked.insert(job->partition);
        plan.reasons.emplace_back(job->id, "Resources");
        continue;
      }
      for (const auto& a : alloc) {
        working[a.node].free_cpus -= a.cpus;
        working[a.node].free_mem_mib -= a.mem_mib;
      }
      plan.starts.push_back({job->id, std::move(alloc)});
    }
    return plan;
  }
};

}  // namespace

std::unique_ptr<Scheduler> make_first_fit_scheduler() { return std::make_unique<FirstFitScheduler>(); }

Status check_ever_runnable(const ClusterState& s, const Job& job) {
  std::vector<FreeNode> all;
  int32_t known = 0;
  for (const auto& [name, n] : s.nodes) {
    if (std::find(n.partitions.begin(), n.partitions.end(), job.partition) == n.partitions.end())
      continue;
    if (n.cpus > 0) ++known;
    // Nodes whose size is not known yet (no agent so far) cannot rule a job out.
    all.push_back({name, n.cpus > 0 ? n.cpus : 1 << 30, n.mem_mib > 0 ? n.mem_mib : int64_t{1} << 50});
  }
  if (all.empty()) return invalid("partition '" + job.partition + "' has no nodes");
  if (place_first_fit(job.spec, all).empty()) {
    return invalid("Requested node configuration is not available: partition '" + job.partition +
                   "' has " + std::to_string(all.size()) + " node(s) (" + std::to_string(known) +
                   " of known size), too few or too small for this job");
  }
  return Status::ok();
}

}  // namespace hq
