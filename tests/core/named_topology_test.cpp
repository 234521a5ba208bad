// Several named topologies (Slurm 25.05's topology.yaml, hq's [[topology]] tables): each
// partition's jobs are placed by its own topology (the cluster default where it names
// none), over the same nodes; node labels per topology; hostlist functions over all.
#include <doctest/doctest.h>

#include <set>

#include "builders.hpp"
#include "core/block_usage.hpp"
#include "core/hostlist.hpp"
#include "core/hostlist_functions.hpp"
#include "core/scheduler.hpp"
#include "core/topology.hpp"

using namespace hq;
using hq::test::add_partition;
using hq::test::cluster;
using hq::test::JobBuilder;
using hq::test::start;
using hq::test::started_nodes;

namespace {

TopologyConfig blocks(const std::string& name, const std::vector<std::pair<std::string, std::string>>& members) {
  TopologyConfig t;
  t.name = name;
  t.present = true;
  for (const auto& [block, nodes] : members) {
    BlockConfig b;
    b.name = block;
    b.nodes_expr = nodes;
    b.nodes = *expand_hostlist(nodes);
    t.blocks.push_back(b);
  }
  return t;
}

// n1-n8: the default topology "racks" (r1 = n1-n4, r2 = n5-n8) for partition "batch";
// "alt" (odd and even nodes) for partition "alt"; "none" (flat) for partition "flat".
ClusterState two_topologies() {
  ClusterState s = cluster("n[1-8]", 4);
  s.topology = blocks("racks", {{"r1", "n[1-4]"}, {"r2", "n[5-8]"}});
  s.other_topologies.push_back(blocks("alt", {{"odd", "n[1,3,5,7]"}, {"even", "n[2,4,6,8]"}}));
  TopologyConfig flat;
  flat.name = "none";
  flat.present = flat.flat = true;
  s.other_topologies.push_back(flat);
  add_partition(s, "alt", "n[1-8]").topology = "alt";
  add_partition(s, "flat", "n[1-8]").topology = "none";
  return s;
}

std::set<std::string> set_of(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("topology labels: [TOPOLOGY:]UNIT entries, the bare one the default's") {
  CHECK(label_unit("b1", "racks", true) == "b1");
  CHECK(label_unit("b1", "alt", false).empty());
  CHECK(label_unit("b1,alt:x2", "alt", false) == "x2");
  CHECK(label_unit("alt:x2,racks:r9", "racks", true) == "r9");
  CHECK(label_names_unit("b1,alt:x2", "x2"));
  CHECK_FALSE(label_names_unit("b1,alt:x2", "alt"));
  CHECK(label_with_unit("b1,alt:x2", "alt", false, "x3") == "alt:x3,b1");
  CHECK(label_with_unit("b1,alt:x2", "racks", true, "b2") == "b2,alt:x2");
  CHECK(label_with_unit("", "alt", false, "x1") == "alt:x1");
}

TEST_CASE("named topologies: each partition's jobs are placed by its own topology, over the same nodes") {
  auto s = two_topologies();
  start(s, 100, {"n1"}, 4);  // n1 busy: r1 and odd can no longer hold 4 nodes
  apply(s, JobBuilder(1).nodes(4).cpus(4));                     // batch: racks
  apply(s, JobBuilder(2).nodes(4).cpus(4).partition("alt"));    // alt: odd/even
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(set_of(started_nodes(p, 1)) == std::set<std::string>{"n5", "n6", "n7", "n8"});
  CHECK(started_nodes(p, 2).empty());  // even is n2,n4,n6,n8, and n6, n8 went to job 1: it waits

  auto alone = two_topologies();
  start(alone, 100, {"n1"}, 4);
  apply(alone, JobBuilder(2).nodes(4).cpus(4).partition("alt"));
  Plan q = Scheduler(SchedulerConfig{}).schedule(alone, 0);
  CHECK(set_of(started_nodes(q, 2)) == std::set<std::string>{"n2", "n4", "n6", "n8"});
}

TEST_CASE("named topologies: a flat topology places its partition's jobs across blocks") {
  auto s = two_topologies();
  start(s, 100, {"n1", "n6"}, 4);  // no rack and no odd/even set has 4 free nodes
  apply(s, JobBuilder(1).nodes(4).cpus(4));
  apply(s, JobBuilder(2).nodes(4).cpus(4).partition("alt"));
  apply(s, JobBuilder(3).nodes(4).cpus(4).partition("flat"));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1).empty());
  CHECK(started_nodes(p, 2).empty());
  CHECK(started_nodes(p, 3).size() == 4);
}

TEST_CASE("named topologies: a job of several partitions may run by either's topology") {
  auto s = two_topologies();
  start(s, 100, {"n1", "n5"}, 4);  // racks: none holds 4; alt: even (n2,n4,n6,n8) does
  apply(s, JobBuilder(1).nodes(4).cpus(4).partition("batch,alt"));
  s.jobs.at(JobId{1}).partitions = {"batch", "alt"};
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(set_of(started_nodes(p, 1)) == std::set<std::string>{"n2", "n4", "n6", "n8"});
}

TEST_CASE("named topologies: agents' labels place dynamic nodes in each topology") {
  auto s = two_topologies();
  for (const char* name : {"n9", "n10"}) {
    Node& n = s.nodes[name];
    n = s.nodes.at("n8");
    n.name = name;
    n.partitions = {"batch", "alt"};
  }
  s.nodes.at("n9").block = "r3,alt:odd";  // rack r3 (new) in racks, odd in alt
  s.nodes.at("n10").block = "r3";         // in racks only: outside alt's blocks
  BlockTopology racks = block_topology_of(s, s.topology);
  BlockTopology alt = block_topology_of(s, s.other_topologies[0]);
  CHECK(racks.blocks[racks.node_bblock.at("n9")].name == "r3");
  CHECK(racks.blocks[racks.node_bblock.at("n10")].name == "r3");
  CHECK(alt.blocks[alt.node_bblock.at("n9")].name == "odd");
  CHECK_FALSE(alt.node_bblock.count("n10"));
  // block{B} names a unit of any topology; blockwith{N} reads the default.
  CHECK(*expand_node_list(s, "block{even}") == std::vector<std::string>{"n2", "n4", "n6", "n8"});
  CHECK(*expand_node_list(s, "block{odd}") == std::vector<std::string>{"n1", "n3", "n5", "n7", "n9"});
  CHECK(*expand_node_list(s, "blockwith{n2}") == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK_FALSE(expand_node_list(s, "block{nowhere}").is_ok());
}

TEST_CASE("named topologies: an exclusive=topo job blocks the rest of its base blocks in its partition's topology") {
  auto s = two_topologies();
  apply(s, JobBuilder(200).nodes(1).exclusive_topo().partition("alt"));
  start(s, 200, {"n2"}, 4);
  s.jobs.at(JobId{200}).partition = "alt";
  CHECK(blocked_by_exclusive_topo(s) == std::set<std::string>{"n4", "n6", "n8"});  // even, not r1
  // batch (racks): n4, n6, n8 are held, so r1 (n1, n3) and r2 (n5, n7) have 2 free each:
  // the first. (Held by racks' blocks instead, r1 would be all held, and it would go to r2.)
  apply(s, JobBuilder(1).nodes(2).cpus(4));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(set_of(started_nodes(p, 1)) == std::set<std::string>{"n1", "n3"});
}

TEST_CASE("named topologies: --segment over partitions of a block and a flat topology - no crash, segments kept") {
  auto s = two_topologies();
  add_partition(s, "few4", "n[1-4]").topology = "none";
  start(s, 100, {"n4", "n6", "n7", "n8"}, 4);  // racks: r1 has n1-n3 free, r2 n5: one segment of 2 only
  for (const char* parts : {"batch,flat", "few4,batch"}) {
    auto t = s;
    apply(t, JobBuilder(1).nodes(4).cpus(4).partition(parts));
    auto names = *expand_hostlist(parts);
    t.jobs.at(JobId{1}).partitions = std::vector<std::string>(names.begin(), names.end());
    t.jobs.at(JobId{1}).spec.segment = 2;
    Plan p = Scheduler(SchedulerConfig{}).schedule(t, 0);
    std::vector<std::string> got = started_nodes(p, 1);
    INFO(parts);
    if (std::string(parts) == "batch,flat") {  // flat: any 4 free nodes (n1-n3, n5)
      CHECK(set_of(got) == std::set<std::string>{"n1", "n2", "n3", "n5"});
    } else {
      CHECK(got.empty());  // few4 has 3 free; batch's segments of 2 fit in r1 only once
    }
  }
}

TEST_CASE("named topologies: an operator's move is kept per topology - the others keep the config's place") {
  auto s = two_topologies();
  s.nodes.at("n1").block = "r2";  // its agent's label for the default: the config's r1 wins
  apply(s, NodeUpdated{"n1", 1, std::nullopt, std::nullopt, std::string("alt:even")});
  BlockTopology alt = block_topology_of(s, s.other_topologies[0]);
  CHECK(alt.blocks[alt.node_bblock.at("n1")].name == "even");
  BlockTopology racks = block_topology_of(s, s.topology);
  CHECK(racks.blocks[racks.node_bblock.at("n1")].name == "r1");
  CHECK(s.nodes.at("n1").operator_block == "alt:even");
  apply(s, NodeUpdated{"n1", 2, std::nullopt, std::nullopt, std::string("r2")});  // then a move in the default
  racks = block_topology_of(s, s.topology);
  CHECK(racks.blocks[racks.node_bblock.at("n1")].name == "r2");
  CHECK(label_unit(s.nodes.at("n1").operator_block, "alt", false) == "even");
}

TEST_CASE("topology labels: 'default:' names the cluster default whatever its name") {
  CHECK(label_unit("default:b1", "racks", true) == "b1");
  CHECK(label_unit("default:b1", "alt", false).empty());
  CHECK(label_unit("alt:,alt:x2", "alt", false) == "x2");
  CHECK(merge_labels("b1,alt:x1", "alt:x2") == "alt:x2,b1");
  CHECK(merge_labels("b1,alt:x1", "default:b3") == "b3,alt:x1");
  auto s = two_topologies();
  CHECK(topology_named(s, "default") == &s.topology);
  CHECK(topology_named(s, "racks") == &s.topology);
  CHECK(topology_named(s, "nowhere") == nullptr);
}
