// Which of the job's GPUs a step gets on each of its nodes (srun inside an allocation),
// as Slurm 22.05 does: a step that asks for none gets every GPU the job has there (srun(1)
// --gres: "the default is for job steps to be allocated all of the generic resources
// allocated to the job"); one that asks (--gpus, --gpus-per-node, --gpus-per-task) gets that
// many, the lowest free first, and steps that asked do not share GPUs unless --overlap.
// Pure: no I/O. Errors carry Slurm's words.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/job.hpp"
#include "core/status.hpp"
#include "core/step_layout.hpp"

namespace hq {

struct StepGpuRequest {
  int32_t gpus = 0;           // --gpus: for the whole step, spread over its nodes
  int32_t gpus_per_node = 0;  // --gpus-per-node
  int32_t gpus_per_task = 0;  // --gpus-per-task
  bool asked() const { return gpus > 0 || gpus_per_node > 0 || gpus_per_task > 0; }
};

// Fills each node's `gpus` in `layout` (laid out in `alloc`, the job's nodes). `busy` gives
// per node the GPUs that running steps which asked for GPUs hold (ignored by an --overlap
// step). Errors: kInvalid when the job has too few GPUs on a node ("Invalid generic resource
// (gres) specification": srun exits 1); kUnavailable when other steps hold them (srun waits).
Status assign_step_gpus(const std::vector<NodeAlloc>& alloc, const StepGpuRequest& req,
                        const std::map<std::string, std::set<int32_t>>& busy, StepLayout& layout);

}  // namespace hq
