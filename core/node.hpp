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

// Why a node that fell silent is DOWN (node_timeout); the reason return_to_service acts on.
inline constexpr const char* kNotResponding = "Not responding";
// Whether a DOWN node's reason is one the controller gave it (silent, GPUs short of its
// gres: a registration may bring it back) rather than an operator's (scontrol State=DOWN:
// it stays down until resumed).
bool controller_down_reason(const std::string& reason);

struct Node {
  std::string name;
  int32_t cpus = 0;          // schedulable CPUs
  int64_t mem_mib = 0;       // schedulable memory
  std::vector<std::string> features;
  std::vector<NodeGpu> gpus; // from the config's gres, then as the agent found them
  std::string block, switch_name;  // topology labels the agent gave (--block, --switch)
  int32_t restricted_cpus_per_gpu = 0;  // per idle GPU, CPUs that CPU-only jobs cannot use
  int32_t weight = 1;        // lower weights are allocated first
  int32_t threads_per_core = 1;  // hardware threads per core (--hint=nomultithread takes whole cores)
  std::vector<std::string> partitions;  // in the config's partition order
  // What the config gives (0, empty: not given; the agent's report decides). None for a
  // dynamic node. apply() resolves a registration against these.
  int32_t config_cpus = 0;
  int64_t config_mem_mib = 0;
  int32_t config_threads_per_core = 0;
  std::vector<GresCount> config_gres;
  // Journaled (NodeRegistered, NodeDownChanged, NodeDrainChanged): they survive a restart.
  bool down = false;         // out of service: fell silent, or its GPUs fall short of the config
  std::string down_reason;
  Time down_time = 0;        // since when it is down
  bool drain = false;        // an operator drained it: no new jobs; `drain_reason` says why
  std::string drain_reason;
  Time drain_time = 0;       // when, and who asked (a uid)
  uint32_t drain_uid = 0;
  bool dynamic = false;      // not in the config: it joined by registering
  // Set by an operator (NodeUpdated, journaled): registrations keep them.
  bool operator_features = false, operator_weight = false;
  // An operator's moves (Topology=[NAME:]UNIT), as a label ([TOPOLOGY:]UNIT entries): in
  // those topologies they win over the config and the agent's label; `block` has them merged.
  std::string operator_block;
  Time boot_time = 0;
  // Liveness, re-learned from the agent after a controller restart; never journaled.
  bool registered = false;   // an agent has registered since controller start
  bool responding = false;   // agent connection up and heartbeats fresh
  Time last_heard = 0;
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
// The Reason= a node shows: a drain's (an operator's words, as Slurm keeps them), else why it is DOWN.
const std::string& node_reason(const Node& n);
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
