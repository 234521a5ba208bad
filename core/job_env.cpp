#include "core/job_env.hpp"

#include <algorithm>
#include <map>
#include <string_view>

#include "core/sluid.hpp"

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

namespace {

std::string join_ints(const std::vector<int32_t>& v) {
  std::string out;
  for (int32_t x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

}  // namespace

void add_gpu_environment(const LaunchContext& ctx, std::map<std::string, std::string>& slurm,
                         std::map<std::string, std::string>& plain) {
  if (ctx.gpus.empty()) return;
  slurm["JOB_GPUS"] = join_ints(ctx.gpus);
  slurm["GPUS_ON_NODE"] = std::to_string(ctx.gpus.size());
  std::vector<int32_t> nvidia, amd;
  int32_t seen = 0;
  for (int32_t idx : ctx.gpus) {
    if (!ctx.node_gpus || idx < 0 || static_cast<size_t>(idx) >= ctx.node_gpus->size()) continue;
    GpuVendor vendor = (*ctx.node_gpus)[static_cast<size_t>(idx)].vendor;
    int32_t ordinal = 0;
    for (int32_t i = 0; i < idx; ++i) ordinal += (*ctx.node_gpus)[static_cast<size_t>(i)].vendor == vendor;
    if (ctx.gpus_renumbered) {  // only the job's GPUs are visible: its own count from 0
      ordinal = 0;
      for (int32_t j : ctx.job_gpus ? *ctx.job_gpus : ctx.gpus)
        if (j < idx && (*ctx.node_gpus)[static_cast<size_t>(j)].vendor == vendor) ++ordinal;
    }
    (vendor == GpuVendor::kAmd ? amd : nvidia).push_back(ordinal);
    ++seen;
  }
  if (seen == 0) {  // nothing probed on this node (a config-only GPU): node indices
    plain["CUDA_VISIBLE_DEVICES"] = join_ints(ctx.gpus);
    plain["GPU_DEVICE_ORDINAL"] = join_ints(ctx.gpus);
    return;
  }
  if (!nvidia.empty()) {
    plain["CUDA_VISIBLE_DEVICES"] = join_ints(nvidia);
    plain["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  }
  if (!amd.empty()) plain["ROCR_VISIBLE_DEVICES"] = join_ints(amd);
  plain["GPU_DEVICE_ORDINAL"] = join_ints(amd.empty() ? nvidia : amd);
}

namespace {

// "KEY=VALUE" entries sorted by key, one per key: the last given (a map of strings built
// the same, with an allocation per key and value, was a tenth of a node agent's CPU a job).
// Each key is found once; the sort orders (key, position) pairs.
std::vector<std::string> sorted_last_wins(std::vector<std::string> entries) {
  struct Keyed {
    std::string_view key;
    size_t at;
  };
  std::vector<Keyed> order;
  order.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) order.push_back({std::string_view(entries[i]).substr(0, entries[i].find('=')), i});
  std::sort(order.begin(), order.end(), [](const Keyed& a, const Keyed& b) {
    int c = a.key.compare(b.key);
    return c != 0 ? c < 0 : a.at < b.at;
  });
  std::vector<std::string> out;
  out.reserve(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    if (k + 1 < order.size() && order[k].key == order[k + 1].key) continue;  // a later one wins
    out.push_back(std::move(entries[order[k].at]));  // its key is not looked at again
  }
  return out;
}

}  // namespace

std::vector<std::string> job_environment(const Job& job, const LaunchContext& ctx) {
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
  if (job.sluid) slurm["JOB_SLUID"] = sluid_text(job.sluid);
  if (job.array_job_id) {
    slurm["ARRAY_JOB_ID"] = std::to_string(job.array_job_id);
    slurm["ARRAY_TASK_ID"] = std::to_string(job.array_task_id);
    slurm["ARRAY_TASK_COUNT"] = std::to_string(job.array_task_count);
    slurm["ARRAY_TASK_MIN"] = std::to_string(job.array_task_min);
    slurm["ARRAY_TASK_MAX"] = std::to_string(job.array_task_max);
    slurm["ARRAY_TASK_STEP"] = std::to_string(job.array_task_step);
  }
  if (!job.spec.extra->qos.empty()) slurm["JOB_QOS"] = job.spec.extra->qos;
  if (!job.spec.extra->reservation.empty()) slurm["JOB_RESERVATION"] = job.spec.extra->reservation;
  if (job.spec.cpus_per_task_set) slurm["CPUS_PER_TASK"] = std::to_string(job.spec.cpus_per_task);
  if (job.time_limit > 0) slurm["JOB_END_TIME"] = std::to_string(job.start_time + job.time_limit);
  if (job.spec.ntasks_set || job.spec.ntasks_per_node > 0) {
    slurm["NTASKS"] = std::to_string(ntasks);
    slurm["NPROCS"] = std::to_string(ntasks);
  }
  if (job.spec.mem_per_node_mib > 0) slurm["MEM_PER_NODE"] = std::to_string(job.spec.mem_per_node_mib);
  if (job.spec.nomultithread) slurm["HINT"] = "nomultithread";  // sbatch's output variable
  if (job.spec.segment > 0) slurm["JOB_SEGMENT_SIZE"] = std::to_string(job.spec.segment);
  slurm["TOPOLOGY_ADDR"] = ctx.topo.addr.empty() ? ctx.node : ctx.topo.addr;
  slurm["TOPOLOGY_ADDR_PATTERN"] = ctx.topo.pattern.empty() ? "node" : ctx.topo.pattern;
  if (job.spec.mem_per_cpu_mib > 0) slurm["MEM_PER_CPU"] = std::to_string(job.spec.mem_per_cpu_mib);
  if (job.spec.mem_per_gpu_mib > 0) slurm["MEM_PER_GPU"] = std::to_string(job.spec.mem_per_gpu_mib);
  if (job.spec.gpus > 0) slurm["GPUS"] = std::to_string(job.spec.gpus);
  if (job.spec.gpus_per_node > 0) slurm["GPUS_PER_NODE"] = std::to_string(job.spec.gpus_per_node);
  if (job.spec.gpus_per_task > 0) slurm["GPUS_PER_TASK"] = std::to_string(job.spec.gpus_per_task);
  if (job.spec.cpus_per_gpu > 0) slurm["CPUS_PER_GPU"] = std::to_string(job.spec.cpus_per_gpu);
  std::map<std::string, std::string> gpu;
  add_gpu_environment(ctx, slurm, gpu);
  // In the order each overrides the one before: the job's own, the GPUs', Slurm's, the node's.
  std::vector<std::string> out;
  out.reserve(job.spec.env->size() + gpu.size() + 2 * slurm.size() + 4);
  for (const auto& kv : *job.spec.env)
    if (size_t eq = kv.find('='); eq != std::string::npos && eq > 0) out.push_back(kv);
  for (const auto& [k, v] : gpu) out.push_back(k + "=" + v);
  for (const auto& [k, v] : slurm) {
    out.push_back("SLURM_" + k + "=" + v);
    out.push_back("HQ_" + k + "=" + v);
  }
  out.push_back("SLURMD_NODENAME=" + ctx.node);
  out.push_back("HQ_NODENAME=" + ctx.node);
  out.push_back("ENVIRONMENT=BATCH");
  if (!ctx.step_socket.empty()) out.push_back("HQ_STEP_SOCKET=" + ctx.step_socket);
  return sorted_last_wins(std::move(out));
}

bool job_has_gpus(const Job& job) {
  for (const NodeAlloc& a : job.alloc)
    if (!a.gpus.empty()) return true;
  return false;
}

std::vector<std::string> step_gpu_environment(const std::vector<int32_t>& job_gpus, const std::vector<int32_t>& gpus,
                                              const std::vector<Gpu>* node_gpus, bool renumbered,
                                              const std::vector<int32_t>& visible) {
  LaunchContext ctx;
  ctx.node_gpus = node_gpus;
  ctx.gpus_renumbered = renumbered;
  ctx.gpus = gpus;
  ctx.job_gpus = &visible;
  std::map<std::string, std::string> slurm, plain;
  add_gpu_environment(ctx, slurm, plain);
  if (!job_gpus.empty()) slurm["JOB_GPUS"] = join_ints(job_gpus);  // the job's, as in Slurm
  if (!gpus.empty()) slurm["STEP_GPUS"] = join_ints(gpus);
  std::vector<std::string> out;
  for (const auto& [k, v] : slurm) {
    out.push_back("SLURM_" + k + "=" + v);
    out.push_back("HQ_" + k + "=" + v);
  }
  for (const auto& [k, v] : plain) out.push_back(k + "=" + v);
  return out;
}

void set_topology_addr(std::vector<std::string>& env, const TopologyAddr& topo) {
  if (topo.addr.empty()) return;
  const std::pair<std::string_view, const std::string*> vars[] = {{"TOPOLOGY_ADDR=", &topo.addr},
                                                                   {"TOPOLOGY_ADDR_PATTERN=", &topo.pattern}};
  std::erase_if(env, [&](const std::string& kv) {
    for (const auto& [name, value] : vars)
      for (std::string_view prefix : {"SLURM_", "HQ_"})
        if (kv.size() > prefix.size() + name.size() && kv.compare(0, prefix.size(), prefix) == 0 &&
            kv.compare(prefix.size(), name.size(), name) == 0)
          return true;
    return false;
  });
  for (const auto& [name, value] : vars)
    for (std::string_view prefix : {"SLURM_", "HQ_"}) env.push_back(std::string(prefix) + std::string(name) + *value);
}

std::vector<std::string> with_node_gpus(std::vector<std::string> env, const std::vector<std::string>& node_vars) {
  static constexpr std::string_view kNames[] = {"SLURM_JOB_GPUS=", "HQ_JOB_GPUS=", "SLURM_STEP_GPUS=", "HQ_STEP_GPUS=",
                                                "SLURM_GPUS_ON_NODE=",
                                                "HQ_GPUS_ON_NODE=", "CUDA_VISIBLE_DEVICES=", "CUDA_DEVICE_ORDER=",
                                                "ROCR_VISIBLE_DEVICES=", "GPU_DEVICE_ORDINAL="};
  std::erase_if(env, [](const std::string& kv) {
    for (std::string_view name : kNames)
      if (kv.compare(0, name.size(), name) == 0) return true;
    return false;
  });
  env.insert(env.end(), node_vars.begin(), node_vars.end());
  return env;
}

}  // namespace hq
