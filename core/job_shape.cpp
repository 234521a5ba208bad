#include "core/job_shape.hpp"

#include <algorithm>

#include "core/placement.hpp"

namespace hq {

JobShape job_shape(const JobSpec& spec, const PartitionConfig& part, int32_t duration_slots) {
  JobShape out;
  out.need.slots = duration_slots;
  // --exclusive=topo: nothing else runs in its base blocks, its own nodes included.
  out.need.whole_node = spec.exclusive || part.exclusive || spec.exclusive_topo || part.exclusive_topo;
  out.need.all_mem = spec.mem_all;
  out.need.whole_cores = spec.nomultithread;
  // The partition's memory per CPU applies when the job names no memory at all.
  bool mem_default = !spec.mem_all && spec.mem_per_node_mib == 0 && spec.mem_per_cpu_mib == 0 && spec.mem_per_gpu_mib == 0;
  auto mem = [&](int32_t cpus, int32_t gpus) { return mem_default ? part.def_mem_per_cpu_mib * cpus : mem_for(spec, cpus, gpus); };
  if (auto fixed = fixed_shape(spec)) {
    out.units = fixed->nodes;
    out.nodes_max = std::max(fixed->nodes, spec.nodes_max);
    out.tasks_per_node = fixed->tasks_per_node;
    out.need.cpus = fixed->cpus_per_node;
    out.need.gpus = fixed->gpus_per_node;
    out.need.mem = mem(fixed->cpus_per_node, fixed->gpus_per_node);
    out.need.max_units = 1;
    out.need.cpus_magic = division_magic(out.need.cpus);
    return out;
  }
  // Tasks spread freely: per task its CPUs and GPUs; --gpus-per-node is a per-node part.
  out.spread = true;
  out.units = std::max(1, spec.ntasks);
  out.nodes_max = spec.nodes_max > 0 ? spec.nodes_max : out.units;
  out.need.gpus = spec.gpus_per_task;
  out.need.node_gpus = spec.gpus_per_node;
  out.need.cpus = cpus_for(spec, std::max(1, spec.cpus_per_task), spec.gpus_per_task);
  if (spec.mem_per_node_mib > 0) {
    out.need.node_mem = spec.mem_per_node_mib;
  } else {
    out.need.mem = mem(out.need.cpus, spec.gpus_per_task);
    if (!mem_default && spec.mem_per_cpu_mib == 0) out.need.node_mem = mem_for(spec, 0, spec.gpus_per_node);
  }
  out.need.max_units = out.units;
  out.need.cpus_magic = division_magic(out.need.cpus);
  return out;
}

}  // namespace hq
