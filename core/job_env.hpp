// The environment a batch script starts with: the exported submit environment plus
// Slurm's SLURM_* variables and their HQ_* twins (reference §8.6). Pure.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/job.hpp"

namespace hq {

// Where a node sits in the switch tree (topology/tree): SLURM_TOPOLOGY_ADDR and
// SLURM_TOPOLOGY_ADDR_PATTERN; empty: the node's name and "node", as Slurm without a tree.
struct TopologyAddr {
  std::string addr, pattern;
};

// `env` (KEY=VALUE) with SLURM_TOPOLOGY_ADDR(_PATTERN) and their HQ_ twins set to `topo`'s
// (nothing changes when `topo` is empty).
void set_topology_addr(std::vector<std::string>& env, const TopologyAddr& topo);

struct LaunchContext {
  std::string node;            // this node's name
  std::string cluster;
  std::string nodelist;        // compressed hostlist of the allocation
  int32_t node_index = 0;
  int32_t cpus_on_node = 0;
  std::vector<int32_t> gpus;   // this node's GPU indices allocated to the job
  const std::vector<Gpu>* node_gpus = nullptr;  // the node's GPUs as probed (by index)
  bool gpus_renumbered = false;  // device access confined: the job sees its GPUs as 0..k-1
  std::string step_socket;       // the agent's step socket for srun (HQ_STEP_SOCKET); "" none
  const std::vector<int32_t>* job_gpus = nullptr;  // the k renumbered ones (null: `gpus`); a step may have fewer
  TopologyAddr topo;             // this node's place in the switch tree (empty: none)
};

// CUDA_VISIBLE_DEVICES (NVIDIA ordinals), ROCR_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL
// (AMD ordinals), CUDA_DEVICE_ORDER, SLURM_JOB_GPUS / SLURM_GPUS_ON_NODE (node indices).
// A vendor's ordinal is the GPU's position among that vendor's GPUs in PCI order, which
// is how CUDA (with CUDA_DEVICE_ORDER=PCI_BUS_ID) and ROCm number them.
void add_gpu_environment(const LaunchContext& ctx, std::map<std::string, std::string>& slurm,
                         std::map<std::string, std::string>& plain);

std::vector<std::string> job_environment(const Job& job, const LaunchContext& ctx);

// Whether the job has GPUs on any node of its allocation.
bool job_has_gpus(const Job& job);
// The GPU variables of add_gpu_environment ("KEY=VALUE", the SLURM_ ones with HQ_ twins) for
// a step's GPUs `gpus` on a node, of the job's GPUs there (`job_gpus`): what the step's tasks there see,
// whichever node started the step. SLURM_JOB_GPUS lists the job's GPUs there,
// SLURM_STEP_GPUS and the rest the step's. With `renumbered`, the step's processes see only
// the GPUs `visible` (the job's, or the step's own when its group hides the job's others),
// numbered from 0 among them.
std::vector<std::string> step_gpu_environment(const std::vector<int32_t>& job_gpus, const std::vector<int32_t>& gpus,
                                              const std::vector<Gpu>* node_gpus, bool renumbered,
                                              const std::vector<int32_t>& visible);
// `env` (KEY=VALUE) without any GPU variable add_gpu_environment sets, plus `node_vars`.
std::vector<std::string> with_node_gpus(std::vector<std::string> env, const std::vector<std::string>& node_vars);

// Slurm's run-length form for per-node counts: {72,72,36} -> "72(x2),36".
std::string run_length(const std::vector<int32_t>& values);

}  // namespace hq
