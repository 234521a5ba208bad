#include "core/step_env.hpp"

#include <iterator>
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

void append(std::vector<std::string>& env, const std::string& name, const std::string& value) {
  env.push_back("SLURM_" + name + "=" + value);
  env.push_back("HQ_" + name + "=" + value);
}

// The variables each task sets for itself (task_environment): the step's list leaves
// srun's values of them out, so a task's list is the step's plus its own.
constexpr const char* kTaskNames[] = {"NODEID", "LOCALID", "PROCID", "GTIDS", "CPUS_ON_NODE", "TOPOLOGY_ADDR",
                                      "TOPOLOGY_ADDR_PATTERN"};

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
  for (const char* name : kTaskNames) {
    vars.erase(std::string("SLURM_") + name);
    vars.erase(std::string("HQ_") + name);
  }
  vars.erase("SLURMD_NODENAME");
  vars.erase("HQ_NODENAME");
  return to_list(vars);
}

std::vector<std::string> task_environment(const std::vector<std::string>& step_env, const StepLayout& layout,
                                          size_t node_index, size_t local) {
  return task_environment(step_env, layout.nodes.at(node_index), node_index, local);
}

std::vector<std::string> task_environment(const std::vector<std::string>& step_env, const StepNode& node,
                                          size_t node_index, size_t local) {
  std::string gtids;
  for (uint32_t t : node.tasks) {
    if (!gtids.empty()) gtids += ',';
    gtids += std::to_string(t);
  }
  std::vector<std::string> env;
  env.reserve(step_env.size() + 2 * std::size(kTaskNames) + 2);
  env.insert(env.end(), step_env.begin(), step_env.end());
  append(env, "NODEID", std::to_string(node_index));
  append(env, "LOCALID", std::to_string(local));
  append(env, "PROCID", std::to_string(node.tasks.at(local)));
  append(env, "GTIDS", gtids);
  append(env, "CPUS_ON_NODE", std::to_string(node.cpus));
  append(env, "TOPOLOGY_ADDR", node.name);
  append(env, "TOPOLOGY_ADDR_PATTERN", "node");
  env.push_back("SLURMD_NODENAME=" + node.name);
  env.push_back("HQ_NODENAME=" + node.name);
  return env;
}

}  // namespace hq
