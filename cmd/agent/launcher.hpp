// Starts a batch script as the submitting user (uid, gid, groups) in its own session
// and process group, in its working directory, with its environment and output files,
// inside its cgroup and bound to its CPUs when the agent gives them.
// Called on the agent's event-loop thread; fork/exec only, no threads.
#pragma once
#include <string>
#include <sys/types.h>

#include "core/hardware.hpp"
#include "core/job.hpp"
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
};

// Returns the pid of the script, which leads its own process group. The child reports
// exec/setup failures through a pipe, so a failed launch is an error here, not a FAILED job.
Result<pid_t> launch_batch(const BatchLaunch& launch);

// Removes the job's spool directory (script file).
void cleanup_spool(const std::string& spool_dir, uint64_t job_id);

}  // namespace hq::cmd
