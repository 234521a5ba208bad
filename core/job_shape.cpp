#include "core/job_shape.hpp"

#include <algorithm>

#include "core/placement.hpp"

namespace hq {

JobShape job_shape(const JobSpec& spec, const PartitionConfig& part, int32_t duration_slots) {
  JobShape out;
  out.need.slots = duration_slots;
  out.need.whole_node = spec.exclusive || part.exclusive;
  int32_t cpt = std::max(1, spec.cpus_per_task);
  int64_t mem_per_cpu = spec.mem_per_cpu_mib;
  if (spec.mem_per_node_mib == 0 && mem_per_cpu == 0) mem_per_cpu = part.def_mem_per_cpu_mib;
  if (auto fixed = fixed_shape(spec)) {
    out.units = fixed->nodes;
    out.nodes_max = std::max(fixed->nodes, spec.nodes_max);
    out.tasks_per_node = fixed->tasks_per_node;
    out.need.cpus = fixed->cpus_per_node;
    out.need.mem = spec.mem_per_node_mib > 0 ? spec.mem_per_node_mib : mem_per_cpu * fixed->cpus_per_node;
    out.need.max_units = 1;
    out.need.cpus_magic = division_magic(out.need.cpus);
    return out;
  }
  out.spread = true;
  out.units = std::max(1, spec.ntasks);
  out.nodes_max = spec.nodes_max > 0 ? spec.nodes_max : out.units;
  out.need.cpus = cpt;
  out.need.mem = mem_per_cpu * cpt;
  out.need.node_mem = spec.mem_per_node_mib;
  out.need.max_units = out.units;
  out.need.cpus_magic = division_magic(out.need.cpus);
  return out;
}

}  // namespace hq
