// Controller side of `hq control drain|resume|delete` and scontrol's node updates:
// operators take nodes out of service (drain: running jobs finish, nothing new starts;
// down), put them back, set their features and weight, or remove a node that joined
// dynamically; and drains that nodes' health checks, prologs and
// epilogs ask for. Drains, resumes and deletions are journaled, so they survive restarts.
// Runs on the controller's event-loop thread.
#include "cmd/controller/controller.hpp"

#include <unistd.h>

#include <algorithm>

#include "core/hostlist.hpp"
#include "core/hostlist_functions.hpp"
#include "core/partition_update.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// Topology=[NAME:]UNIT (Slurm 25.05): a block topology's name (none: the cluster
// default) and a block name a hostlist function can name.
Result<std::pair<const TopologyConfig*, std::string>> topology_move(const ClusterState& s, const std::string& value) {
  size_t colon = value.find(':');
  std::string name = colon == std::string::npos ? "" : value.substr(0, colon);
  std::string unit = colon == std::string::npos ? value : value.substr(colon + 1);
  const TopologyConfig* t = topology_named(s, name);
  if (!t) return invalid("Invalid topology name: " + name + " (no [[topology]] has that name)");
  if (!t->switches.empty() || t->flat)
    return invalid("Topology=" + value + ": topology " + t->name + " has no blocks (hq moves nodes between blocks only)");
  if (unit.empty() || unit.size() > 64 || unit.find_first_of(",{}[]:= \t\n") != std::string::npos)
    return invalid("Invalid topology unit: '" + unit + "'");
  return std::pair{t, unit};
}

// Features=, Weight= and Topology= as scontrol sends them: names without commas or blanks, a
// weight from 0 (Slurm's range), a move to a block, and something to set.
Status check_node_update(const ClusterState& s, const pb::NodeControlRequest& req) {
  if (!req.set_features() && !req.set_weight() && !req.set_block())
    return invalid("Update of node: nothing to change (Features=, Weight= or Topology=)");
  if (req.set_block())
    if (auto move = topology_move(s, req.block()); !move) return move.status();
  for (const auto& f : req.features())
    if (f.empty() || f.find_first_of(", \t\n|&") != std::string::npos)
      return invalid("Invalid feature specification: '" + f + "'");
  if (req.set_weight() && req.weight() < 0) return invalid("Invalid weight: " + std::to_string(req.weight()));
  return Status::ok();
}

// The update; a move as the one label entry it sets (applying it replaces the node's entry
// for that topology alone; checked above).
NodeUpdated node_update_of(const ClusterState& s, const pb::NodeControlRequest& req, const Node& node, Time now) {
  NodeUpdated e{node.name, now, std::nullopt, std::nullopt};
  if (req.set_features()) e.features = std::vector<std::string>(req.features().begin(), req.features().end());
  if (req.set_weight()) e.weight = req.weight();
  if (req.set_block())
    if (auto move = topology_move(s, req.block()))
      e.block = label_with_unit("", move->first->name, move->first == &s.topology, move->second);
  return e;
}

}  // namespace

void Controller::node_control(const pb::NodeControlRequest& req, const net::Identity& who,
                              std::function<void(pb::NodeControlReply)> reply) {
  if (req.action() == "reconfigure") return reply(reconfigure(who));
  pb::NodeControlReply out;
  const std::string& action = req.action();
  auto names = expand_node_list(state_, req.nodes());  // hostlist functions too
  if (!is_admin(who)) out.add_errors("Access/permission denied: only root and operators may " + action + " nodes");
  else if (action != "drain" && action != "resume" && action != "delete" && action != "down" && action != "update")
    out.add_errors("unknown node action '" + action + "'");
  else if (!names) out.add_errors("Invalid node name specified: '" + req.nodes() + "' (" + names.status().message() + ")");
  else if (names->empty()) out.add_errors("Invalid node name specified: '" + req.nodes() + "'");
  else if ((action == "drain" || action == "down") && req.reason().empty())
    out.add_errors("You must specify a reason when DOWNING or DRAINING a node. Request denied");
  else if (action == "update") {
    if (Status s = check_node_update(state_, req); !s) out.add_errors(s.message());
  }
  if (out.errors_size() > 0) return reply(std::move(out));
  std::vector<Event> events;
  std::vector<std::string> deleted, downed;
  for (const auto& name : *names) {
    auto it = state_.nodes.find(name);
    if (it == state_.nodes.end()) {
      out.add_errors("Invalid node name specified: " + name);
      continue;
    }
    if (action == "update") {
      events.push_back(node_update_of(state_, req, it->second, now()));
    } else if (action == "delete") {
      if (Status s = check_removable(state_, name); !s) {
        out.add_errors(s.message());
        continue;
      }
      events.push_back(NodeRemoved{name, now()});
      deleted.push_back(name);
    } else if (action == "down") {  // scontrol State=DOWN: its jobs are killed (requeued where they may be)
      events.push_back(NodeDownChanged{name, now(), true, req.reason()});
      downed.push_back(name);
    } else {
      // Back from DOWN: an operator's, or a silent node's (return_to_service = 0 keeps those
      // down until this) once it answers again.
      if (action == "resume" && it->second.down && (it->second.down_reason != kNotResponding || it->second.responding))
        events.push_back(NodeDownChanged{name, now(), false, ""});
      events.push_back(NodeDrainChanged{name, now(), action == "drain", req.reason(), who.uid});
    }
    log::info("node " + name + ": " + action + " by uid " + std::to_string(who.uid) +
              (req.reason().empty() ? "" : " (" + req.reason() + ")"));
    out.add_done(name);
  }
  for (auto& e : events) record(std::move(e));
  for (const auto& name : downed) end_jobs_on_node(name, JobState::kNodeFail, JobReason::kNodeDown, true);
  when_durable([this, reply, out = std::move(out), deleted = std::move(deleted)](const Status&) {
    for (const auto& name : deleted) disconnect_deleted(name);
    reply(out);
  });
  request_schedule();
}

void Controller::update_partition(const pb::PartitionUpdateRequest& req, const net::Identity& who,
                                  std::function<void(pb::NodeControlReply)> reply) {
  pb::NodeControlReply out;
  auto it = std::find_if(state_.partitions.begin(), state_.partitions.end(),
                         [&](const PartitionConfig& p) { return p.name == req.partition(); });
  if (!is_admin(who)) out.add_errors("Access/permission denied");
  else if (it == state_.partitions.end()) out.add_errors("Invalid partition name specified");
  if (out.errors_size() > 0) return reply(std::move(out));
  auto e = parse_partition_update(*it, {req.settings().begin(), req.settings().end()}, now());
  if (!e) {
    out.add_errors(e.status().message());
    return reply(std::move(out));
  }
  log::info("partition " + req.partition() + ": updated by uid " + std::to_string(who.uid) + " (state " +
            std::string(partition_state_name(e->state)) + ")");
  out.add_done(req.partition());
  record(std::move(*e));
  when_durable([reply, out = std::move(out)](const Status&) { reply(out); });
  request_schedule();
}

// A deleted node's agent is let go (once the deletion is durable), unless it joined again.
void Controller::disconnect_deleted(const std::string& name) {
  auto a = agents_.find(name);
  if (a == agents_.end() || state_.nodes.count(name)) return;
  a->second->close("node deleted");
  agents_.erase(a);
}

void Controller::agent_health(const std::string& name, const pb::NodeHealth& h) {
  auto it = state_.nodes.find(name);
  if (it == state_.nodes.end()) return;
  static const std::string kHealthPrefix = "health check failed";
  auto drained = state_.drained.find(name);
  if (!h.ok()) {
    if (drained != state_.drained.end()) return;  // already out of service; keep the first reason
    std::string reason = h.source() + " failed: " + h.message().substr(0, 200);
    log::warn("node " + name + " drained: " + reason);
    record(NodeDrainChanged{name, now(), true, reason, static_cast<uint32_t>(::getuid())});
    return;
  }
  if (h.source() == "health check" && drained != state_.drained.end() && drained->second.reason.rfind(kHealthPrefix, 0) == 0) {
    log::info("node " + name + ": health check passes again; drain lifted");
    record(NodeDrainChanged{name, now(), false, ""});
    request_schedule();
  }
}

}  // namespace hq::cmd
