#include "core/job_env.hpp"

#include <map>

namespace hq {

std::string run_length(const std::vector<int32_t>& v) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

std::vector<std::string> job_environment(const Job& job, const LaunchContext& ctx) {
  std::map<std::string, std::string> vars;
  for (const auto& kv : job.spec.env) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::vector<int32_t> cpus, tasks;
  int32_t ntasks = 0;
  for (const auto& a : job.alloc) {
    cpus.push_back(a.cpus);
    tasks.push_back(a.tasks);
    ntasks += a.tasks;
  }
  std::map<std::string, std::string> slurm = {
      {"JOB_ID", std::to_string(job.id.value)},
      {"JOBID", std::to_string(job.id.value)},
      {"JOB_NAME", job.spec.name},
      {"JOB_NODELIST", ctx.nodelist},
      {"NODELIST", ctx.nodelist},
      {"JOB_NUM_NODES", std::to_string(job.alloc.size())},
      {"NNODES", std::to_string(job.alloc.size())},
      {"CPUS_ON_NODE", std::to_string(ctx.cpus_on_node)},
      {"JOB_CPUS_PER_NODE", run_length(cpus)},
      {"TASKS_PER_NODE", run_length(tasks)},
      {"CPUS_PER_TASK", std::to_string(job.spec.cpus_per_task)},
      {"JOB_PARTITION", job.partition},
      {"SUBMIT_DIR", job.spec.workdir},
      {"SUBMIT_HOST", job.spec.submit_host},
      {"CLUSTER_NAME", ctx.cluster},
      {"JOB_USER", job.spec.user},
      {"JOB_UID", std::to_string(job.spec.uid)},
      {"JOB_GID", std::to_string(job.spec.gid)},
      {"NODEID", std::to_string(ctx.node_index)},
      {"PROCID", "0"},
      {"LOCALID", "0"},
      {"RESTART_COUNT", std::to_string(job.restart_count)},
      {"JOB_START_TIME", std::to_string(job.start_time)},
  };
  if (job.time_limit > 0) slurm["JOB_END_TIME"] = std::to_string(job.start_time + job.time_limit);
  if (job.spec.ntasks_set || job.spec.ntasks_per_node > 0) {
    slurm["NTASKS"] = std::to_string(ntasks);
    slurm["NPROCS"] = std::to_string(ntasks);
  }
  if (job.spec.mem_per_node_mib > 0) slurm["MEM_PER_NODE"] = std::to_string(job.spec.mem_per_node_mib);
  if (job.spec.mem_per_cpu_mib > 0) slurm["MEM_PER_CPU"] = std::to_string(job.spec.mem_per_cpu_mib);
  for (const auto& [k, v] : slurm) {
    vars["SLURM_" + k] = v;
    vars["HQ_" + k] = v;
  }
  vars["SLURMD_NODENAME"] = ctx.node;
  vars["HQ_NODENAME"] = ctx.node;
  vars["ENVIRONMENT"] = "BATCH";
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

}  // namespace hq
