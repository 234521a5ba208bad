// Process tracking without cgroups: finds a job's processes by the HQ_JOB_ID in their
// environment (daemonized ones included: they leave the process group, not the
// environment) and kills them. The agent is a child subreaper, so such orphans are
// its children and are reaped. Agent event-loop thread only.
#pragma once
#include <cstdint>
#include <sys/types.h>

namespace hq::cmd {

// SIGKILL to every process of `uid` whose environment says HQ_JOB_ID=`job_id`, until none
// is left or `wait_ms` passes. Returns how many were found.
int kill_job_processes(uint64_t job_id, uid_t uid, int wait_ms = 1000);

}  // namespace hq::cmd
