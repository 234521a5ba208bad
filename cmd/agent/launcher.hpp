// Starts a batch script as the submitting user (uid, gid, groups) in its own process
// group, under a small shim (a forked child of the agent, in a session of its own) that
// records the script's exit status in the spool: a restarted agent re-adopts running
// jobs and still learns how they ended. In its working directory, with its environment
// and output files, inside its cgroup and bound to its CPUs when the agent gives them.
// The shim shares the agent's memory where asked (BatchLaunch::share_agent_memory;
// cmd/agent/shim_memory.hpp) and then stays out of the job's cgroup, which the script's
// process joins; else it is forked without the agent's heap (cmd/agent/fork_memory.hpp)
// and joins the cgroup itself. The script's process is a vfork-style child of the shim
// (cmd/agent/vfork_into.hpp) that tells the agent its pid and waits for its go before it
// execs: both read their plan from the shim's area and allocate nothing.
// Called on the agent's event-loop thread; fork/exec only, no threads.
#pragma once
#include <functional>
#include <string>
#include <sys/types.h>

#include "cmd/agent/job_spool.hpp"
#include "cmd/agent/shim_memory.hpp"
#include "core/hardware.hpp"
#include "core/job.hpp"
#include "core/job_env.hpp"
#include "core/status.hpp"

namespace hq::cmd {

struct BatchLaunch {
  Job job;
  std::string node_name;
  std::string cluster;
  std::string nodelist;
  int32_t node_index = 0;
  std::string spool_dir;   // the agent's spool; the script is written below it
  const std::vector<Gpu>* node_gpus = nullptr;  // this node's GPUs, by index
  std::vector<std::string> cgroup_procs;  // the child writes its pid to each before exec
  std::vector<int32_t> affinity;          // CPUs to bind to; empty: no binding
  bool gpus_renumbered = false;           // other GPUs' devices are denied to the job
  // > 0: the shim kills the job once the agent's controller lease (lease_file) is older than
  // this, so a job whose agent died or was cut off cannot run on after its requeue.
  int64_t fence_timeout = 0;
  std::string step_socket;  // where srun inside the job finds this agent (HQ_STEP_SOCKET); "" none
  TopologyAddr topo;        // this node's place in the switch tree (LaunchJob.topology_addr)
  // The shim may share the agent's memory (cmd/agent/shim_memory.hpp): only where the
  // job's v1 cgroup measures its memory (a process that shared the agent's memory until
  // its exec reports the agent's peak as its own in ru_maxrss; see start_shim for v1).
  bool share_agent_memory = false;
};

struct LaunchedJob {
  pid_t shim = 0;     // the agent's child: waits for the script, records its exit status
  pid_t script = 0;   // leads its own process group: signals go to -script
  bool shared_memory = false;  // the shim shares the agent's memory (its ru_maxrss is the agent's)
  ShimArea area;      // the shim's memory: free_after_reap() once the shim is reaped
};

// Called with the shim's and the script's pids before the script may start: writes what a
// restarted agent needs to find the job. An error stops the launch; the script never runs.
using RecordLaunch = std::function<Status(const LaunchedJob&)>;

// Starts the job's shim, which starts the script once `record` has succeeded. Setup and
// exec failures come back through a pipe, so a failed launch is an error here, not a
// FAILED job. An agent killed before `record` returns leaves no job behind: its shim
// kills the script before it starts and removes the pid record.
Result<LaunchedJob> launch_batch(const BatchLaunch& launch, const RecordLaunch& record);

// Where the job's script writes its stderr on `node` (its -e, else its -o, else
// slurm-%j.out, expanded, relative to its working directory).
std::string batch_error_path(const Job& job, const std::string& node);

// slurmstepd's banner for a job or step that is being ended: "*** JOB 12 ON n1 CANCELLED AT
// <local time><why> ***" (`what` "JOB 12" or "STEP 12.0", `why` "" or " DUE TO TIME LIMIT").
std::string cancelled_banner(const std::string& what, const std::string& node, const std::string& why);

// Appends `line` to the job's stderr file as slurmstepd writes its own lines there. Only a
// regular file the job's user owns is written (the agent is root: a link the user planted
// must not lead it anywhere else); false when it was not written.
bool append_job_line(const std::string& path, uid_t owner, const std::string& line);
}  // namespace hq::cmd
