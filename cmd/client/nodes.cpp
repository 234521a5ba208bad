// `hq nodes` / sinfo: partitions and node states in sinfo's default summary format.
#include <iostream>
#include <algorithm>
#include <map>

#include "cmd/client/output.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/hostlist.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::string short_state(const pb::Node& n) {
  static const std::map<std::string, std::string> names = {
      {"IDLE", "idle"},    {"MIXED", "mix"},      {"ALLOCATED", "alloc"},  {"DOWN", "down"},
      {"UNKNOWN", "unk"},  {"DRAINING", "drng"},  {"DRAINED", "drain"},    {"DOWN+DRAIN", "down"}};
  auto it = names.find(n.state());
  std::string s = it == names.end() ? n.state() : it->second;
  if (!n.responding() && n.state() != "UNKNOWN") s += "*";
  if (n.state() == "UNKNOWN") s += "*";
  return s;
}

// GPUs of a group of nodes by type, "in use/total": "nvidia_h100_80gb_hbm3:4/16"; "-" for none.
std::string gpu_column(const std::vector<const pb::Node*>& nodes) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> types;  // type -> (used, total)
  auto add = [&](const std::string& gres, bool used) {
    for (std::string_view entry : split(gres, ',')) {
      if (auto paren = entry.find('('); paren != std::string_view::npos) entry = entry.substr(0, paren);
      size_t colon = entry.rfind(':');
      if (colon == std::string_view::npos) continue;
      std::string type(entry.substr(0, colon));
      if (type.rfind("gpu:", 0) == 0) type = type.substr(4);
      else type = "gpu";
      auto n = parse_int(entry.substr(colon + 1), 0, 1 << 20);
      auto it = std::find_if(types.begin(), types.end(), [&](const auto& t) { return t.first == type; });
      if (it == types.end()) it = types.insert(types.end(), {type, {0, 0}});
      (used ? it->second.first : it->second.second) += n ? *n : 0;
    }
  };
  for (const pb::Node* n : nodes) {
    add(n->gres(), false);
    add(n->gres_used(), true);
  }
  std::string out;
  for (const auto& [type, c] : types)
    out += (out.empty() ? "" : ",") + type + ":" + std::to_string(c.first) + "/" + std::to_string(c.second);
  return out.empty() ? "-" : out;
}

// sinfo default: "%9P %5a %10l %6D %6t %N", one line per partition and state; `hq nodes`
// adds GPUS (in use/total by type) when the cluster has GPUs.
std::vector<const pb::Node*> nodes_of(const std::vector<std::string>& names,
                                      const std::map<std::string, const pb::Node*>& by_name) {
  std::vector<const pb::Node*> out;
  for (const auto& n : names)
    if (auto it = by_name.find(n); it != by_name.end()) out.push_back(it->second);
  return out;
}

void print_summary(const pb::NodesReply& r, bool gpus, bool header) {
  std::map<std::string, const pb::Node*> by_name;
  for (const auto& n : r.nodes()) by_name[n.name()] = &n;
  size_t pw = 9;
  for (const auto& p : r.partitions()) pw = std::max(pw, p.name().size() + 1);
  size_t nw = 8;
  for (const auto& p : r.partitions()) nw = std::max(nw, p.nodes().size());
  if (header)
    std::cout << field("PARTITION", static_cast<int>(pw), false) << " AVAIL  TIMELIMIT  NODES  STATE "
              << (gpus ? field("NODELIST", static_cast<int>(nw), false) + " GPUS(USED/TOTAL)" : "NODELIST") << "\n";
  for (const auto& p : r.partitions()) {
    auto names = expand_hostlist(p.nodes());
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const auto& name : names ? *names : std::vector<std::string>{}) {
      auto it = by_name.find(name);
      std::string st = it == by_name.end() ? "unk*" : short_state(*it->second);
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == st; });
      if (g == groups.end()) groups.push_back({st, {name}});
      else g->second.push_back(name);
    }
    for (const auto& [st, members] : groups) {
      std::string pname = p.name() + (p.is_default() ? "*" : "");
      std::string limit = p.max_time() < 0 ? "infinite" : format_limit(p.max_time());
      std::cout << field(pname, static_cast<int>(pw), false) << " " << field("up", 5) << " " << field(limit, 10) << " "
                << field(std::to_string(members.size()), 6) << " " << field(st, 6) << " "
                << (gpus ? field(compress_hostlist(members, HostlistOrder::kSorted), static_cast<int>(nw), false) + " " +
                               gpu_column(nodes_of(members, by_name))
                         : compress_hostlist(members, HostlistOrder::kSorted))
                << "\n";
    }
  }
}

}  // namespace

int run_nodes(const Args& args) {
  std::string prog = prog_name(args[0]);
  bool json = false, header = true;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") json = true;
    else if (args[i] == "-h" || args[i] == "--noheader") header = false;  // as sinfo's -h
    else if (args[i] == "--help" || args[i] == "--usage") {
      std::cout << "usage: hq nodes [-h|--noheader] [--json]\n";
      return 0;
    } else return fail(prog, invalid("unrecognized option '" + args[i] + "'"));
  }
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  pb::Envelope env;
  env.mutable_nodes();
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  if (json) return print_json(reply->nodes_reply()) ? 0 : 1;
  const auto& nodes = reply->nodes_reply().nodes();
  bool gpus = prog != "sinfo" && std::any_of(nodes.begin(), nodes.end(), [](const pb::Node& n) { return n.gpus() > 0; });
  print_summary(reply->nodes_reply(), gpus, header);
  return 0;
}

}  // namespace hq::cmd
