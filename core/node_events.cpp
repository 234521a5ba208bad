// Node decisions (see node_events.hpp). Pure.
#include "core/node_events.hpp"

namespace hq {

std::vector<Event> registration_events(const ClusterState& s, const NodeRegistered& report, int32_t return_to_service) {
  std::vector<Event> out{report};
  auto it = s.nodes.find(report.node);
  const Node* n = it == s.nodes.end() ? nullptr : &it->second;
  bool down = n && n->down;
  if (down && n->down_reason == kNotResponding && return_to_service == 0) return out;  // stays DOWN
  if (down && !controller_down_reason(n->down_reason)) return out;  // an operator's DOWN: until resumed
  auto gpus = reconcile_gpus(n ? n->config_gres : std::vector<GresCount>{}, report.gpus);
  if (!gpus) out.push_back(NodeDownChanged{report.node, report.time, true, gpus.status().message()});
  else if (down) out.push_back(NodeDownChanged{report.node, report.time, false, ""});
  return out;
}

bool returns_to_service(const Node& n, int32_t return_to_service) {
  return n.down && n.down_reason == kNotResponding && return_to_service > 0;
}

bool fell_silent(const Node& n, Time now, Time started_at, Duration timeout) {
  if (n.down) return false;
  return n.registered ? now - n.last_heard > timeout : !n.jobs.empty() && now - started_at > timeout;
}

}  // namespace hq
