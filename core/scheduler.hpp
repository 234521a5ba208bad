// The scheduler seam: a pure function from a state snapshot and `now` to a Plan.
// The controller applies the plan's starts as events; nothing here has side effects.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_state.hpp"

namespace hq {

struct StartDecision {
  JobId job;
  std::vector<NodeAlloc> alloc;
};

struct Plan {
  std::vector<StartDecision> starts;
  std::vector<std::pair<JobId, std::string>> reasons;  // pending jobs not started, and why
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Plan schedule(const ClusterState& state, Time now) const = 0;
};

// Priority order (priority desc, then job id), first fit on CPUs and memory; a job
// that cannot start blocks lower-priority jobs of its partition (reason Priority).
std::unique_ptr<Scheduler> make_first_fit_scheduler();

// Whether the job could run on its partition if every node were idle; a message if not.
Status check_ever_runnable(const ClusterState& state, const Job& job);

}  // namespace hq
