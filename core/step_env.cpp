#include "core/step_env.hpp"

#include <map>

#include "core/hostlist.hpp"

namespace hq {
namespace {

using Vars = std::map<std::string, std::string>;

Vars to_map(const std::vector<std::string>& env) {
  Vars vars;
  for (const std::string& kv : env) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return vars;
}

std::vector<std::string> to_list(const Vars& vars) {
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

// SLURM_<name> and HQ_<name>.
void put(Vars& vars, const std::string& name, const std::string& value) {
  vars["SLURM_" + name] = value;
  vars["HQ_" + name] = value;
}

}  // namespace

std::vector<std::string> step_environment(const std::vector<std::string>& srun_env, const StepLayout& layout,
                                          const StepEnvContext& ctx) {
  Vars vars = to_map(srun_env);
  std::vector<std::string> names;
  for (const StepNode& n : layout.nodes) names.push_back(n.name);
  std::string per_node = tasks_per_node(layout);
  put(vars, "JOB_ID", std::to_string(ctx.job_id));
  put(vars, "JOBID", std::to_string(ctx.job_id));
  put(vars, "STEP_ID", std::to_string(ctx.step_id));
  put(vars, "STEPID", std::to_string(ctx.step_id));
  put(vars, "STEP_NODELIST", compress_hostlist(names));
  put(vars, "STEP_NUM_NODES", std::to_string(layout.nodes.size()));
  put(vars, "STEP_NUM_TASKS", std::to_string(layout.ntasks));
  put(vars, "STEP_TASKS_PER_NODE", per_node);
  put(vars, "TASKS_PER_NODE", per_node);
  put(vars, "NNODES", std::to_string(layout.nodes.size()));
  put(vars, "NTASKS", std::to_string(layout.ntasks));
  put(vars, "NPROCS", std::to_string(layout.ntasks));
  put(vars, "DISTRIBUTION", distribution_name(layout.distribution));
  if (!ctx.launch_host.empty()) put(vars, "LAUNCH_NODE_IPADDR", ctx.launch_host);
  if (ctx.label) put(vars, "LABELIO", "1");
  if (!ctx.cpu_bind.empty()) put(vars, "CPU_BIND", ctx.cpu_bind);
  return to_list(vars);
}

std::vector<std::string> task_environment(const std::vector<std::string>& step_env, const StepLayout& layout,
                                          size_t node_index, size_t local) {
  Vars vars = to_map(step_env);
  const StepNode& node = layout.nodes.at(node_index);
  put(vars, "NODEID", std::to_string(node_index));
  put(vars, "LOCALID", std::to_string(local));
  put(vars, "PROCID", std::to_string(node.tasks.at(local)));
  std::string gtids;
  for (uint32_t t : node.tasks) {
    if (!gtids.empty()) gtids += ',';
    gtids += std::to_string(t);
  }
  put(vars, "GTIDS", gtids);
  put(vars, "CPUS_ON_NODE", std::to_string(node.cpus));
  put(vars, "TOPOLOGY_ADDR", node.name);
  put(vars, "TOPOLOGY_ADDR_PATTERN", "node");
  vars["SLURMD_NODENAME"] = node.name;
  vars["HQ_NODENAME"] = node.name;
  return to_list(vars);
}

}  // namespace hq
