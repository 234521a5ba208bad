// The controller's domain state and its one mutation path: apply(state, event).
// Live operation and journal replay both go through apply(); it has no side effects.
// Owned by the controller's event-loop thread; not thread-safe.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "core/advance_reservation.hpp"
#include "core/config.hpp"
#include "core/job.hpp"
#include "core/job_list.hpp"
#include "core/node.hpp"
#include "core/status.hpp"
#include "core/switch_tree.hpp"

namespace hq {

struct JobSubmitted { Job job; };
struct JobStarted {
  JobId id;
  Time time = 0;
  std::vector<NodeAlloc> alloc;
  std::string partition;   // the candidate partition it starts in (empty: unchanged)
  Duration time_limit = 0; // > 0: its limit, lowered toward --time-min so that it starts now
  std::string qos;         // the QOS of its --qos list it starts under (empty: unchanged)
};
struct JobEnded {
  JobId id;
  Time time = 0;
  JobState state = JobState::kCompleted;
  int32_t exit_code = 0, exit_signal = 0;
  JobReason reason = JobReason::kNone;
  int64_t peak_mem_bytes = -1, cpu_time_usec = -1;  // -1: not measured
  std::string detail;  // what went wrong, in words (a launch failure's cause); "" none
};
// A started job goes back to the queue with the same id (it never ran, or must rerun).
struct JobRequeued { JobId id; Time time = 0; JobReason reason = JobReason::kNone; uint64_t sluid = 0; };  // sluid: the next run's
// Hold (user or admin) or release; a release restarts priority age accrual.
struct JobHoldChanged { JobId id; Time time = 0; HoldKind hold = HoldKind::kNone; };
// A dependency resolved: kNone (satisfied; age starts accruing) or kNever.
struct JobDependencyChanged { JobId id; Time time = 0; DepState state = DepState::kNone; };
// Someone cancelled a job: a pending one ends CANCELLED at once, a running one is marked
// (its end, when its node reports it, is CANCELLED). `key`: the request's idempotency key,
// so that a retry of the same request answers as the first one did.
struct JobCancelRequested { JobId id; Time time = 0; std::string key; int64_t uid = -1; };  // uid -1: hq itself
// A running job is being stopped (requeue, requeuehold, preemption): its end will be
// recorded as `intent` says, even across a controller restart.
struct JobStopRequested { JobId id; Time time = 0; StopIntent intent = StopIntent::kNone; };
// scontrol suspend (true) or resume (false) of a running job.
struct JobSuspended { JobId id; Time time = 0; bool suspend = false; };
// scontrol update JobId=: the job's request as it now is (core/job_update). Its script,
// environment and identity stay; its spec, partitions, time limit, array throttle, begin
// time and dependency state are taken from `job`. Stale for a job that has ended.
struct JobUpdated { JobId id; Time time = 0; Job job; };
// An operator drained a node (no new jobs; running ones finish) or resumed it.
struct NodeDrainChanged { std::string node; Time time = 0; bool drain = false; std::string reason; uint32_t uid = 0; };
// A node's agent registered with what it found. apply() resolves it against the config:
// configured sizes win, found GPUs count only when they cover the configured gres, a config
// node keeps its configured features; features and labels decide partitions. `join`: a
// node the config does not declare (a dynamic node) joins, or comes back after a delete.
// Stale when it changes nothing (an agent reconnecting as it was).
struct NodeRegistered {
  std::string node;
  Time time = 0;
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  std::vector<NodeGpu> gpus;           // in PCI order: a GPU's position is its index
  std::vector<std::string> features;   // a dynamic node's own (hq node --feature)
  std::string block, switch_name;      // topology labels (hq node --block, --switch)
  Time boot_time = 0;
  bool join = false;
  int32_t threads_per_core = 0;        // as the agent found it; 0: not known
};
// A node goes DOWN (silent for node_timeout: kNotResponding; GPUs short of its gres) or
// returns to service (`reason` empty).
struct NodeDownChanged { std::string node; Time time = 0; bool down = false; std::string reason; };
// An operator deleted a dynamic node that runs nothing.
struct NodeRemoved { std::string node; Time time = 0; };
// An operator set a node's features or weight (scontrol update NodeName= Features=
// Weight=): they win over the config's and a dynamic node's own from then on; features
// decide partitions as at registration.
struct NodeUpdated {
  std::string node;
  Time time = 0;
  std::optional<std::vector<std::string>> features;
  std::optional<int32_t> weight;
  std::optional<std::string> block;  // scontrol update Topology=: the block it is in from now on
};
// scontrol update PartitionName=: a partition's state and limits as they now are (they
// override the config's from then on, across restarts).
struct PartitionUpdated {
  std::string partition;
  Time time = 0;
  PartitionState state = PartitionState::kUp;
  Duration max_time = kUnlimited, default_time = kUnlimited;
};
// scontrol create|update|delete reservation, or a reservation's end: `resv` as it now is,
// or gone (`deleted`: only its name counts).
struct ReservationChanged {
  Time time = 0;
  AdvanceReservation resv;
  bool deleted = false;
};
using Event = std::variant<JobSubmitted, JobStarted, JobEnded, JobRequeued, JobHoldChanged, JobDependencyChanged,
                           NodeDrainChanged, JobCancelRequested, JobStopRequested, NodeRegistered, NodeDownChanged,
                           NodeRemoved, JobUpdated, PartitionUpdated, ReservationChanged, JobSuspended, NodeUpdated>;

struct NaturalLess {
  bool operator()(const std::string& a, const std::string& b) const;
};

// Why, when and by whom a node was drained (sinfo -R's REASON, TIMESTAMP, USER).
struct DrainMark {
  std::string reason;
  Time time = 0;
  uint32_t uid = 0;
};

// An array's tasks as listings see them: how many are in the map, and a stamp that is new
// whenever one of them changes (an event about it, a scheduling pass's new reason or
// priority for it, its removal), so that a listing may keep what it made of the array's
// tasks until then (core/array_rows' ArrayListings).
struct ArrayTasks {
  uint64_t stamp = 0;  // from ClusterState::array_stamps: never the same twice
  uint32_t tasks = 0;
};

struct ClusterState {
  uint64_t next_job_id = 1;
  std::map<JobId, Job> jobs;
  JobList job_list;                                  // `jobs` in one array, for listings (core/job_list)
  // How many jobs are PENDING (no index of them: 48 bytes a pending job; the rare walks
  // over them go through `jobs`, and a pass looks at `queued`).
  size_t pending_jobs = 0;
  std::set<JobId> queued;                            // the pending jobs a pass looks at (in_queue)
  std::set<JobId> running;                           // index of RUNNING jobs
  std::set<std::pair<Time, JobId>> finished;         // index of ended jobs, by end time
  std::map<std::string, Node, NaturalLess> nodes;
  std::vector<PartitionConfig> partitions;       // `nodes` lists every member (natural order), dynamic ones too
  TopologyConfig topology;                       // [topology] as configured (the blocks' members by the config)
  std::vector<TopologyConfig> other_topologies;  // the other [[topology]] tables (the default is `topology`)
  // Partition -> the node names the config lists: members whatever their features and labels.
  std::unordered_map<std::string, std::unordered_set<std::string>> listed;
  std::map<std::string, DrainMark> drained;      // node -> its drain (kept for nodes not here yet)
  std::map<std::string, AdvanceReservation> reservations;  // by name
  uint64_t next_resv_id = 1;                     // the next reservation's ResvId (names made up from it)
  // Idempotency keys of submissions -> their job, while the job is held (journaled with it):
  // by the key's hash (submit_key_hash), the key itself being the job's own (Job::submit_key).
  std::unordered_multimap<size_t, JobId> submit_keys;
  // Jobs with the same script or environment (array tasks, resubmissions) share one copy.
  SharedPool<std::string> scripts;
  SharedPool<std::vector<std::string>> environments;
  std::unordered_map<uint64_t, ArrayTasks> arrays;  // by array_job_id, while any task is in `jobs`
  uint64_t array_stamps = 0;                        // the last stamp given
  // Changes whenever a job listing may show something else: every event applied, every
  // job erased, and touch_listed (a scheduling pass's reasons, priorities and expected
  // starts). The controller's kept listings are good while it is what it was.
  uint64_t listed_stamp = 0;
};

// Something a job listing shows changed outside an event (a scheduling pass's reason,
// priority, expected start or planned nodes): kept listings are stale.
inline void touch_listed(ClusterState& state) { ++state.listed_stamp; }

// Until when (exclusive) `job`'s listed line, as squeue shows it at `now`, stays what it
// is while the job itself does not change: a started job that has not ended shows its run
// time (now + 1), a pending one its expected start (from then on now, while it is past) or
// its --begin (until then). INT64_MAX where nothing it shows follows the clock.
Time listed_line_valid_until(const Job& job, Time now);

// An array task changed in a way a listing shows (touch_array): its array gets a new stamp.
// Any other job: nothing. apply() and the removal of a job call it; so must anything else
// that writes a task's listed fields (a scheduling pass's reason and priority).
void touch_array(ClusterState& state, const Job& job);

// Whether a scheduling pass has anything to do with a job: pending and not held (a held
// job waits on its hold alone and shows it as its reason), or held with a --deadline that
// a pass still ends it at. ClusterState::queued indexes these.
bool in_queue(const Job& job);

// Nodes and partitions from config; no jobs.
ClusterState make_state(const ClusterConfig& config);

// Every topology: the cluster default first (index 0), then the others in config order.
std::vector<const TopologyConfig*> topologies_of(const ClusterState& s);
// The topology named `name` ("" the default), or nullptr.
const TopologyConfig* topology_named(const ClusterState& s, std::string_view name);
// The topology a partition's jobs are placed by (the default when it names none).
const TopologyConfig& topology_of_partition(const ClusterState& s, const std::string& partition);

// A block topology as it is now: the config's blocks and the nodes' agent labels for it
// (the cluster default's without `t`).
BlockTopology block_topology_of(const ClusterState& s, const TopologyConfig& t);
BlockTopology block_topology_of(const ClusterState& s);

// A switch tree as it is now: the config's switches and the nodes' --switch labels for it
// (inactive without [[topology.switch]]; the cluster default's without `t`).
SwitchTree switch_tree_of(const ClusterState& s, const TopologyConfig& t);
SwitchTree switch_tree_of(const ClusterState& s);

// Applies one event. Returns false (and changes nothing) when the event is stale,
// e.g. a second JobEnded for a finished job, so replays and duplicates are harmless.
// The job an event is about (what accounting records); none for node, partition and
// reservation events.
std::optional<JobId> job_of(const Event& event);

bool apply(ClusterState& state, const Event& event);
// The same, moving a submitted job into the state instead of copying it (replay, restore).
bool apply(ClusterState& state, Event&& event);

// Whether NodeRemoved would remove `name`: a dynamic node that runs nothing. An error says why not.
Status check_removable(const ClusterState& state, const std::string& name);

// Makes room in the state's hash tables for `jobs` more jobs (a snapshot restore knows
// how many come): no rehashing while they are added.
void reserve_jobs(ClusterState& state, size_t jobs);

// Drops finished jobs that ended before `cutoff` (not journaled: a pure memory bound).
// Costs the jobs dropped, not the jobs held.
size_t purge_finished(ClusterState& state, Time cutoff);
// Drops one finished job now (the simulator keeps no history).
void forget_finished(ClusterState& state, JobId id);

const Job* find_job(const ClusterState& s, JobId id);
// The hash submit_keys files an idempotency key under.
size_t submit_key_hash(std::string_view key);
// The job a submission with idempotency key `key` by `uid` made, if it is still held.
const Job* find_submission(const ClusterState& s, const std::string& key, uint32_t uid);

// Calls fn(job) for each task of array `array_id`: tasks have consecutive ids from it.
template <typename Fn>
void for_each_array_task(const ClusterState& s, uint64_t array_id, Fn&& fn) {
  for (auto it = s.jobs.find(JobId{array_id}); it != s.jobs.end() && it->second.array_job_id == array_id; ++it)
    fn(it->second);
}

// Finds jobs by id in a job map (const or not), trying the entry after the last one found
// before a search: ids asked in ascending order cost a step each instead of a search.
template <typename Jobs>
class JobWalker {
 public:
  explicit JobWalker(Jobs& jobs) : jobs_(jobs), it_(jobs.end()) {}
  auto* find(JobId id) {
    if (it_ == jobs_.end() || ++it_ == jobs_.end() || it_->first != id) it_ = jobs_.find(id);
    return it_ == jobs_.end() ? nullptr : &it_->second;
  }

 private:
  Jobs& jobs_;
  decltype(jobs_.end()) it_;
};

// Calls fn(job) for each pending job, then each running one, each in id order (the pending
// ones found by a walk of every job, through the job list: there is no index of them).
template <typename Fn>
void for_each_active_job(const ClusterState& s, Fn&& fn) {
  if (s.pending_jobs > 0)
    s.job_list.for_each(s.jobs, 0, std::set<std::string, std::less<>>{}, [&](const Job& job) {
      if (job.state == JobState::kPending) fn(job);
      return true;
    });
  JobWalker walker(s.jobs);
  for (JobId id : s.running)
    if (const Job* job = walker.find(id)) fn(*job);
}

// Calls fn(job) for each id of `ids` (a pending or running index, in id order) that has a job.
template <typename Fn>
void for_each_job_in(const ClusterState& s, const std::set<JobId>& ids, Fn&& fn) {
  JobWalker walker(s.jobs);
  for (JobId id : ids)
    if (const Job* job = walker.find(id)) fn(*job);
}

}  // namespace hq
