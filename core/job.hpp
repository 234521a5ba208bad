// The job model: what a user asked for (JobSpec), and what became of it (Job).
// Plain values owned by ClusterState; no behaviour beyond naming helpers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"
#include "core/job_reason.hpp"
#include "core/shared.hpp"
#include "core/status.hpp"
#include "core/text.hpp"
#include "core/time.hpp"

namespace hq {

enum class JobState {
  kPending, kRunning, kCompleted, kCancelled, kFailed, kTimeout, kNodeFail, kOutOfMemory, kPreempted,
  kDeadline,  // ended by the scheduler: it could no longer finish before its --deadline
};

enum class HoldKind { kNone, kUser, kAdmin };
// Where a job's dependency stands, as last recorded (journaled when it changes).
enum class DepState { kNone, kWaiting, kNever };

std::string_view job_state_name(JobState s);   // "PENDING"
std::string_view job_state_code(JobState s);   // "PD"
bool parse_job_state(std::string_view name, JobState& out);
bool is_terminal(JobState s);

struct JobSpec;
// Range checks for a spec from outside (the wire, not only our CLI): counts within
// bounds so that products cannot overflow, sizes non-negative, limits well-formed.
Status validate_spec(const JobSpec& spec);

constexpr Duration kTimeUnset = -2;  // no --time given: the partition default applies

// What made a job: sbatch (a batch script runs on its first node), or an allocation asked
// for by srun or salloc outside a job (no script: every node holds its share for steps;
// the job ends when its srun/salloc says so, JobComplete).
enum class AllocKind : int32_t { kBatch = 0, kSrun = 1, kSalloc = 2 };

// What a job carries for people and tools, and a few rarely given limits: shared by the
// copies of one spec (array tasks), so that a job without any costs one pointer.
struct JobExtras {
  std::string comment, qos, wckey, reservation;
  std::string input;                   // -i pattern: the batch script's stdin ("" /dev/null)
  std::string mail_type, mail_user;    // --mail-type as given (upper case), --mail-user
  int32_t open_mode = 0;               // 0 unset (truncate), 1 append, 2 truncate
  Duration time_min = 0;               // --time-min seconds; 0 unset
  Time deadline = 0;                   // --deadline; 0 none
  int64_t priority = 0;                // --priority / scontrol Priority= (admin): fixed; 0 computed
  std::string command;                 // scontrol's Command=: the script's path and arguments; "" (null)
  std::string qos_list;                // --qos a,b once it started under one (`qos`): a requeue puts it back
  bool operator==(const JobExtras&) const = default;
};

struct JobSpec {
  Text name = "sbatch";
  Shared<std::string> script;          // full text of the batch script (shared by copies)
  std::vector<std::string> argv;       // script arguments
  Text workdir;
  Text output, error;                  // patterns; empty = default
  Text partition;                      // "a,b" list as given; empty = default partition
  Text account;
  Text constraint;                     // -C expression (core/constraint.hpp)
  Text nodelist, exclude;              // -w / -x hostlists as given
  bool exclusive = false;
  bool exclusive_topo = false;         // --exclusive=topo: no other job in its base blocks (Slurm's WHOLE_TOPO)
  int32_t segment = 0;                 // --segment: nodes per independently placed segment (topology/block); 0 none
  int32_t switches = 0;                // --switches=N[@wait]: at most N leaf switches (topology/tree); 0 any
  Duration switch_wait = -1;           // --switches' @wait: how long to wait for them (-1: max_switch_wait)
  int32_t nice = 0;
  Time begin_time = 0;                 // --begin; 0 = now
  Text dependency;                     // -d as given (core/dependency.hpp)
  bool kill_on_invalid_dep = false;
  Text array;                          // --array as given; expanded into tasks at submit
  int32_t signal = 0;                  // --signal number (0 = none)
  Duration signal_time = 60;           // seconds before the end
  bool signal_batch_only = false;      // B: only the batch shell
  int32_t requeue = -1;                // --requeue 1, --no-requeue 0, unset -1 (batch default: yes)
  Text user;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  Text submit_host;
  int32_t nodes_min = 1, nodes_max = 0;  // nodes_max 0: same as min
  bool nodes_set = false;
  int32_t ntasks = 1;
  bool ntasks_set = false;
  int32_t ntasks_per_node = 0;
  int32_t cpus_per_task = 1;
  bool cpus_per_task_set = false;      // -c given: SLURM_CPUS_PER_TASK in the environment
  int64_t mem_per_node_mib = 0;        // --mem; 0 = not set
  int64_t mem_per_cpu_mib = 0;         // --mem-per-cpu; 0 = not set
  // GPUs: at most one of the three counts is set (validate_spec); gpu_type "" = any type.
  int32_t gpus = 0;                    // --gpus: in all, over the job's nodes
  int32_t gpus_per_node = 0;           // --gpus-per-node, --gres=gpu[:type]:N
  int32_t gpus_per_task = 0;           // --gpus-per-task
  Text gpu_type;
  int32_t cpus_per_gpu = 0;            // --cpus-per-gpu; 0 = not set
  int64_t mem_per_gpu_mib = 0;         // --mem-per-gpu; 0 = not set
  bool mem_all = false;                // --mem=0: all of each node's memory, none of it in use by others
  bool nomultithread = false;          // --hint=nomultithread: a whole core for each CPU asked for, one thread used
  Text cpu_bind;                       // --cpu-bind as given (core/cpu_bind.hpp)
  Duration time_limit = kTimeUnset;
  Shared<std::vector<std::string>> env;  // KEY=VALUE passed to the job (after --export)
  bool hold = false;
  Shared<JobExtras> extra;             // comment, qos, mail, ... (blank: none given)
  AllocKind alloc_kind = AllocKind::kBatch;
  bool is_batch() const { return alloc_kind == AllocKind::kBatch; }
};

// Resources one node gives a running job.
struct NodeAlloc {
  std::string node;
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  int32_t tasks = 0;
  std::vector<int32_t> gpus;           // the node's GPU indices (its GPUs in PCI order)
};

// The nodes of an allocation as a hostlist ("n[1-4]").
std::string alloc_hostlist(const std::vector<NodeAlloc>& alloc);

// Why a running job is being stopped, which decides how its end is recorded: queued again
// (scontrol requeue / requeuehold), or for a higher tier (preemption, requeue or cancel).
enum class StopIntent : uint8_t { kNone, kRequeue, kRequeueHold, kPreemptRequeue, kPreemptCancel };
bool is_preemption(StopIntent intent);

struct Job {
  JobId id;
  JobSpec spec;
  JobState state = JobState::kPending;
  JobReason reason = JobReason::kNone; // Slurm pending reason, or why it ended
  Text state_desc;                     // Slurm's StateDesc: the end's cause in words (a launch failure's)
  int64_t priority = 0;                // derived by the scheduler each pass (not journaled)
  std::vector<std::string> partitions; // resolved candidates, in the order given
  Text partition;                      // where it runs (or ran); the first candidate while pending
  Duration time_limit = kUnlimited;    // resolved limit (seconds) or kUnlimited
  Time submit_time = 0, start_time = 0, end_time = 0;
  std::vector<NodeAlloc> alloc;        // empty while pending
  int32_t exit_code = 0, exit_signal = 0;
  bool cancel_requested = false;
  HoldKind hold = HoldKind::kNone;
  DepState dep_state = DepState::kNone;
  Time eligible_time = 0;              // when priority age starts accruing
  uint64_t array_job_id = 0;           // 0: not an array task
  int32_t array_task_id = -1;
  int32_t array_throttle = 0;          // at most this many tasks running at once; 0: no limit
  // The array's size, smallest and largest index and the step given (SLURM_ARRAY_TASK_*).
  int32_t array_task_count = 0, array_task_min = 0, array_task_max = 0, array_task_step = 1;
  int32_t restart_count = 0;
  uint64_t sluid = 0, original_sluid = 0;  // core/sluid: this run's (new at each requeue), the first
  // The client's idempotency key of the submission that made the job (an array's first
  // task); a retry with the same key gets this job back instead of a new one.
  Text submit_key;
  Text cancel_key;                     // the idempotency key of the request that cancelled it
  int64_t cancel_uid = -1;             // who cancelled it (sacct's "CANCELLED by UID"); -1 nobody
  // What the job used, as its node measured at the end (cgroup, else wait4); -1 unknown.
  int64_t peak_mem_bytes = -1;
  int64_t cpu_time_usec = -1;
  // Derived by the scheduler (not journaled).
  Time expected_start = 0;             // 0: not known (squeue --start shows N/A)
  Text sched_nodes;                    // nodes backfill plans to use
  bool preempting = false;             // being stopped for a higher tier (grace running)
  // scontrol suspend/resume: a suspended job keeps its nodes, memory and GPUs, not its
  // CPUs, and time suspended does not count against its limit. State stays kRunning.
  bool suspended = false;
  Time suspend_time = 0;               // the last suspend or resume (Slurm's SuspendTime); 0: never
  Duration pre_suspend_secs = 0;       // run time before the last suspend (SecsPreSuspend)
  Duration suspended_secs = 0;         // time suspended, in all
  StopIntent stop_intent = StopIntent::kNone;  // journaled: what its end will be recorded as
  bool held() const { return hold != HoldKind::kNone; }
};

// When a running job's time limit ends it (its limit counts run time, not time suspended);
// only for a job with a limit.
inline Time limit_end(const Job& job) { return job.start_time + job.time_limit + job.suspended_secs; }
// How long a started job has run by `now` (or ran, once ended), time suspended not counted.
Duration run_time(const Job& job, Time now);

// "123" or "100_7" for array tasks.
std::string display_id(const Job& job);

// A pending job with a --deadline that it can no longer meet if it started `now` (Slurm's
// deadline_ok: now plus its time limit is past the deadline; no limit: the deadline passed).
// With a --time-min, its time-min is what is checked (Slurm's too).
bool misses_deadline(const Job& job, Time now);
// A job with a --time-min whose whole limit would run past its --deadline: the longest
// limit it may start with now (deadline - now); 0 when its limit fits or it has no time-min.
Duration deadline_cap(const Job& job, Time now);

// Calls fn(name) for each partition the job may run in (the resolved list, or the one
// partition of a record written before multi-partition jobs existed).
template <typename Fn>
void for_each_partition(const Job& job, Fn&& fn) {
  if (job.partitions.empty()) fn(job.partition);
  else for (const auto& p : job.partitions) fn(p);
}

}  // namespace hq
