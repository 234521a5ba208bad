// The controller's domain state and its one mutation path: apply(state, event).
// Live operation and journal replay both go through apply(); it has no side effects.
// Owned by the controller's event-loop thread; not thread-safe.
#pragma once
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/config.hpp"
#include "core/job.hpp"
#include "core/node.hpp"
#include "core/status.hpp"

namespace hq {

struct JobSubmitted { Job job; };
struct JobStarted {
  JobId id;
  Time time = 0;
  std::vector<NodeAlloc> alloc;
  std::string partition;   // the candidate partition it starts in (empty: unchanged)
};
struct JobEnded {
  JobId id;
  Time time = 0;
  JobState state = JobState::kCompleted;
  int32_t exit_code = 0, exit_signal = 0;
  std::string reason;
  int64_t peak_mem_bytes = -1, cpu_time_usec = -1;  // -1: not measured
};
// A started job goes back to the queue with the same id (it never ran, or must rerun).
struct JobRequeued { JobId id; Time time = 0; std::string reason; };
// Hold (user or admin) or release; a release restarts priority age accrual.
struct JobHoldChanged { JobId id; Time time = 0; HoldKind hold = HoldKind::kNone; };
// A dependency resolved: kNone (satisfied; age starts accruing) or kNever.
struct JobDependencyChanged { JobId id; Time time = 0; DepState state = DepState::kNone; };
// An operator drained a node (no new jobs; running ones finish) or resumed it.
struct NodeDrainChanged { std::string node; Time time = 0; bool drain = false; std::string reason; };
using Event =
    std::variant<JobSubmitted, JobStarted, JobEnded, JobRequeued, JobHoldChanged, JobDependencyChanged, NodeDrainChanged>;

struct NaturalLess {
  bool operator()(const std::string& a, const std::string& b) const;
};

struct ClusterState {
  uint64_t next_job_id = 1;
  std::map<JobId, Job> jobs;
  std::set<JobId> pending;                           // index of PENDING jobs
  std::set<JobId> running;                           // index of RUNNING jobs
  std::map<std::string, Node, NaturalLess> nodes;
  std::vector<PartitionConfig> partitions;       // `nodes` lists every member, dynamic ones too
  std::map<std::string, std::string> drained;    // node -> reason (kept for nodes not here yet)
};

// Nodes and partitions from config; no jobs.
ClusterState make_state(const ClusterConfig& config);

// Applies one event. Returns false (and changes nothing) when the event is stale,
// e.g. a second JobEnded for a finished job, so replays and duplicates are harmless.
bool apply(ClusterState& state, const Event& event);

// A node that joined by registering: it enters the partitions that want it (by name,
// feature{} or ALL), takes its recorded drain, and holds what running jobs have there
// (after a controller restart they were recorded before the node came back).
void add_node(ClusterState& state, Node node);
// After a registration set a node's labels or features: it joins the partitions that want
// it now (membership is only gained this way; the config decides the rest).
void join_wanting_partitions(ClusterState& state, Node& node);
// Removes a node that runs nothing; an error names why not.
Status remove_node(ClusterState& state, const std::string& name);

// Drops finished jobs that ended before `cutoff` (not journaled: a pure memory bound).
size_t purge_finished(ClusterState& state, Time cutoff);

const Job* find_job(const ClusterState& s, JobId id);

// Calls fn(job) for each task of array `array_id`: tasks have consecutive ids from it.
template <typename Fn>
void for_each_array_task(const ClusterState& s, uint64_t array_id, Fn&& fn) {
  for (auto it = s.jobs.find(JobId{array_id}); it != s.jobs.end() && it->second.array_job_id == array_id; ++it)
    fn(it->second);
}

// Calls fn(job) for each id of `ids` (a pending or running index) that has a job. Both are
// in id order, so the job map is walked along: the next entry is tried before a lookup.
template <typename Fn>
void for_each_job_in(const ClusterState& s, const std::set<JobId>& ids, Fn&& fn) {
  auto it = s.jobs.end();
  for (JobId id : ids) {
    if (it != s.jobs.end() && ++it != s.jobs.end() && it->first == id) {
      fn(it->second);
      continue;
    }
    it = s.jobs.find(id);
    if (it != s.jobs.end()) fn(it->second);
  }
}

}  // namespace hq
