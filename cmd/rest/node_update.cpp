// POST /slurm/v0.0.43/node/{name} (and /nodes/ with "name"): an update_node_msg body read
// into the node_control requests scontrol update NodeName= would send: a state change
// (DRAIN, DOWN with a reason; RESUME, UNDRAIN, IDLE) and Features=, Weight=, Topology=.
// One thread.
#include "cmd/rest/body.hpp"

namespace hq::cmd {
namespace {

RestError bad_state(std::string description) {
  return rest_error(422, slurm_errno::kInvalidNodeState, "Invalid node state specified", std::move(description));
}

// The action a state list asks for ("" none): drain, down or resume.
bool state_action(const std::vector<std::string>& states, std::string& action, RestError* error) {
  for (const std::string& s : states) {
    std::string a = s == "DRAIN" ? "drain" : s == "DOWN" ? "down" : (s == "RESUME" || s == "UNDRAIN" || s == "IDLE") ? "resume" : "";
    if (a.empty()) return *error = bad_state("state " + s + ": hq sets DRAIN, DOWN, RESUME, UNDRAIN or IDLE"), false;
    if (!action.empty() && action != a) return *error = bad_state("state: " + action + " and " + a + " at once"), false;
    action = a;
  }
  return true;
}

}  // namespace

Result<RestNodeUpdate> rest_parse_node_update(std::string_view body, const std::string& nodes, RestError* error) {
  google::protobuf::Struct root;
  if (!rest::parse_object(body, root, error)) return invalid(error->description);
  rest::Fields f(root, "node");
  std::vector<std::string> states, features, names;
  std::string reason, topology;
  int64_t weight = 0;
  if (!f.strings("state", states) || !f.str("reason", reason) || !f.strings("features", features) ||
      !f.integer("weight", weight, 0, 2147483647) || !f.str("topology_str", topology) || !f.strings("name", names)) {
    *error = rest::parse_error(f.error());
    return invalid(error->description);
  }
  std::string target = nodes;
  if (nodes.empty())
    target = rest::joined(names);
  if (target.empty()) {
    *error = rest::parse_error("no node named: POST /nodes/ needs \"name\"");
    return invalid(error->description);
  }
  std::string action;
  if (!state_action(states, action, error)) return invalid(error->description);
  if ((action == "drain" || action == "down") && reason.empty()) {
    *error = bad_state("You must specify a reason when DOWNING or DRAINING a node");
    return invalid(error->description);
  }
  RestNodeUpdate out;
  if (!action.empty()) {
    pb::NodeControlRequest& r = out.requests.emplace_back();
    r.set_action(action);
    r.set_nodes(target);
    r.set_reason(reason);
  }
  if (f.has("features") || f.has("weight") || f.has("topology_str")) {
    pb::NodeControlRequest& r = out.requests.emplace_back();
    r.set_action("update");
    r.set_nodes(target);
    if (f.has("features")) {
      r.set_set_features(true);
      for (auto& x : features) r.add_features(x);
    }
    if (f.has("weight")) r.set_set_weight(true), r.set_weight(static_cast<int32_t>(weight));
    if (f.has("topology_str")) r.set_set_block(true), r.set_block(topology);
  }
  if (!action.empty() || !reason.empty()) f.note("reason");
  f.add_unread(out.warnings);
  if (out.requests.empty()) out.warnings.push_back("Nothing to change: the body sets no state, features, weight or topology");
  return out;
}

}  // namespace hq::cmd
