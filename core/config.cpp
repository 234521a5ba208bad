#include "core/config.hpp"

#include <set>

namespace hq {

Status validate_config(const ClusterConfig& c) {
  std::set<std::string> nodes;
  for (const auto& n : c.nodes) {
    for (const auto& name : n.names) {
      if (!nodes.insert(name).second) return invalid("node '" + name + "' is declared twice");
    }
  }
  std::set<std::string> parts;
  int defaults = 0;
  for (const auto& p : c.partitions) {
    if (!parts.insert(p.name).second) return invalid("partition '" + p.name + "' is declared twice");
    if (p.is_default) ++defaults;
    for (const auto& name : p.nodes) {
      if (!nodes.count(name))
        return invalid("partition '" + p.name + "' names node '" + name + "', which no [[node]] declares");
    }
  }
  if (defaults > 1) return invalid("more than one partition has default = true");
  if (c.node_timeout <= 0) return invalid("node_timeout must be positive");
  if (c.heartbeat_interval <= 0) return invalid("heartbeat_interval must be positive");
  return Status::ok();
}

const PartitionConfig* find_partition(const ClusterConfig& c, const std::string& name) {
  for (const auto& p : c.partitions)
    if (p.name == name) return &p;
  return nullptr;
}

const PartitionConfig* default_partition(const ClusterConfig& c) {
  for (const auto& p : c.partitions)
    if (p.is_default) return &p;
  return c.partitions.empty() ? nullptr : &c.partitions.front();
}

const NodeConfig* find_node_config(const ClusterConfig& c, const std::string& node) {
  for (const auto& nc : c.nodes)
    for (const auto& n : nc.names)
      if (n == node) return &nc;
  return nullptr;
}

}  // namespace hq
