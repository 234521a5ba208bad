// Where the tasks of a job step go inside the job's allocation (srun inside an allocation):
// which nodes, how many tasks on each and which task ids (block, cyclic or plane
// distribution), and how many of the job's CPUs the step holds there. Slurm 22.05's rules
// (docs/design/steps-plan.md; goldens in tests/fixtures/slurm/steps-inside-allocation.golden):
// a step without --exact or an explicit -c holds every CPU the job has on its nodes; steps
// that are not --overlap do not share CPUs, so a step whose CPUs are busy waits.
// Pure: no I/O. Errors carry Slurm's words.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/job.hpp"
#include "core/status.hpp"

namespace hq {

enum class TaskDistribution { kDefault, kBlock, kCyclic, kPlane };

// What srun asked for, after its options and input environment were read.
struct StepRequest {
  int32_t ntasks = 0;           // 0: not given
  int32_t nodes_min = 0;        // 0: not given
  int32_t nodes_max = 0;        // 0: as nodes_min
  int32_t ntasks_per_node = 0;  // 0: not given; with ntasks, a maximum per node
  int32_t cpus_per_task = 1;
  bool cpus_per_task_set = false;  // -c given: implies --exact
  TaskDistribution distribution = TaskDistribution::kDefault;
  int32_t plane_size = 0;       // with kPlane
  std::vector<std::string> nodelist;  // -w: these nodes must be in the step
  std::vector<std::string> exclude;   // -x
  bool exact = false;           // --exact / --exclusive: only the CPUs its tasks need
  bool overlap = false;         // --overlap / --external-launcher: shares CPUs with any step
  bool overcommit = false;      // -O: more tasks than CPUs
};

struct StepNode {
  std::string name;
  int32_t cpus = 0;                 // the step's CPUs on this node
  std::vector<uint32_t> tasks;      // global task ids here, ascending; index = SLURM_LOCALID
  std::vector<int32_t> gpus;        // the step's GPUs here (node indices; core/step_gpus)
  int64_t mem_mib = 0;              // the step's memory limit here (srun --mem); 0: the job's
};

struct StepLayout {
  std::vector<StepNode> nodes;      // in the allocation's order; index = SLURM_NODEID
  int32_t ntasks = 0;
  TaskDistribution distribution = TaskDistribution::kBlock;  // as resolved
  std::vector<std::string> warnings;  // for srun to print, e.g. "can't run 2 processes on 3 nodes, ..."
};

// The step's layout in `alloc` (the job's nodes, in order), where `busy` gives per node the
// CPUs held by running steps that are not --overlap (ignored for an --overlap request).
// Errors: kUnavailable when other steps hold the CPUs it needs (srun waits and retries;
// the message is the reason, "Requested nodes are busy"); kInvalid when it can never fit
// this allocation (srun prints each line of the message after "srun: error: " and exits 1).
Result<StepLayout> plan_step(const std::vector<NodeAlloc>& alloc, const std::map<std::string, int32_t>& busy,
                             const StepRequest& req, uint64_t job_id);

// srun --mem=`mem_mib` (per node; 0: not given, the step shares the job's memory): each
// node of `layout` gets it as its limit and holds it while the step runs. An error when
// the job has less memory on one of its nodes (kInvalid, Slurm's "Memory required by
// task is not available") or when running steps hold too much of it now (kUnavailable:
// srun waits). `busy`: per node, the memory held by running steps that are not --overlap
// (empty for an --overlap request). Nodes where the job has no memory figure take any.
// The largest --mem a step may ask for (1 PiB in MiB): its limit in bytes fits an int64.
constexpr int64_t kMaxStepMemMib = int64_t{1} << 30;
Status assign_step_memory(const std::vector<NodeAlloc>& alloc, int64_t mem_mib, const std::map<std::string, int64_t>& busy,
                          StepLayout& layout, uint64_t job_id);

// "block", "cyclic", "plane": SLURM_DISTRIBUTION's spelling.
std::string distribution_name(TaskDistribution d);

// Task counts per node in Slurm's compressed form: {2,1,1} -> "2,1(x2)".
std::string tasks_per_node(const StepLayout& layout);

}  // namespace hq
