// The job model: what a user asked for (JobSpec), and what became of it (Job).
// Plain values owned by ClusterState; no behaviour beyond naming helpers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"
#include "core/status.hpp"
#include "core/time.hpp"

namespace hq {

enum class JobState {
  kPending, kRunning, kCompleted, kCancelled, kFailed, kTimeout, kNodeFail, kOutOfMemory
};

std::string_view job_state_name(JobState s);   // "PENDING"
std::string_view job_state_code(JobState s);   // "PD"
bool parse_job_state(std::string_view name, JobState& out);
bool is_terminal(JobState s);

struct JobSpec;
// Range checks for a spec from outside (the wire, not only our CLI): counts within
// bounds so that products cannot overflow, sizes non-negative, limits well-formed.
Status validate_spec(const JobSpec& spec);

constexpr Duration kTimeUnset = -2;  // no --time given: the partition default applies

struct JobSpec {
  std::string name = "sbatch";
  std::string script;                  // full text of the batch script
  std::vector<std::string> argv;       // script arguments
  std::string workdir;
  std::string output, error;           // patterns; empty = default
  std::string partition;               // empty = default partition
  std::string user;
  uint32_t uid = 0, gid = 0;
  std::vector<uint32_t> groups;
  std::string submit_host;
  int32_t nodes_min = 1, nodes_max = 0;  // nodes_max 0: same as min
  bool nodes_set = false;
  int32_t ntasks = 1;
  bool ntasks_set = false;
  int32_t ntasks_per_node = 0;
  int32_t cpus_per_task = 1;
  int64_t mem_per_node_mib = 0;        // --mem; 0 = not set
  int64_t mem_per_cpu_mib = 0;         // --mem-per-cpu; 0 = not set
  Duration time_limit = kTimeUnset;
  std::vector<std::string> env;        // KEY=VALUE passed to the job (after --export)
  bool hold = false;
};

// Resources one node gives a running job.
struct NodeAlloc {
  std::string node;
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  int32_t tasks = 0;
};

struct Job {
  JobId id;
  JobSpec spec;
  JobState state = JobState::kPending;
  std::string reason = "None";         // Slurm pending reason, or why it ended
  int64_t priority = 0;
  std::string partition;               // resolved partition
  Duration time_limit = kUnlimited;    // resolved limit (seconds) or kUnlimited
  Time submit_time = 0, start_time = 0, end_time = 0;
  std::vector<NodeAlloc> alloc;        // empty while pending
  int32_t exit_code = 0, exit_signal = 0;
  bool cancel_requested = false;
  bool held = false;
  int32_t restart_count = 0;
};

}  // namespace hq
