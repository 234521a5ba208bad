// The scheduler: a pure function from a cluster state and `now` to a Plan (starts,
// reservations, pending reasons, expected starts, preemptions, dependency updates).
// One pass orders pending jobs by partition tier then multifactor priority, starts
// what fits, and reserves time-map slots for blocked jobs so that lower-priority jobs
// start early only where they delay no reservation (docs/scheduling.md). The same
// code runs in the controller, `hq explain`, `--test-only`, `hq sim` and `hq bench`.
// Nothing here has side effects; thread-safe (const).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/priority.hpp"

namespace hq {

struct StartDecision {
  JobId job;
  std::string partition;
  std::vector<NodeAlloc> alloc;
  int64_t priority = 0;        // what it had when chosen (scontrol shows it while it runs)
  Duration time_limit = 0;     // > 0: its limit lowered toward --time-min so that it starts now
  std::string qos;             // a job of a QOS list (--qos a,b): the one it starts under
};

// One per pending job: kept small (40 bytes), there are as many as there are pending jobs.
struct PendingInfo {
  JobId job;
  // The job's record in the state the plan was made from, so that the plan is applied
  // without a search per job: valid only until that state changes (the controller applies
  // a plan at once). nullptr for a job that is not the state's (schedule()'s `extra`).
  const Job* record = nullptr;
  int64_t priority = 0;
  Time expected_start = 0;   // 0: not known (no reservation within the window)
  int32_t reservation = -1;  // its reservation in Plan::reservations, if any
  JobReason reason = JobReason::kNone;  // why it waits (Slurm's reason)
};
static_assert(sizeof(PendingInfo) <= 40, "PendingInfo grew: there is one per pending job");

struct Reservation {
  JobId job;
  std::string partition;
  Time start = 0, end = 0;   // end 0: no time limit
  std::vector<NodeAlloc> alloc;  // alloc_hostlist() gives Slurm's SchedNodeList
};

struct Preemption {
  JobId victim;
  JobId preemptor;
  PreemptMode mode = PreemptMode::kCancel;
  Duration grace = 0;
};

struct PlanStats {
  int32_t considered = 0;    // pending jobs looked at
  int32_t tested = 0;        // jobs tested past a blocked one (bf_max_job_test counts these)
  int32_t classes = 0;       // distinct node states in the time map at the end
  int32_t sweeps = 0;        // searches of the time map for a job's earliest start
  int64_t swept = 0;         // entries (node states, classes, releases) those searches read
  int32_t held = 0;          // jobs the fragmentation oracle put off for a less fragmenting place
};

struct Plan {
  std::vector<StartDecision> starts;
  std::vector<PendingInfo> pending;            // every pending job not started (by priority while it matters)
  std::vector<Reservation> reservations;
  std::vector<Preemption> preemptions;
  std::vector<std::pair<JobId, DepState>> dependency_changes;
  std::vector<JobId> invalid_dependency_kills; // DependencyNeverSatisfied with --kill-on-invalid-dep
  std::vector<JobId> deadline_kills;           // pending jobs that can no longer meet their --deadline
  PlanStats stats;
};

class AcctPolicy;

class Scheduler {
 public:
  // `policy`: accounting limits that keep jobs pending (none: no limits).
  explicit Scheduler(SchedulerConfig cfg = {}, std::shared_ptr<const AcctPolicy> policy = nullptr)
      : cfg_(std::move(cfg)), policy_(std::move(policy)) {}
  // `extra`, when given, is scheduled as if it were pending too (sbatch --test-only);
  // it must not be in `state`.
  Plan schedule(const ClusterState& state, Time now, const Job* extra = nullptr) const;
  // The event-triggered quick pass (Slurm's main scheduler): only the first
  // default_queue_depth jobs by priority, strictly in order (nothing starts past a
  // blocked job of its partition), so it cannot delay what a full pass reserved.
  // Plan::pending covers only the jobs it looked at.
  Plan quick_pass(const ClusterState& state, Time now) const;
  const SchedulerConfig& config() const { return cfg_; }
  const std::shared_ptr<const AcctPolicy>& policy() const { return policy_; }

 private:
  SchedulerConfig cfg_;
  std::shared_ptr<const AcctPolicy> policy_;
};

}  // namespace hq
