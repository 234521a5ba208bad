#include "core/placement.hpp"

#include <algorithm>

namespace hq {

bool wants_gpus(const JobSpec& spec) { return spec.gpus > 0 || spec.gpus_per_node > 0 || spec.gpus_per_task > 0; }

int64_t mem_for(const JobSpec& spec, int32_t cpus, int32_t gpus) {
  if (spec.mem_per_node_mib > 0) return spec.mem_per_node_mib;
  if (spec.mem_per_cpu_mib > 0) return spec.mem_per_cpu_mib * cpus;
  return spec.mem_per_gpu_mib * gpus;
}

int32_t cpus_for(const JobSpec& spec, int32_t cpus, int32_t gpus) {
  return spec.cpus_per_gpu > 0 ? std::max<int32_t>(cpus, spec.cpus_per_gpu * gpus) : cpus;
}

namespace {

NodeShape shape_of(const JobSpec& spec, int32_t nodes, int32_t tpn) {
  int32_t gpn = spec.gpus_per_task * tpn + spec.gpus_per_node + (spec.gpus + nodes - 1) / nodes;
  int32_t cpus = cpus_for(spec, tpn * std::max(1, spec.cpus_per_task), gpn);
  return NodeShape{nodes, tpn, cpus, mem_for(spec, cpus, gpn), gpn};
}

}  // namespace

std::optional<NodeShape> fixed_shape(const JobSpec& spec) {
  int32_t n = std::max(1, spec.ntasks);
  if (spec.ntasks_per_node > 0) {
    int32_t nodes = std::max(spec.nodes_min, (n + spec.ntasks_per_node - 1) / spec.ntasks_per_node);
    int32_t tpn = spec.ntasks_set ? (n + nodes - 1) / nodes : spec.ntasks_per_node;
    return shape_of(spec, nodes, tpn);
  }
  if (!spec.nodes_set && spec.ntasks_set && n > 1 && spec.gpus == 0) return std::nullopt;
  int32_t nodes = std::max(1, spec.nodes_min);
  return shape_of(spec, nodes, std::max(1, (n + nodes - 1) / nodes));
}

bool only_listed_nodes(const JobSpec& spec, size_t listed) {
  auto fixed = fixed_shape(spec);
  return !fixed || static_cast<size_t>(fixed->nodes) <= listed;
}

}  // namespace hq
