// Multifactor job priority (Slurm priority/multifactor, reference §2.3): weighted
// factors in [0,1] summed into an integer, minus nice. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/name_map.hpp"

namespace hq {

struct PriorityFactors {
  double age = 0, job_size = 0, partition = 0, qos = 0, fairshare = 0;
  int64_t nice = 0;
  int64_t total = 0;   // 1..4294967295 (0 is never produced: Slurm reads 0 as held)
};

// The factors accounting gives (core/acct_policy): fair share and the QOS's priority, each
// 0..1. An interface, so that priorities need not know the accounting model.
class AcctFactors {
 public:
  virtual double fairshare(const Job& job) const = 0;
  virtual double qos(const Job& job) const = 0;

 protected:
  ~AcctFactors() = default;
};

// What priorities are relative to; build once per pass or request, not per job.
struct PriorityContext {
  PriorityWeights weights;
  int64_t cluster_cpus = 1;           // job size is relative to this
  int32_t max_partition_factor = 1;   // partition factors are normalised to the highest
  NameMap<int32_t> partition_factor;  // priority_job_factor by name
  const AcctFactors* accounting = nullptr;  // none: fair share and QOS factors are 0
};

PriorityContext make_priority_context(const SchedulerConfig& cfg, const std::vector<PartitionConfig>& parts,
                                      int64_t cluster_cpus);
// The same, with the CPUs of every node in `state`.
PriorityContext make_priority_context(const SchedulerConfig& cfg, const ClusterState& state);

// The partition factor is the highest priority_job_factor among the job's partitions.
PriorityFactors compute_priority(const Job& job, const PriorityContext& ctx, Time now);
// The same with the partition factor already known (the highest of the job's partitions'
// priority_job_factor): the scheduler resolves partitions once per job.
PriorityFactors compute_priority(const Job& job, const PriorityContext& ctx, Time now, int32_t partition_factor);

// The job's priority now, factor by factor (sprio's view); builds a context.
PriorityFactors job_priority(const ClusterState& state, const SchedulerConfig& cfg, const Job& job, Time now,
                             const AcctFactors* accounting = nullptr);

// CPUs the job asks for in all (tasks x cpus per task, or nodes x per-node shape).
int64_t requested_cpus(const JobSpec& spec);

}  // namespace hq
