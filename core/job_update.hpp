// scontrol update JobId=... Key=Value: which settings there are, what each may change and
// who may change it (Slurm's rules, reference §6 and scontrol(1)). Pure; thread-safe.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/job.hpp"
#include "core/status.hpp"

namespace hq {

// The changes one update asks for; each set field is a change.
struct JobUpdate {
  std::optional<Duration> time_limit;  // kUnlimited for UNLIMITED
  int time_limit_sign = 0;             // "+30"/"-30": add to or take from the current limit
  std::optional<Duration> time_min;
  std::optional<std::string> name, comment, qos, wckey, account, partition, features, req_nodes, exc_nodes, dependency;
  std::optional<int32_t> nice, nodes_min, nodes_max, ntasks, array_throttle;
  std::optional<int64_t> mem_per_node_mib, mem_per_cpu_mib, priority;
  std::optional<std::string> start_time, deadline;  // as given; resolved with the caller's clock
  bool changes_resources() const {
    return partition || features || req_nodes || exc_nodes || nodes_min || ntasks || mem_per_node_mib ||
           mem_per_cpu_mib;
  }
};

// "TimeLimit=1:00", keys in any case. Errors read as Slurm's: "Update of this parameter is
// not supported: bogus=1", "Invalid TimeLimit value".
Result<JobUpdate> parse_job_update(const std::vector<std::string>& settings);

// What `job` becomes under `u`, decided by Slurm's rules: an ended job changes no more
// ("Job has already finished"); a running one only in its time limit, name, comment,
// nice, priority and array throttle ("Job is no longer pending execution" otherwise);
// a user may only shorten a time limit, and only an administrator sets a priority or a
// negative nice ("Access/permission denied"). `begin` and `deadline` are the resolved
// StartTime and Deadline when given. The caller re-admits a pending job whose request
// changed (partition, sizes, nodes) and records the result.
Result<Job> apply_job_update(const Job& job, const JobUpdate& u, bool admin, Time begin, Time deadline);

}  // namespace hq
