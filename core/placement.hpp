// Placement of one job on a set of nodes with free CPUs and memory (first fit).
// Pure; used by the scheduler and by submit-time "can this ever run" checks.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/job.hpp"

namespace hq {

struct FreeNode {
  std::string name;
  int32_t free_cpus = 0;
  int64_t free_mem_mib = 0;
};

// Per-node shape a job needs when its node count is fixed.
struct NodeShape {
  int32_t nodes = 1;
  int32_t tasks_per_node = 1;
  int32_t cpus_per_node = 1;
  int64_t mem_per_node_mib = 0;
};

// The fixed per-node shape, or nullopt when the job's tasks may spread freely (-n only).
std::optional<NodeShape> fixed_shape(const JobSpec& spec);
int64_t mem_for_cpus(const JobSpec& spec, int32_t cpus);

// First-fit placement over `nodes` in order. Empty result: does not fit.
std::vector<NodeAlloc> place_first_fit(const JobSpec& spec, const std::vector<FreeNode>& nodes);

}  // namespace hq
