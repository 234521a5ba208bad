// Node events through apply() (registration, DOWN and back, removal; stale ones change
// nothing) and the rules that decide them (core/node_events.hpp).
#include <doctest/doctest.h>

#include "builders.hpp"
#include "core/node_events.hpp"

using namespace hq;
using hq::test::cluster;

namespace {

// g1: 2 configured h100s, memory given, CPUs left to the agent, feature "ib".
ClusterState gpu_cluster() {
  ClusterConfig config = uniform_cluster_config({"g1"}, 0, 4096, "batch");
  config.nodes[0].gres = {{"h100", 2}};
  config.nodes[0].features = {"ib"};
  return make_state(config);
}

NodeRegistered report(std::string node, int32_t gpus, Time t = 10) {
  NodeRegistered e{std::move(node), t, 16, 9999, {}, {"x"}, "b1", "s1", 500, false};
  for (int32_t i = 0; i < gpus; ++i) e.gpus.push_back({"h100", i == 0 ? "0-7" : "8-15"});
  return e;
}

// Every field a node event may change, to check that a stale one changed nothing.
std::string node_text(const ClusterState& s, const std::string& name) {
  auto it = s.nodes.find(name);
  if (it == s.nodes.end()) return "absent";
  const Node& n = it->second;
  std::string out = std::to_string(n.cpus) + " " + std::to_string(n.mem_mib) + " " + node_gres(n) + " " + n.block +
                    "/" + n.switch_name + " " + std::to_string(n.boot_time) + " " + std::to_string(n.down) +
                    n.down_reason + " " + std::to_string(n.drain) + n.drain_reason + " " + std::to_string(n.dynamic);
  for (const auto& f : n.features) out += " f:" + f;
  for (const auto& p : n.partitions) out += " p:" + p;
  for (const auto& g : n.gpus) out += " g:" + g.cpus;
  return out;
}

}  // namespace

TEST_CASE("apply NodeRegistered: configured sizes win, found GPUs count when they cover the gres, config features stay") {
  ClusterState s = gpu_cluster();
  CHECK(apply(s, report("g1", 2)));
  const Node& n = s.nodes.at("g1");
  CHECK(n.cpus == 16);       // not configured: the agent's
  CHECK(n.mem_mib == 4096);  // configured
  REQUIRE(n.gpus.size() == 2);
  CHECK(n.gpus[1].cpus == "8-15");
  CHECK(n.features == std::vector<std::string>{"ib"});  // a config node's features are the config's
  CHECK(n.block == "b1");
  CHECK(n.switch_name == "s1");
  CHECK(n.boot_time == 500);
  CHECK(!n.dynamic);
  std::string before = node_text(s, "g1");
  CHECK(!apply(s, report("g1", 2, 11)));  // the same again (a reconnect): stale
  CHECK(!apply(s, report("g1", 1, 12)));  // one GPU short: the GPUs it had stay (DOWN is its own event)
  CHECK(node_text(s, "g1") == before);
  NodeRegistered rebooted = report("g1", 2, 13);
  rebooted.boot_time = 900;
  CHECK(apply(s, rebooted));
  CHECK(n.boot_time == 900);
  CHECK(!apply(s, report("gone", 0)));  // a config node the config no longer has
  CHECK(s.nodes.count("gone") == 0);
  NodeRegistered joins = report("g1", 2, 14);  // `join` for a node the config declares: a config node still
  joins.join = true;
  joins.boot_time = 900;
  CHECK(!apply(s, joins));
  CHECK(!n.dynamic);
}

TEST_CASE("apply NodeRegistered: a dynamic node joins with its own features, and leaves by NodeRemoved") {
  ClusterState s = cluster("n1", 4);
  NodeRegistered e = report("d1", 0);
  e.join = true;
  CHECK(apply(s, e));
  const Node& d = s.nodes.at("d1");
  CHECK(d.dynamic);
  CHECK(d.cpus == 16);
  CHECK(d.mem_mib == 9999);
  CHECK(d.features == std::vector<std::string>{"x"});
  CHECK(!apply(s, e));  // duplicate
  e.features = {"y"};
  CHECK(apply(s, e));
  CHECK(s.nodes.at("d1").features == std::vector<std::string>{"y"});
  CHECK(!apply(s, NodeRemoved{"n1", 20}));  // in the config
  CHECK(!apply(s, NodeRemoved{"nope", 20}));
  test::start(s, 5, {"d1"}, 2);
  CHECK(!apply(s, NodeRemoved{"d1", 21}));  // runs a job
  CHECK(s.nodes.count("d1") == 1);
  apply(s, JobEnded{JobId{5}, 22, JobState::kCompleted, 0, 0});
  CHECK(apply(s, NodeRemoved{"d1", 23}));
  CHECK(!apply(s, NodeRemoved{"d1", 24}));  // twice
  CHECK(s.nodes.count("d1") == 0);
}

TEST_CASE("apply NodeDownChanged: DOWN with a reason and back - duplicates are stale - a drain keeps its own reason") {
  ClusterState s = cluster("n1", 4);
  CHECK(apply(s, NodeDownChanged{"n1", 1, true, kNotResponding}));
  const Node& n = s.nodes.at("n1");
  CHECK(node_state_name(n) == "DOWN");
  CHECK(node_reason(n) == "Not responding");
  CHECK(!node_schedulable(n));
  CHECK(!apply(s, NodeDownChanged{"n1", 2, true, kNotResponding}));  // duplicate
  CHECK(!apply(s, NodeDownChanged{"n9", 2, true, kNotResponding}));  // unknown node
  CHECK(apply(s, NodeDrainChanged{"n1", 3, true, "replace PSU"}));
  CHECK(!apply(s, NodeDrainChanged{"n1", 3, true, "replace PSU"}));  // drained alike already
  CHECK(node_state_name(n) == "DOWN+DRAIN");
  CHECK(node_reason(n) == "replace PSU");  // the operator's words, as Slurm keeps them
  CHECK(n.down_reason == kNotResponding);  // what return_to_service looks at
  CHECK(apply(s, NodeDownChanged{"n1", 4, false, "ignored"}));
  CHECK(!n.down);
  CHECK(n.down_reason.empty());
  CHECK(node_state_name(n) == "DRAINED");
  CHECK(!apply(s, NodeDownChanged{"n1", 5, false, ""}));  // up already
  CHECK(apply(s, NodeDrainChanged{"n1", 6, false, ""}));
  CHECK(node_reason(n).empty());
}

TEST_CASE("registration events: GPUs short of the gres put a node DOWN, a full set returns it, silence with return_to_service 0 stays") {
  ClusterState s = gpu_cluster();
  auto downs = [](const std::vector<Event>& events) {
    std::vector<NodeDownChanged> out;
    for (const auto& e : events)
      if (auto* d = std::get_if<NodeDownChanged>(&e)) out.push_back(*d);
    return out;
  };
  auto short_of = registration_events(s, report("g1", 1), 1);
  REQUIRE(short_of.size() == 2);
  CHECK(std::holds_alternative<NodeRegistered>(short_of[0]));
  auto d = downs(short_of);
  REQUIRE(d.size() == 1);
  CHECK(d[0].down);
  CHECK(d[0].reason.find("gres/gpu count reported lower than configured") != std::string::npos);
  for (const auto& e : short_of) apply(s, e);
  CHECK(s.nodes.at("g1").down);
  CHECK(downs(registration_events(s, report("g1", 1), 1)).size() == 1);  // the same again: apply finds it stale
  CHECK(!apply(s, downs(registration_events(s, report("g1", 1), 1))[0]));
  auto full = registration_events(s, report("g1", 2), 0);  // not a silence: return_to_service does not matter
  REQUIRE(downs(full).size() == 1);
  CHECK(!downs(full)[0].down);
  for (const auto& e : full) apply(s, e);
  CHECK(!s.nodes.at("g1").down);
  CHECK(downs(registration_events(s, report("g1", 2), 1)).empty());  // up and fine: nothing

  apply(s, NodeDownChanged{"g1", 20, true, kNotResponding});
  CHECK(registration_events(s, report("g1", 2), 0).size() == 1);  // waits for a resume
  CHECK(registration_events(s, report("g1", 1), 0).size() == 1);  // whatever it found
  auto back = downs(registration_events(s, report("g1", 2), 1));
  REQUIRE(back.size() == 1);
  CHECK(!back[0].down);
  for (const auto& e : registration_events(s, report("g1", 2), 1)) apply(s, e);
  apply(s, NodeDownChanged{"g1", 30, true, "psu"});  // an operator's (scontrol State=DOWN Reason=psu)
  CHECK(registration_events(s, report("g1", 2), 1).size() == 1);  // stays DOWN until resumed
  CHECK(controller_down_reason(kNotResponding));
  CHECK(controller_down_reason("reported 300 GPUs; at most 64"));
  CHECK_FALSE(controller_down_reason("psu"));
  NodeRegistered joins = report("new", 300);  // more GPUs than a node may have: DOWN once it joined
  joins.join = true;
  auto joined = registration_events(s, joins, 1);
  REQUIRE(joined.size() == 2);
  for (const auto& e : joined) CHECK(apply(s, e));
  CHECK(s.nodes.at("new").down);
  CHECK(s.nodes.at("new").gpus.empty());
}

TEST_CASE("liveness rules: a heartbeat returns only a silent node, with return_to_service - silence counts from the start too") {
  Node n;
  n.down = true;
  n.down_reason = kNotResponding;
  CHECK(returns_to_service(n, 1));
  CHECK(returns_to_service(n, 2));
  CHECK(!returns_to_service(n, 0));
  n.down_reason = "gres/gpu count reported lower than configured";
  CHECK(!returns_to_service(n, 1));
  n.down = false;
  CHECK(!returns_to_service(n, 1));

  n.registered = true;
  n.last_heard = 100;
  CHECK(!fell_silent(n, 130, 0, 30));
  CHECK(fell_silent(n, 131, 0, 30));
  n.down = true;
  CHECK(!fell_silent(n, 500, 0, 30));  // DOWN already
  Node unheard;                         // no agent since the controller started at 100
  CHECK(!fell_silent(unheard, 500, 100, 30));  // runs nothing: UNKNOWN, not DOWN
  unheard.jobs.insert(JobId{1});
  CHECK(!fell_silent(unheard, 130, 100, 30));
  CHECK(fell_silent(unheard, 131, 100, 30));
}
