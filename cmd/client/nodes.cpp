// `hq nodes` / sinfo: partitions and node states in sinfo's default summary format.
#include <iostream>
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
      {"IDLE", "idle"}, {"MIXED", "mix"}, {"ALLOCATED", "alloc"}, {"DOWN", "down"}, {"UNKNOWN", "unk"}};
  auto it = names.find(n.state());
  std::string s = it == names.end() ? n.state() : it->second;
  if (!n.responding() && n.state() != "UNKNOWN") s += "*";
  if (n.state() == "UNKNOWN") s += "*";
  return s;
}

// sinfo default: "%9P %5a %10l %6D %6t %N", one line per partition and state.
void print_summary(const pb::NodesReply& r) {
  std::map<std::string, const pb::Node*> by_name;
  for (const auto& n : r.nodes()) by_name[n.name()] = &n;
  size_t pw = 9;
  for (const auto& p : r.partitions()) pw = std::max(pw, p.name().size() + 1);
  std::cout << field("PARTITION", static_cast<int>(pw), false) << " AVAIL  TIMELIMIT  NODES  STATE NODELIST\n";
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
                << compress_hostlist(members, HostlistOrder::kSorted) << "\n";
    }
  }
}

}  // namespace

int run_nodes(const Args& args) {
  std::string prog = prog_name(args[0]);
  bool json = false;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--json") json = true;
    else if (args[i] == "-h" || args[i] == "--help") {
      std::cout << "usage: hq nodes [--json]\n";
      return 0;
    } else return fail(prog, invalid("unrecognized option '" + args[i] + "'"));
  }
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  pb::Envelope env;
  env.mutable_nodes();
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  if (json) print_json(reply->nodes_reply());
  else print_summary(reply->nodes_reply());
  return 0;
}

}  // namespace hq::cmd
