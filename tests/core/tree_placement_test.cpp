// Tree placement (Slurm's topology/tree, reference §1.5): a job runs below the lowest
// switch that can hold it, best fit; inside a higher switch it takes the fewest leaves it
// can; it never spans leaves without a common switch; --switches=N[@wait] waits for N
// leaves at most until its wait (capped by max_switch_wait) is over. Golden tables on
// hand-made trees, one rule each, and a property test over random trees and workloads.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "builders.hpp"
#include "core/admission.hpp"
#include "core/explain.hpp"
#include "core/hostlist.hpp"
#include "core/scheduler.hpp"
#include "core/switch_tree.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;
using hq::test::start;
using hq::test::started_nodes;

namespace {

SwitchConfig leaf(const std::string& name, const std::string& nodes) {
  SwitchConfig s;
  s.name = name;
  s.nodes_expr = nodes;
  s.nodes = *expand_hostlist(nodes);
  return s;
}

SwitchConfig upper(const std::string& name, const std::string& switches) {
  SwitchConfig s;
  s.name = name;
  s.switches_expr = switches;
  s.switches = *expand_hostlist(switches);
  return s;
}

// Leaves s1-s3 of 4 nodes each (n1-n12); s4 over s1 and s2; top over s4 and s3.
TopologyConfig two_level_tree() {
  TopologyConfig t;
  t.present = true;
  t.switches = {leaf("s1", "n[1-4]"), leaf("s2", "n[5-8]"), leaf("s3", "n[9-12]"), upper("s4", "s[1-2]"),
                upper("top", "s3,s4")};
  return t;
}

// The leaf switches (by name) the nodes are on.
std::set<std::string> leaves_of(const SwitchTree& tree, const std::vector<std::string>& nodes) {
  std::set<std::string> out;
  for (const auto& n : nodes) out.insert(tree.switches[static_cast<size_t>(tree.node_leaf.at(n))].name);
  return out;
}

SwitchTree tree_of(const ClusterState& s) { return switch_tree_of(s); }

// The 12-node cluster of two_level_tree() with partition "spine" over `nodes` (and "all").
ClusterState with_spine_partition(const std::string& nodes) {
  ClusterConfig config = uniform_cluster_config(*expand_hostlist("n[1-12]"), 4, 1024, "all");
  config.topology = two_level_tree();
  PartitionConfig spine;
  spine.name = "spine";
  REQUIRE(parse_partition_nodes(nodes, spine).is_ok());
  config.partitions.push_back(spine);
  return make_state(config);
}

}  // namespace

TEST_CASE("tree as blocks: leaves are base blocks, each higher switch a block of the leaves below it") {
  auto s = cluster("n[1-12]", 4);
  s.topology = two_level_tree();
  BlockTopology b = switch_tree_blocks(tree_of(s));
  REQUIRE(b.tree);
  REQUIRE(b.by_level.size() == 3);
  CHECK(b.by_level[0].size() == 3);
  REQUIRE(b.by_level[1].size() == 1);
  CHECK(b.blocks[static_cast<size_t>(b.by_level[1][0])].name == "s4");
  CHECK(b.blocks[static_cast<size_t>(b.by_level[1][0])].bblocks == std::vector<int32_t>{0, 1});
  CHECK(b.blocks[static_cast<size_t>(b.by_level[2][0])].bblocks == std::vector<int32_t>{0, 1, 2});
  CHECK(b.blocks[static_cast<size_t>(b.node_bblock.at("n9"))].name == "s3");
  CHECK(b.level_for(2) == -1);  // no block sizes: a tree is searched switch by switch
  CHECK_FALSE(switch_tree_blocks(SwitchTree{}).active());
}

TEST_CASE("tree placement: the lowest switch that holds the job, the leaf with fewest free nodes that fits (best fit)") {
  auto s = cluster("n[1-12]", 4);
  s.topology = two_level_tree();
  start(s, 100, {"n1", "n2"}, 4);  // s1: 2 free
  start(s, 101, {"n9"}, 4);        // s3: 3 free; s2: 4 free
  apply(s, JobBuilder(1).nodes(3));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n10", "n11", "n12"});
  apply(s, JobBuilder(2).nodes(2));  // now s1 (2 free) is the best fit
  p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 2) == std::vector<std::string>{"n3", "n4"});
}

TEST_CASE("tree placement: a job no leaf holds goes below the lowest common switch, over the fewest leaves") {
  auto s = cluster("n[1-12]", 4);
  s.topology = two_level_tree();
  start(s, 100, {"n1", "n2", "n3"}, 4);  // s1: 1 free, s2: 4, s3: 4
  apply(s, JobBuilder(1).nodes(5));      // s4 holds 5 free (s2 whole + n4); top would too
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n4", "n5", "n6", "n7", "n8"});
  // With s4's leaves busier than that, the job goes to the top switch: the roomiest leaf
  // first (s3), then the leaf that best fits what is left (s1's one node, not s2's two).
  start(s, 102, {"n5", "n6"}, 4);  // s4 has 3 free now
  p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n4", "n9", "n10", "n11", "n12"});  // as Slurm 22.05 (2b)
}

TEST_CASE("tree placement: never across leaves without a common switch, though enough nodes are free") {
  auto s = cluster("n[1-8]", 4);
  s.topology.present = true;
  s.topology.switches = {leaf("a", "n[1-4]"), leaf("b", "n[5-8]")};  // two roots
  apply(s, JobBuilder(1).nodes(6));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1).empty());
  REQUIRE(p.pending.size() == 1);
  CHECK(p.pending[0].reason == JobReason::kResources);
  s.topology.switches.push_back(upper("root", "a,b"));  // a common switch: it starts
  p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1).size() == 6);
}

TEST_CASE("tree placement: nodes on no switch take no job") {
  auto s = cluster("n[1-6]", 4);
  s.topology.present = true;
  s.topology.switches = {leaf("a", "n[1-4]")};
  apply(s, JobBuilder(1).nodes(4).cpus(4));
  apply(s, JobBuilder(2).nodes(1));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(started_nodes(p, 2).empty());
}

TEST_CASE("tree placement: a job that waits is reserved below one switch, the lowest of the earliest") {
  auto s = cluster("n[1-12]", 4);
  s.topology = two_level_tree();
  for (int n = 1; n <= 12; ++n) start(s, 100 + static_cast<uint64_t>(n), {"n" + std::to_string(n)}, 4);
  for (int n = 1; n <= 12; ++n)  // s3's nodes free first (600 s), then s2's, then s1's
    s.jobs.at(JobId{100 + static_cast<uint64_t>(n)}).time_limit = n >= 9 ? 600 : n >= 5 ? 1200 : 1800;
  apply(s, JobBuilder(1).nodes(3).cpus(4).limit(3600));  // whole nodes
  apply(s, JobBuilder(2).nodes(6).cpus(4).limit(3600).priority(-10));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  SwitchTree tree = tree_of(s);
  std::map<uint64_t, std::vector<std::string>> reserved;
  for (const auto& r : p.reservations)
    for (const auto& a : r.alloc) reserved[r.job.value].push_back(a.node);
  REQUIRE(reserved[1].size() == 3);
  CHECK(leaves_of(tree, reserved[1]) == std::set<std::string>{"s3"});
  REQUIRE(reserved[2].size() == 6);  // s4's leaves, at 1800 s: top could not be sooner (3 of s3's are job 1's), and ties go low
  auto leaves = leaves_of(tree, reserved[2]);
  CHECK((leaves == std::set<std::string>{"s1", "s2"}));
}

TEST_CASE("tree placement: --switches=N waits for N leaves until its wait is over, then takes what there is") {
  auto s = cluster("n[1-12]", 4);
  s.topology = two_level_tree();
  start(s, 100, {"n1", "n2"}, 4);  // every leaf has 2 free nodes
  start(s, 101, {"n5", "n6"}, 4);
  start(s, 102, {"n9", "n10"}, 4);
  apply(s, JobBuilder(1).nodes(3).submitted(0));
  s.jobs.at(JobId{1}).spec.switches = 1;
  s.jobs.at(JobId{1}).spec.switch_wait = 120;
  SchedulerConfig cfg;
  Plan p = Scheduler(cfg).schedule(s, 60);  // waited 60 s of 120: no single leaf has 3
  CHECK(started_nodes(p, 1).empty());
  p = Scheduler(cfg).schedule(s, 120);  // the wait is over: two leaves below s4
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n3", "n4", "n7"});  // as Slurm 22.05 (3)
  cfg.max_switch_wait = 30;  // the cap on every job's wait
  p = Scheduler(cfg).schedule(s, 60);
  CHECK(started_nodes(p, 1).size() == 3);
  s.jobs.at(JobId{1}).spec.switches = 2;  // two leaves are allowed at once
  p = Scheduler(SchedulerConfig{}).schedule(s, 1);
  CHECK(started_nodes(p, 1).size() == 3);
}

TEST_CASE("tree placement (property): over random trees and workloads every job starts or is reserved below one switch") {
  std::mt19937 rng(20261129);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int placed_jobs = 0, spanning = 0;
  for (int round = 0; round < 120; ++round) {
    int nleaves = pick(1, 6), per = pick(1, 4), outside = pick(0, 2);
    int total = nleaves * per + outside;
    auto s = cluster("n[1-" + std::to_string(total) + "]", 4);
    s.topology.present = true;
    for (int l = 0; l < nleaves; ++l)
      s.topology.switches.push_back(leaf("l" + std::to_string(l), "n[" + std::to_string(l * per + 1) + "-" + std::to_string((l + 1) * per) + "]"));
    // Random parents: runs of leaves under mid switches, and maybe a root over some of those.
    std::vector<std::string> mids;
    for (int first = 0; first < nleaves;) {
      int run = pick(1, 3);
      if (run > 1 && first + 1 < nleaves) {
        int last = std::min(nleaves - 1, first + run - 1);
        std::string name = "m" + std::to_string(mids.size());
        s.topology.switches.push_back(upper(name, "l[" + std::to_string(first) + "-" + std::to_string(last) + "]"));
        mids.push_back(name);
        first = last + 1;
      } else {
        mids.push_back("l" + std::to_string(first));
        ++first;
      }
    }
    if (mids.size() > 1 && pick(0, 1)) {
      std::string under;
      for (const auto& m : mids) under += (under.empty() ? "" : ",") + m;
      s.topology.switches.push_back(upper("root", under));
    }
    REQUIRE_FALSE(check_switches(s.topology.switches).has_value());
    SwitchTree tree = tree_of(s);
    uint64_t id = 1000;
    for (int r = pick(0, total); r > 0; --r) start(s, id++, {"n" + std::to_string(pick(1, total))}, pick(1, 4));
    for (auto& [jid, job] : s.jobs) job.time_limit = 600 * pick(1, 6);
    for (uint64_t j = 1; j <= static_cast<uint64_t>(pick(1, 10)); ++j) {
      JobBuilder b(j);
      if (pick(0, 3) == 0) b.tasks(pick(1, 4 * total)).cpus(1);
      else b.nodes(pick(1, total)).cpus(pick(1, 4));
      apply(s, b.limit(600 * pick(1, 4)));
    }
    Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
    std::vector<std::pair<uint64_t, const std::vector<NodeAlloc>*>> placed;
    for (const auto& st : p.starts) placed.emplace_back(st.job.value, &st.alloc);
    for (const auto& r : p.reservations) placed.emplace_back(r.job.value, &r.alloc);
    for (const auto& [job, alloc] : placed) {
      std::vector<std::string> nodes;
      for (const auto& a : *alloc) nodes.push_back(a.node);
      INFO("round " << round << " job " << job << " on " << compress_hostlist(nodes));
      std::vector<int32_t> leaves;
      for (const auto& n : nodes) {
        auto it = tree.node_leaf.find(n);
        REQUIRE(it != tree.node_leaf.end());  // never a node on no switch
        leaves.push_back(it->second);
      }
      CHECK(tree.common_ancestor(leaves) >= 0);
      ++placed_jobs;
      if (std::set<int32_t>(leaves.begin(), leaves.end()).size() > 1) ++spanning;
    }
  }
  CHECK(placed_jobs > 100);  // the workloads did start and reserve jobs
  CHECK(spanning > 10);      // and some spanned leaves
}

TEST_CASE("tree: a partition's nodes = \"switch{S}\" are the nodes below configured switch S, at any level") {
  ClusterState s = with_spine_partition("switch{s4},n12");
  const PartitionConfig* p = find_partition(s.partitions, "spine");
  REQUIRE(p != nullptr);
  CHECK(compress_hostlist(p->nodes) == "n[1-8,12]");
  CHECK(s.nodes.at("n5").partitions == std::vector<std::string>{"all", "spine"});
}

// tests/fixtures/slurm/topology-tree/placement.txt: what Slurm 22.05.8 gave the same jobs on
// the same tree (12 one-CPU nodes, every job --exclusive). Scenarios 1, 2b and 3 are above.
TEST_CASE("tree placement: as Slurm 22.05 placed them - leaves in turn, one job across the lowest switch, a refusal at submit") {
  auto s = cluster("n[1-12]", 1);
  s.topology = two_level_tree();
  apply(s, JobBuilder(1).nodes(5));  // 2a: n1-n3 busy: below s4
  start(s, 100, {"n1", "n2", "n3"}, 1);
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(compress_hostlist(started_nodes(p, 1)) == "n[4-8]");
  auto idle = cluster("n[1-12]", 1);  // 4a: three jobs of 4, a leaf each, in turn
  idle.topology = two_level_tree();
  for (uint64_t j = 1; j <= 3; ++j) apply(idle, JobBuilder(j).nodes(4));
  p = Scheduler(SchedulerConfig{}).schedule(idle, 0);
  CHECK(compress_hostlist(started_nodes(p, 1)) == "n[1-4]");
  CHECK(compress_hostlist(started_nodes(p, 2)) == "n[5-8]");
  CHECK(compress_hostlist(started_nodes(p, 3)) == "n[9-12]");
  auto six = cluster("n[1-12]", 1);  // 4b
  six.topology = two_level_tree();
  apply(six, JobBuilder(1).nodes(6));
  p = Scheduler(SchedulerConfig{}).schedule(six, 0);
  CHECK(compress_hostlist(started_nodes(p, 1)) == "n[1-6]");
  // 5: two roots; a job larger than either is refused at submit, as Slurm's sbatch is.
  auto roots = cluster("n[1-12]", 1);
  roots.topology = two_level_tree();
  roots.topology.switches.pop_back();  // no "top"
  Job ten = JobBuilder(1).nodes(10).build();
  Status st = check_ever_runnable(roots, ten);
  REQUIRE_FALSE(st.is_ok());
  CHECK(st.message().find("Requested node configuration is not available") == 0);
  CHECK(st.message().find("below switch s4") != std::string::npos);
  CHECK(check_ever_runnable(roots, JobBuilder(2).nodes(8).build()).is_ok());  // s4 holds 8
}

TEST_CASE("tree: hq explain names the switch with most room for the job, and its --switches wait") {
  auto s = cluster("n[1-12]", 1);
  s.topology = two_level_tree();
  for (const char* n : {"n1", "n2", "n3", "n5", "n6", "n7", "n9", "n10", "n11"}) start(s, 100 + static_cast<uint64_t>(std::stoi(n + 1)), {n}, 1);
  apply(s, JobBuilder(1).nodes(2));
  s.jobs.at(JobId{1}).spec.switches = 1;
  s.jobs.at(JobId{1}).spec.switch_wait = 300;
  auto lines = explain_job(s, s.jobs.at(JobId{1}), 0);
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  INFO(all);
  CHECK(all.find("topology: --switches=1: it waits up to 00:05:00 after it became eligible for a place on 1 leaf switch at most") != std::string::npos);
  CHECK(all.find("topology: 2 nodes must fit below one switch; the most that could take it now below one is 2 of 8 below s4 (level 1): it fits there") != std::string::npos);
}

TEST_CASE("tree placement: node weight comes before the switch (Slurm: the lightest nodes that are enough first)") {
  auto s = cluster("n[1-8]", 1);
  s.topology.present = true;
  s.topology.switches = {leaf("a", "n[1-4]"), leaf("b", "n[5-8]"), upper("top", "a,b")};
  for (int n = 5; n <= 8; ++n) s.nodes.at("n" + std::to_string(n)).weight = 100;
  start(s, 100, {"n5"}, 1);
  start(s, 101, {"n6"}, 1);  // b has 2 free (the best fit), but they weigh 100
  apply(s, JobBuilder(1).nodes(2));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n1", "n2"});
  // Light nodes spread over two leaves beat a heavy leaf that holds the job alone.
  auto spread = cluster("n[1-8]", 1);
  spread.topology = s.topology;
  for (int n = 5; n <= 8; ++n) spread.nodes.at("n" + std::to_string(n)).weight = n == 7 ? 1 : 100;
  start(spread, 100, {"n1", "n2", "n3"}, 1);  // light and free: n4 (a), n7 (b); b's n5, n6, n8 heavy
  apply(spread, JobBuilder(2).nodes(2));
  p = Scheduler(SchedulerConfig{}).schedule(spread, 0);
  CHECK(started_nodes(p, 2) == std::vector<std::string>{"n4", "n7"});
}

TEST_CASE("tree placement: a -w job stays below the highest switch that holds its -w nodes, and is refused across roots") {
  auto s = cluster("n[1-12]", 1);
  s.topology = two_level_tree();
  start(s, 100, {"n1"}, 1);
  apply(s, JobBuilder(1).nodes(3).nodelist("n2"));  // below top (all of it): n2, then a leaf that fits the rest
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  auto nodes = started_nodes(p, 1);
  REQUIRE(nodes.size() == 3);
  CHECK(nodes.front() == "n2");
  auto roots = cluster("n[1-10]", 1);
  roots.topology.present = true;
  roots.topology.switches = {leaf("a", "n[1-4]"), leaf("b", "n[5-8]")};  // n9, n10 on no switch
  CHECK(check_ever_runnable(roots, JobBuilder(1).nodes(2).nodelist("n1,n5").build()).message() ==
        "Requested topology configuration is not available: the --nodelist nodes n[1,5] have no switch in common");
  CHECK(check_ever_runnable(roots, JobBuilder(1).nodes(2).nodelist("n1,n9").build()).message() ==
        "Requested topology configuration is not available: node n9 (--nodelist) is on no switch");
  CHECK(check_ever_runnable(roots, JobBuilder(1).nodes(3).nodelist("n1,n2").build()).is_ok());
  apply(roots, JobBuilder(2).nodes(2).nodelist("n1,n5"));  // accepted before the tree changed: it waits
  p = Scheduler(SchedulerConfig{}).schedule(roots, 0);
  CHECK(started_nodes(p, 2).empty());
  apply(roots, JobBuilder(3).nodes(3).nodelist("n1"));  // extra nodes only from below a
  p = Scheduler(SchedulerConfig{}).schedule(roots, 0);
  for (const auto& n : started_nodes(p, 3)) CHECK(std::stoi(n.substr(1)) <= 4);
  CHECK(started_nodes(p, 3).size() == 3);
}

TEST_CASE("tree: the submit check counts a switch's nodes once, however many ways they are below it") {
  auto s = cluster("n[1-4]", 1);
  s.topology.present = true;
  s.topology.switches = {leaf("a", "n[1-4]"), upper("m", "a"), upper("top", "m,a")};
  CHECK(check_ever_runnable(s, JobBuilder(1).nodes(4).build()).is_ok());
  CHECK_FALSE(check_ever_runnable(s, JobBuilder(2).nodes(6).build()).is_ok());
}

TEST_CASE("tree: a dynamic node labelled with a leaf below switch S joins the partitions of switch{S}") {
  ClusterState s = with_spine_partition("switch{s4}");
  CHECK(apply(s, NodeRegistered{"d1", 1, 8, 1000, {}, {}, "", "s2", 0, true}));  // s2 is below s4
  CHECK(apply(s, NodeRegistered{"d2", 1, 8, 1000, {}, {}, "", "s3", 0, true}));  // s3 is not
  const PartitionConfig* p = find_partition(s.partitions, "spine");
  REQUIRE(p != nullptr);
  CHECK(std::count(p->nodes.begin(), p->nodes.end(), "d1") == 1);
  CHECK(std::count(p->nodes.begin(), p->nodes.end(), "d2") == 0);
  CHECK(switch_tree_of(s).node_addr("d1") == "top.s4.s2.d1");  // and it sits below s2
}
