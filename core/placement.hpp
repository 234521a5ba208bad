// The fixed per-node shape of a job (-N, --ntasks-per-node, or GPUs that keep it on
// one node) and the memory it asks for. Pure; thread-safe.
#pragma once
#include <optional>

#include "core/job.hpp"

namespace hq {

// Per-node shape a job needs when its node count is fixed.
struct NodeShape {
  int32_t nodes = 1;
  int32_t tasks_per_node = 1;
  int32_t cpus_per_node = 1;
  int64_t mem_per_node_mib = 0;
  int32_t gpus_per_node = 0;
};

// The fixed per-node shape, or nullopt when the job's tasks may spread freely (-n only,
// no --gpus: a job with --gpus and no -N keeps to one node).
std::optional<NodeShape> fixed_shape(const JobSpec& spec);
// Memory for `cpus` CPUs and `gpus` GPUs on one node: --mem, else --mem-per-cpu, else --mem-per-gpu.
int64_t mem_for(const JobSpec& spec, int32_t cpus, int32_t gpus);
// CPUs for `cpus` task CPUs and `gpus` GPUs on one node (--cpus-per-gpu raises it).
int32_t cpus_for(const JobSpec& spec, int32_t cpus, int32_t gpus);
bool wants_gpus(const JobSpec& spec);
// Whether a job with `listed` -w nodes runs on those alone: unless its fixed shape needs
// more nodes than listed (then other nodes of its partition add to them, as in Slurm).
bool only_listed_nodes(const JobSpec& spec, size_t listed);

}  // namespace hq
