// The node model as the controller sees it: configured size, what agents reported,
// and what running jobs hold. Owned by ClusterState.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"

namespace hq {

struct Node {
  std::string name;
  int32_t cpus = 0;          // schedulable CPUs
  int64_t mem_mib = 0;       // schedulable memory
  std::vector<std::string> features;
  int32_t weight = 1;        // lower weights are allocated first
  std::vector<std::string> partitions;
  // Runtime, re-learned from the agent; never journaled.
  bool registered = false;   // an agent has registered since controller start
  bool responding = false;   // agent connection up and heartbeats fresh
  bool down = false;
  std::string reason;
  Time last_heard = 0;
  Time boot_time = 0;
  // Derived from running jobs' allocations (rebuilt by apply()).
  int32_t alloc_cpus = 0;
  int64_t alloc_mem_mib = 0;
  std::set<JobId> jobs;
};

// Slurm's node state name: IDLE, MIXED, ALLOCATED, DOWN, UNKNOWN (+ "*" when not
// responding is shown by callers through `not_responding`).
std::string node_state_name(const Node& n);
bool node_schedulable(const Node& n);

}  // namespace hq
