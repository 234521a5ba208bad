#include "core/placement.hpp"

#include <algorithm>

namespace hq {

int64_t mem_for_cpus(const JobSpec& spec, int32_t cpus) {
  if (spec.mem_per_node_mib > 0) return spec.mem_per_node_mib;
  return spec.mem_per_cpu_mib * cpus;
}

std::optional<NodeShape> fixed_shape(const JobSpec& spec) {
  int32_t c = std::max(1, spec.cpus_per_task);
  int32_t n = std::max(1, spec.ntasks);
  if (spec.ntasks_per_node > 0) {
    int32_t nodes = std::max(spec.nodes_min, (n + spec.ntasks_per_node - 1) / spec.ntasks_per_node);
    int32_t tpn = spec.ntasks_set ? (n + nodes - 1) / nodes : spec.ntasks_per_node;
    return NodeShape{nodes, tpn, tpn * c, mem_for_cpus(spec, tpn * c)};
  }
  if (!spec.nodes_set && spec.ntasks_set && n > 1) return std::nullopt;
  int32_t nodes = std::max(1, spec.nodes_min);
  int32_t tpn = std::max(1, (n + nodes - 1) / nodes);
  return NodeShape{nodes, tpn, tpn * c, mem_for_cpus(spec, tpn * c)};
}

namespace {

std::vector<NodeAlloc> place_fixed(const NodeShape& s, const std::vector<FreeNode>& nodes) {
  std::vector<NodeAlloc> out;
  for (const auto& n : nodes) {
    if (n.free_cpus >= s.cpus_per_node && n.free_mem_mib >= s.mem_per_node_mib) {
      out.push_back({n.name, s.cpus_per_node, s.mem_per_node_mib, s.tasks_per_node});
      if (static_cast<int32_t>(out.size()) == s.nodes) return out;
    }
  }
  return {};
}

// -n without -N: prefer one node holding every task, else spread tasks greedily.
std::vector<NodeAlloc> place_spread(const JobSpec& spec, const std::vector<FreeNode>& nodes) {
  int32_t c = std::max(1, spec.cpus_per_task);
  NodeShape whole{1, spec.ntasks, spec.ntasks * c, mem_for_cpus(spec, spec.ntasks * c)};
  if (auto one = place_fixed(whole, nodes); !one.empty()) return one;
  std::vector<NodeAlloc> out;
  int32_t left = spec.ntasks;
  for (const auto& n : nodes) {
    int32_t by_cpu = n.free_cpus / c;
    int32_t tasks = std::min(left, by_cpu);
    while (tasks > 0 && mem_for_cpus(spec, tasks * c) > n.free_mem_mib) --tasks;
    if (tasks <= 0) continue;
    out.push_back({n.name, tasks * c, mem_for_cpus(spec, tasks * c), tasks});
    left -= tasks;
    if (left == 0) break;
  }
  int32_t max_nodes = spec.nodes_max > 0 ? spec.nodes_max : 0;
  if (left > 0 || (max_nodes > 0 && static_cast<int32_t>(out.size()) > max_nodes)) return {};
  return out;
}

}  // namespace

std::vector<NodeAlloc> place_first_fit(const JobSpec& spec, const std::vector<FreeNode>& nodes) {
  if (auto shape = fixed_shape(spec)) return place_fixed(*shape, nodes);
  return place_spread(spec, nodes);
}

}  // namespace hq
