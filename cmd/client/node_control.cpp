// `hq control drain NODES --reason TEXT | resume NODES | delete [node] NODES`, and the
// scontrol forms `update NodeName=.. State=DRAIN|DOWN|RESUME Reason=.. Features=.. Weight=.. Topology=..` and
// `delete NodeName=..`, and `update PartitionName=.. State=.. MaxTime=.. DefaultTime=..`:
// node and partition administration for root and operators.
#include <map>
#include <optional>

#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

// "<prog>: error: ..." for each of the controller's errors; 1 when there were any.
int print_admin_reply(const std::string& prog, const Result<pb::NodeControlReply>& reply) {
  if (!reply) return fail(prog, reply.status());
  for (const auto& e : reply->errors()) hq::cerr() << prog << ": error: " << e << "\n";
  return reply->errors_size() > 0 ? 1 : 0;
}

int send_node_control(const std::string& prog, const std::string& action, const std::string& nodes,
                      const std::string& reason) {
  pb::Envelope env;
  auto* req = env.mutable_node_control();
  req->set_action(action);
  req->set_nodes(nodes);
  req->set_reason(reason);
  return print_admin_reply(prog, call_admin(env));
}

const char* const kNodeControlUsage =
    "usage: hq control drain NODES --reason TEXT   (no new jobs; running ones finish)\n"
    "       hq control resume NODES\n"
    "       hq control delete node NODES           (a node that joined dynamically)\n";

}  // namespace

int run_node_control(const Args& args) {
  std::string prog = "hq control";
  std::vector<std::string> words;
  std::string reason;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") return hq::cout() << kNodeControlUsage, 0;
    if (args[i] == "--reason" && i + 1 < args.size()) reason = args[++i];
    else if (args[i].rfind("--reason=", 0) == 0) reason = args[i].substr(9);
    else if (args[i].size() > 1 && args[i][0] == '-') return reject_option(prog, args[i]);
    else words.push_back(args[i]);
  }
  if (words.size() == 3 && words[0] == "delete" && words[1] == "node") words.erase(words.begin() + 1);
  if (words.size() != 2) return hq::cerr() << kNodeControlUsage, 2;
  return send_node_control(prog, words[0], words[1], reason);
}

namespace {

// Slurm's node states that hq has no counterpart for (`state` in lower case), and why.
std::string unsupported_state(const std::string& state) {
  if (state.rfind("power_", 0) == 0) return "hq has no power saving: State=" + state + " is not supported";
  if (state == "future") return "State=FUTURE is not supported: a node that is not there yet joins by registering";
  return "Invalid node state specified";
}

// Features= (or AvailableFeatures=/ActiveFeatures=: hq has no changeable features) and
// Weight=, sent as one update.
int send_node_attributes(const std::string& nodes, const std::optional<std::string>& features,
                         const std::optional<std::string>& weight, const std::optional<std::string>& topology) {
  pb::Envelope env;
  auto* req = env.mutable_node_control();
  req->set_action("update");
  req->set_nodes(nodes);
  if (features) {
    req->set_set_features(true);
    for (std::string_view f : split(*features, ','))
      if (!f.empty()) req->add_features(std::string(f));
  }
  if (weight) {
    auto w = parse_int(*weight, 0, INT32_MAX);
    if (!w) return fail("scontrol", invalid("Invalid weight: " + *weight));
    req->set_set_weight(true);
    req->set_weight(static_cast<int32_t>(*w));
  }
  if (topology) {  // Slurm 25.05's Topology=[NAME:]UNIT: the controller checks the name
    req->set_set_block(true);
    req->set_block(*topology);
  }
  return print_admin_reply("scontrol", call_admin(env));
}

}  // namespace

int scontrol_node_update(const Args& args) {
  std::string nodes, state, reason;
  std::optional<std::string> features, weight, topology;
  for (size_t i = 2; i < args.size(); ++i) {
    std::string_view a = args[i];
    size_t eq = a.find('=');
    std::string key = to_lower(a.substr(0, eq)), value(eq == std::string_view::npos ? "" : a.substr(eq + 1));
    if (key == "nodename") nodes = value;
    else if (key == "state") state = to_lower(value);
    else if (key == "reason") reason = value;
    else if (key == "features" || key == "availablefeatures" || key == "activefeatures") features = value;
    else if (key == "weight") weight = value;
    else if (key == "topology") topology = value;
    else return fail("scontrol", invalid("Update of this parameter is not supported: " + std::string(a)));
  }
  if (nodes.empty()) return fail("scontrol", invalid("No valid node name specified"));
  if (args[1] == "delete") return send_node_control("scontrol", "delete", nodes, "");
  // State= words and the node action each is (DOWN and DRAIN take the Reason=).
  static const std::map<std::string, std::string> kActions = {
      {"drain", "drain"}, {"down", "down"}, {"resume", "resume"}, {"idle", "resume"}, {"undrain", "resume"}};
  auto action = kActions.find(state);
  if (!state.empty() && action == kActions.end()) return fail("scontrol", invalid(unsupported_state(state)));
  if (features || weight || topology) {
    if (int rc = send_node_attributes(nodes, features, weight, topology); rc != 0 || state.empty()) return rc;
  }
  if (state.empty())
    return fail("scontrol", invalid("supported node updates: State=DOWN or DRAIN (with Reason=), RESUME; Features=, Weight=, Topology="));
  return send_node_control("scontrol", action->second, nodes, action->second == "resume" ? "" : reason);
}

int scontrol_partition_update(const Args& args) {
  pb::Envelope env;
  auto* req = env.mutable_partition_update();
  for (size_t i = 2; i < args.size(); ++i) {
    if (to_lower(args[i].substr(0, args[i].find('='))) == "partitionname") req->set_partition(args[i].substr(args[i].find('=') + 1));
    else req->add_settings(args[i]);
  }
  if (req->partition().empty()) return fail("scontrol", invalid("No valid partition name specified"));
  return print_admin_reply("scontrol", call_admin(env));
}

}  // namespace hq::cmd
