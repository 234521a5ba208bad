#include "core/node.hpp"

namespace hq {

std::string node_state_name(const Node& n) {
  if (n.down) return "DOWN";
  if (!n.registered) return "UNKNOWN";
  if (n.alloc_cpus == 0 && n.jobs.empty()) return "IDLE";
  if (n.alloc_cpus >= n.cpus) return "ALLOCATED";
  return "MIXED";
}

bool node_schedulable(const Node& n) { return n.registered && n.responding && !n.down; }

}  // namespace hq
