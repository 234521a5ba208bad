// Controller side of `hq control drain|resume|delete`: operators take nodes out of
// service (drain: running jobs finish, nothing new starts), put them back, or remove a
// node that joined dynamically; and drains that nodes' health checks, prologs and
// epilogs ask for. Drains are journaled, so they survive restarts.
// Runs on the controller's event-loop thread.
#include "cmd/controller/controller.hpp"
#include "core/hostlist.hpp"
#include "net/log.hpp"

namespace hq::cmd {

void Controller::node_control(const pb::NodeControlRequest& req, const net::Identity& who,
                              std::function<void(pb::NodeControlReply)> reply) {
  pb::NodeControlReply out;
  const std::string& action = req.action();
  auto names = expand_hostlist(req.nodes());
  if (!is_admin(who)) out.add_errors("Access/permission denied: only root and operators may " + action + " nodes");
  else if (action != "drain" && action != "resume" && action != "delete") out.add_errors("unknown node action '" + action + "'");
  else if (!names || names->empty()) out.add_errors("Invalid node name specified: '" + req.nodes() + "'");
  else if (action == "drain" && req.reason().empty()) out.add_errors("You must specify a reason when draining a node");
  if (out.errors_size() > 0) return reply(std::move(out));
  std::vector<Event> events;
  for (const auto& name : *names) {
    auto it = state_.nodes.find(name);
    if (it == state_.nodes.end()) {
      out.add_errors("Invalid node name specified: " + name);
      continue;
    }
    if (action == "delete") {
      if (!it->second.dynamic) {
        out.add_errors("node " + name + " is in the config; remove it there (only dynamic nodes can be deleted)");
      } else if (Status s = remove_node(state_, name); !s) {
        out.add_errors(s.message());
      } else {
        if (auto a = agents_.find(name); a != agents_.end()) {
          a->second->close("node deleted");
          agents_.erase(a);
        }
        log::info("node " + name + " deleted by uid " + std::to_string(who.uid));
        out.add_done(name);
      }
      continue;
    }
    if (action == "resume" && it->second.down && it->second.reason == kNotResponding && it->second.responding) {
      it->second.down = false;  // back from DOWN (return_to_service = 0 keeps silent nodes down until this)
      it->second.reason.clear();
    }
    events.push_back(NodeDrainChanged{name, now(), action == "drain", req.reason()});
    log::info("node " + name + ": " + action + " by uid " + std::to_string(who.uid) +
              (req.reason().empty() ? "" : " (" + req.reason() + ")"));
    out.add_done(name);
  }
  if (events.empty()) return reply(std::move(out));
  for (size_t i = 0; i < events.size(); ++i) {
    bool last = i + 1 == events.size();
    record(std::move(events[i]), last ? std::function<void(const Status&)>([reply, out](const Status&) { reply(out); })
                                      : std::function<void(const Status&)>());
  }
  request_schedule();
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
    record(NodeDrainChanged{name, now(), true, reason});
    return;
  }
  if (h.source() == "health check" && drained != state_.drained.end() && drained->second.rfind(kHealthPrefix, 0) == 0) {
    log::info("node " + name + ": health check passes again; drain lifted");
    record(NodeDrainChanged{name, now(), false, ""});
    request_schedule();
  }
}

}  // namespace hq::cmd
