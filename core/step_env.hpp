// The environment of a job step's tasks (srun): srun's own environment (after --export)
// with the step's SLURM_* variables over it, then each node's and each task's, with HQ_*
// twins, as Slurm 22.05 sets them (reference steps-and-mpi.md §1.5; the step variables in
// tests/fixtures/slurm/steps-inside-allocation.golden). SLURM_JOB_NODELIST/SLURM_NODELIST
// keep the job's values; SLURM_NNODES, SLURM_NTASKS, SLURM_TASKS_PER_NODE become the step's.
// SLURM_TASK_PID is the launcher's to add (the task's pid is known only after fork). Pure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/step_layout.hpp"

namespace hq {

struct StepEnvContext {
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::string launch_host;  // srun's address (SLURM_LAUNCH_NODE_IPADDR)
  bool label = false;       // srun -l: SLURM_LABELIO=1
  std::string cpu_bind;     // SLURM_CPU_BIND's value when binding ("" leaves srun's)
};

// The variables every task of the step gets, over `srun_env` (KEY=VALUE).
std::vector<std::string> step_environment(const std::vector<std::string>& srun_env, const StepLayout& layout,
                                          const StepEnvContext& ctx);

// The step's environment for task `local` (SLURM_LOCALID) on the step's node `node_index`
// (SLURM_NODEID): `step_env` (which holds none of these) plus its global rank, the node's
// task ids and CPUs, the node's name. A copy and appends: no per-task sorting or lookups.
std::vector<std::string> task_environment(const std::vector<std::string>& step_env, const StepLayout& layout,
                                          size_t node_index, size_t local);
// The same for a node known by itself (another node of the step, which is sent only its own part).
std::vector<std::string> task_environment(const std::vector<std::string>& step_env, const StepNode& node,
                                          size_t node_index, size_t local);

}  // namespace hq
