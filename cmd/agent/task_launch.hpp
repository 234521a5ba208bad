// Starts one task of a job step (srun): a child of the agent in a process group of its
// own, inside its step's cgroup and bound to its CPUs, as the job's user, with pipes for its stdin, stdout and
// stderr. The executable is looked up in the task's own PATH. A task that cannot exec
// writes "slurmstepd-NODE: error: execve(): NAME: <why>" to its stderr and exits with the errno (2 for a missing
// file), as Slurm's. SLURM_TASK_PID and HQ_TASK_PID are the task's pid. Descriptors 0-2
// are its pipes; a task of an MPI step also gets its PMI socket as 3; nothing else. With
// --cpu-bind=verbose it writes Slurm's binding line to its stderr before it execs.
// Called on the agent's event-loop thread; vfork/exec (on cgroup v2, clone3 straight into the
// step's group: cmd/agent/vfork_into.hpp), no threads.
#pragma once
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

#include "core/cpu_bind.hpp"
#include "core/status.hpp"

namespace hq::cmd {

struct TaskPlan {
  std::vector<std::string> argv;  // argv[0] is looked up in env's PATH unless it has a '/'
  std::vector<std::string> env;   // KEY=VALUE
  std::string cwd;
  std::string node;               // for the execve error line
  bool switch_user = false;       // root agent: become uid/gid/groups
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::vector<std::string> cgroup_procs;  // the child joins these before anything runs
  std::vector<int32_t> affinity;          // the CPUs it may run on, once in its cgroup (empty: as it is)
  int pmi_fd = -1;  // the task's end of its PMI socketpair: its descriptor 3 (PMI_FD=3); -1: none
  CpuBindReport bind_report;  // --cpu-bind=verbose: written to its stderr, with its pid, once bound (head empty: none)
};

struct LaunchedTask {
  pid_t pid = 0;
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;  // the agent's ends (close-on-exec)
};

Result<LaunchedTask> launch_task(const TaskPlan& plan);

// The CPUs this process may run on (what a task started without binding inherits).
std::vector<int32_t> own_affinity();

}  // namespace hq::cmd
