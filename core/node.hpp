// The node model as the controller sees it: configured size, what agents reported,
// and what running jobs hold. Owned by ClusterState.
#pragma once
#include <compare>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/ids.hpp"
#include "core/status.hpp"
#include "core/time.hpp"

namespace hq {

// One GPU of a node, at its index (the node's GPUs in PCI order, as the agent found them).
struct NodeGpu {
  std::string type;          // Slurm type name; "" untyped
  std::string cpus;          // CPU list next to it ("0-31"); "" unknown
  auto operator<=>(const NodeGpu&) const = default;
};

struct Node {
  std::string name;
  int32_t cpus = 0;          // schedulable CPUs
  int64_t mem_mib = 0;       // schedulable memory
  std::vector<std::string> features;
  std::vector<NodeGpu> gpus; // from the config's gres, then as the agent found them
  std::string block, switch_name;  // topology labels the agent gave (--block, --switch)
  int32_t restricted_cpus_per_gpu = 0;  // per idle GPU, CPUs that CPU-only jobs cannot use
  int32_t weight = 1;        // lower weights are allocated first
  std::vector<std::string> partitions;
  // Runtime, re-learned from the agent; never journaled.
  bool registered = false;   // an agent has registered since controller start
  bool responding = false;   // agent connection up and heartbeats fresh
  bool down = false;
  std::string reason;
  bool drain = false;        // an operator drained it (journaled): no new jobs; `reason` says why
  bool dynamic = false;      // not in the config: it joined by registering
  Time last_heard = 0;
  Time boot_time = 0;
  // Derived from running jobs' allocations (rebuilt by apply()).
  int32_t alloc_cpus = 0;
  int64_t alloc_mem_mib = 0;
  std::vector<char> gpu_used;  // by GPU index (may be longer than gpus while an agent is away)
  int32_t alloc_gpus = 0;
  std::set<JobId> jobs;
};

// Slurm's node state name: IDLE, MIXED, ALLOCATED, DOWN, UNKNOWN, DRAINING (drained
// with jobs still running), DRAINED, DOWN+DRAIN ("*" for not responding is the callers').
std::string node_state_name(const Node& n);
bool node_schedulable(const Node& n);
// One NodeGpu per GPU a config `gres` list declares, in its order (CPU lists unknown).
std::vector<NodeGpu> gpus_from_gres(const std::vector<GresCount>& gres);
// The node's GPUs once its agent reported `found`: what was found, when it covers every
// configured entry (a typed entry needs that many of its type, an untyped one that many
// GPUs of any type). Otherwise an error that names the shortfall (the node goes DOWN).
Result<std::vector<NodeGpu>> reconcile_gpus(const std::vector<GresCount>& configured, const std::vector<NodeGpu>& found);
// "gpu:nvidia_h100_80gb_hbm3:8" (types in order of first appearance, ',' between), "" without GPUs.
std::string node_gres(const Node& n);
// The same, counting only GPUs in use: Slurm's GresUsed ("gpu:nvidia_h100_80gb_hbm3:4(IDX:0-3)").
std::string node_gres_used(const Node& n);

}  // namespace hq
