#include "core/priority.hpp"

#include <algorithm>
#include <cmath>

namespace hq {

int64_t requested_cpus(const JobSpec& s) {
  int64_t per_task = std::max(1, s.cpus_per_task);
  int64_t tasks = std::max(1, s.ntasks);
  if (s.ntasks_per_node > 0) tasks = std::max<int64_t>(tasks, int64_t{s.ntasks_per_node} * std::max(1, s.nodes_min));
  else tasks = std::max<int64_t>(tasks, std::max(1, s.nodes_min));
  return tasks * per_task;
}

PriorityContext make_priority_context(const SchedulerConfig& cfg, const std::vector<PartitionConfig>& parts,
                                      int64_t cluster_cpus) {
  PriorityContext ctx;
  ctx.weights = cfg.weights;
  ctx.cluster_cpus = std::max<int64_t>(1, cluster_cpus);
  for (const auto& p : parts) {
    ctx.max_partition_factor = std::max(ctx.max_partition_factor, p.priority_job_factor);
    ctx.partition_factor[p.name] = p.priority_job_factor;
  }
  return ctx;
}

PriorityContext make_priority_context(const SchedulerConfig& cfg, const ClusterState& state) {
  int64_t cpus = 0;
  for (const auto& [name, n] : state.nodes) cpus += n.cpus;
  return make_priority_context(cfg, state.partitions, cpus);
}

PriorityFactors job_priority(const ClusterState& state, const SchedulerConfig& cfg, const Job& job, Time now,
                             const AcctFactors* accounting) {
  PriorityContext ctx = make_priority_context(cfg, state);
  ctx.accounting = accounting;
  return compute_priority(job, ctx, now);
}

PriorityFactors compute_priority(const Job& job, const PriorityContext& ctx, Time now) {
  int32_t part_factor = 0;
  for_each_partition(job, [&](std::string_view name) {
    auto it = ctx.partition_factor.find(name);
    if (it != ctx.partition_factor.end()) part_factor = std::max(part_factor, it->second);
  });
  return compute_priority(job, ctx, now, part_factor);
}

PriorityFactors compute_priority(const Job& job, const PriorityContext& ctx, Time now, int32_t part_factor) {
  PriorityFactors f;
  if (job.spec.extra->priority > 0) {  // set by an administrator: fixed, as in Slurm
    f.total = job.spec.extra->priority;
    return f;
  }
  const PriorityWeights& w = ctx.weights;
  // Age accrues only while the job is eligible: not held, no unmet dependency, begun.
  bool accrues = !job.held() && job.dep_state == DepState::kNone && now >= job.spec.begin_time;
  if (accrues && now > job.eligible_time)
    f.age = std::min(1.0, static_cast<double>(now - job.eligible_time) / static_cast<double>(w.max_age));
  double size = std::min(1.0, static_cast<double>(requested_cpus(job.spec)) / static_cast<double>(ctx.cluster_cpus));
  f.job_size = w.favor_small ? 1.0 - size : size;
  f.partition = static_cast<double>(std::max(0, part_factor)) / static_cast<double>(std::max(1, ctx.max_partition_factor));
  if (ctx.accounting) {  // looked up only where weighed (both weights are 0 by default)
    if (w.fairshare > 0) f.fairshare = std::clamp(ctx.accounting->fairshare(job), 0.0, 1.0);
    if (w.qos > 0) f.qos = std::clamp(ctx.accounting->qos(job), 0.0, 1.0);
  }
  f.nice = job.spec.nice;
  double sum = w.age * f.age + w.job_size * f.job_size + w.partition * f.partition + w.qos * f.qos +
               w.fairshare * f.fairshare;
  double total = std::floor(sum) - static_cast<double>(f.nice);
  f.total = static_cast<int64_t>(std::clamp(total, 1.0, 4294967295.0));
  return f;
}

}  // namespace hq
