// The environment a batch script starts with: the exported submit environment plus
// Slurm's SLURM_* variables and their HQ_* twins (reference §8.6). Pure.
#pragma once
#include <string>
#include <vector>

#include "core/job.hpp"

namespace hq {

struct LaunchContext {
  std::string node;            // this node's name
  std::string cluster;
  std::string nodelist;        // compressed hostlist of the allocation
  int32_t node_index = 0;
  int32_t cpus_on_node = 0;
};

std::vector<std::string> job_environment(const Job& job, const LaunchContext& ctx);

// Slurm's run-length form for per-node counts: {72,72,36} -> "72(x2),36".
std::string run_length(const std::vector<int32_t>& values);

}  // namespace hq
