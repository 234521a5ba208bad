// Journal and snapshot records of nodes (NodeRegistered, NodeDownChanged, NodeRemoved,
// NodeUpdated)
// and of advance reservations, declared in convert.hpp. Pure functions; thread-safe.
#include "net/convert.hpp"

#include <algorithm>

#include "core/hostlist.hpp"

namespace hq::net {

pb::NodeRegisteredEvent to_pb(const NodeRegistered& e) {
  pb::NodeRegisteredEvent p;
  p.set_node(e.node);
  p.set_time(e.time);
  p.set_cpus(e.cpus);
  p.set_mem_mib(e.mem_mib);
  for (const auto& g : e.gpus) {
    auto* pg = p.add_gpus();
    pg->set_type(g.type);
    pg->set_cpus(g.cpus);
  }
  for (const auto& f : e.features) p.add_features(f);
  p.set_block(e.block);
  p.set_switch_name(e.switch_name);
  p.set_boot_time(e.boot_time);
  p.set_join(e.join);
  p.set_threads_per_core(e.threads_per_core);
  return p;
}

Result<NodeRegistered> from_pb(const pb::NodeRegisteredEvent& p) {
  if (p.node().empty()) return invalid("node registration without a node");
  if (p.cpus() < 0 || p.mem_mib() < 0) return invalid("node " + p.node() + ": negative size in its registration");
  NodeRegistered e{p.node(), p.time(), p.cpus(), p.mem_mib(), {}, {p.features().begin(), p.features().end()},
                   p.block(), p.switch_name(), p.boot_time(), p.join(), p.threads_per_core()};
  for (const auto& g : p.gpus()) e.gpus.push_back({g.type(), g.cpus()});
  return e;
}

pb::NodeDownEvent to_pb(const NodeDownChanged& e) {
  pb::NodeDownEvent p;
  p.set_node(e.node);
  p.set_time(e.time);
  p.set_down(e.down);
  p.set_reason(e.reason);
  return p;
}

Result<NodeDownChanged> from_pb(const pb::NodeDownEvent& p) {
  if (p.node().empty()) return invalid("node down event without a node");
  return NodeDownChanged{p.node(), p.time(), p.down(), p.reason()};
}

pb::NodeRemovedEvent to_pb(const NodeRemoved& e) {
  pb::NodeRemovedEvent p;
  p.set_node(e.node);
  p.set_time(e.time);
  return p;
}

Result<NodeRemoved> from_pb(const pb::NodeRemovedEvent& p) {
  if (p.node().empty()) return invalid("node removal without a node");
  return NodeRemoved{p.node(), p.time()};
}

pb::NodeUpdatedEvent to_pb(const NodeUpdated& e) {
  pb::NodeUpdatedEvent p;
  p.set_node(e.node);
  p.set_time(e.time);
  p.set_set_features(e.features.has_value());
  if (e.features) for (const auto& f : *e.features) p.add_features(f);
  p.set_set_weight(e.weight.has_value());
  if (e.weight) p.set_weight(*e.weight);
  p.set_set_block(e.block.has_value());
  if (e.block) p.set_block(*e.block);
  return p;
}

Result<NodeUpdated> from_pb(const pb::NodeUpdatedEvent& p) {
  if (p.node().empty()) return invalid("node update without a node");
  if (p.set_weight() && p.weight() < 0) return invalid("node " + p.node() + ": negative weight in its update");
  NodeUpdated e{p.node(), p.time(), std::nullopt, std::nullopt};
  if (p.set_features()) e.features = std::vector<std::string>(p.features().begin(), p.features().end());
  if (p.set_weight()) e.weight = p.weight();
  if (p.set_block()) e.block = p.block();
  return e;
}

pb::AdvanceReservation to_pb(const AdvanceReservation& r) {
  pb::AdvanceReservation p;
  p.set_name(r.name);
  p.set_id(r.id);
  p.set_start(r.start);
  p.set_end(r.end);
  for (const auto& n : r.nodes) p.add_nodes(n);
  for (const auto& u : r.users) p.add_users(u);
  for (const auto& a : r.accounts) p.add_accounts(a);
  p.set_partition(r.partition);
  p.set_flags(r.flags);
  return p;
}

Result<AdvanceReservation> from_pb(const pb::AdvanceReservation& p) {
  if (p.name().empty()) return invalid("reservation without a name");
  AdvanceReservation r{p.name(), p.id(), p.start(), p.end(), {p.nodes().begin(), p.nodes().end()},
                       {p.users().begin(), p.users().end()}, {p.accounts().begin(), p.accounts().end()},
                       p.partition(), p.flags()};
  std::sort(r.nodes.begin(), r.nodes.end(), natural_less);  // holds() searches them
  return r;
}

void add_nodes(const ClusterState& s, pb::StateSnapshot& out) {
  for (const auto& [name, n] : s.nodes) {
    // What the node is now, as a registration: replaying it resolves to the same node.
    *out.add_nodes() = to_pb(NodeRegistered{name, 0, n.cpus, n.mem_mib, n.gpus, n.features, n.block,
                                            n.switch_name, n.boot_time, n.dynamic, n.threads_per_core});
    if (n.down) *out.add_down() = to_pb(NodeDownChanged{name, 0, true, n.down_reason});
    if (n.operator_features || n.operator_weight || !n.operator_block.empty())
      *out.add_node_updates() = to_pb(NodeUpdated{name, 0, n.operator_features ? std::optional(n.features) : std::nullopt,
                                                  n.operator_weight ? std::optional(n.weight) : std::nullopt,
                                                  n.operator_block.empty() ? std::nullopt : std::optional(n.operator_block)});
  }
}

Status restore_nodes(const pb::StateSnapshot& p, ClusterState& s) {
  for (const auto& pn : p.nodes()) {
    auto e = from_pb(pn);
    if (!e) return e.status().with_context("snapshot");
    hq::apply(s, *e);
  }
  for (const auto& pd : p.down()) {
    auto e = from_pb(pd);
    if (!e) return e.status().with_context("snapshot");
    hq::apply(s, *e);
  }
  for (const auto& pu : p.node_updates()) {
    auto e = from_pb(pu);
    if (!e) return e.status().with_context("snapshot");
    hq::apply(s, *e);
  }
  return Status::ok();
}

}  // namespace hq::net
