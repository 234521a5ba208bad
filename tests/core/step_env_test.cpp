// step_environment/task_environment against real Slurm 22.05: task 1 of `srun -l -n2`
// (step 15) inside `sbatch -N3 -n6` (tests/fixtures/slurm/steps-inside-allocation.golden).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>

#include "core/step_env.hpp"

using namespace hq;

namespace {

// The golden's "1: SLURM_X=value" lines of its last command.
std::map<std::string, std::string> golden_task1() {
  std::ifstream in(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/steps-inside-allocation.golden");
  std::map<std::string, std::string> vars;
  std::string line;
  bool last = false;
  while (std::getline(in, line)) {
    if (line.rfind("### srun -l -n2 bash -c 'env", 0) == 0) last = true;
    if (!last || line.rfind("1: SLURM_", 0) != 0) continue;
    size_t eq = line.find('=');
    vars[line.substr(3, eq - 3)] = line.substr(eq + 1);
  }
  return vars;
}

std::map<std::string, std::string> as_map(const std::vector<std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& kv : env) out[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  return out;
}

}  // namespace

TEST_CASE("step env: a task's SLURM_* variables are real Slurm's") {
  auto golden = golden_task1();
  REQUIRE(golden.size() > 30);
  // What srun inherits from the batch job: its own variables, some of which the step replaces.
  std::set<std::string> from_batch = {"SLURM_CLUSTER_NAME", "SLURM_JOB_CPUS_PER_NODE", "SLURM_JOB_GID", "SLURM_JOB_NAME",
                                      "SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_JOB_PARTITION", "SLURM_JOB_UID",
                                      "SLURM_JOB_USER", "SLURM_NODELIST", "SLURM_SUBMIT_DIR", "SLURM_SUBMIT_HOST"};
  std::vector<std::string> srun_env = {"SLURM_NNODES=3", "SLURM_NTASKS=6", "SLURM_NPROCS=6", "SLURM_TASKS_PER_NODE=2(x3)",
                                       "SLURM_JOB_ID=1", "PATH=/usr/bin"};
  for (const auto& name : from_batch) srun_env.push_back(name + "=" + golden.at(name));
  StepRequest req;
  req.nodes_min = 3;
  req.ntasks = 2;
  std::vector<NodeAlloc> alloc = {{"n1", 2, 0, 2, {}}, {"n2", 2, 0, 2, {}}, {"n3", 2, 0, 2, {}}};
  auto layout = plan_step(alloc, {}, req, 1);
  REQUIRE(layout.is_ok());
  StepEnvContext ctx{1, 15, "127.0.0.1", true, ""};
  auto task = as_map(task_environment(step_environment(srun_env, *layout, ctx), *layout, 1, 0));
  // Slurm's that come from elsewhere: its config, srun's sockets and umask, the task's pid.
  std::set<std::string> not_ours = {"SLURM_CONF", "SLURM_NODE_ALIASES", "SLURM_PRIO_PROCESS", "SLURM_SRUN_COMM_HOST",
                                    "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT", "SLURM_TASK_PID", "SLURM_UMASK",
                                    "SLURM_WORKING_CLUSTER", "SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"};
  for (const auto& [name, value] : golden) {
    if (not_ours.count(name)) continue;
    INFO(name);
    CHECK(task[name] == value);
    if (name.rfind("SLURM_", 0) == 0 && !from_batch.count(name)) CHECK(task["HQ_" + name.substr(6)] == value);
  }
  CHECK(task["SLURMD_NODENAME"] == "n2");
  CHECK(task["PATH"] == "/usr/bin");
}

TEST_CASE("step env: every task gets its rank, local id and node - node 0 holds two tasks in a block layout") {
  StepRequest req;
  req.ntasks = 4;
  std::vector<NodeAlloc> alloc = {{"a", 2, 0, 2, {}}, {"b", 2, 0, 2, {}}, {"c", 2, 0, 2, {}}};
  auto layout = plan_step(alloc, {}, req, 5);
  REQUIRE(layout.is_ok());
  auto step = step_environment({}, *layout, {5, 0, "", false, ""});
  auto second = as_map(task_environment(step, *layout, 0, 1));
  CHECK(second["SLURM_PROCID"] == "1");
  CHECK(second["SLURM_LOCALID"] == "1");
  CHECK(second["SLURM_NODEID"] == "0");
  CHECK(second["SLURM_GTIDS"] == "0,1");
  CHECK(second["SLURM_STEP_TASKS_PER_NODE"] == "2,1(x2)");
  CHECK(second["SLURM_STEP_ID"] == "0");
  CHECK(second.count("SLURM_LABELIO") == 0);
  auto last = as_map(task_environment(step, *layout, 2, 0));
  CHECK(last["SLURM_PROCID"] == "3");
  CHECK(last["SLURMD_NODENAME"] == "c");
}
