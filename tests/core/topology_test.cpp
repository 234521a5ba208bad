// Block topology: the model (levels, aggregated blocks, scontrol show topology's lines,
// Slurm's config errors) and placement (a job inside one block of the smallest level that
// holds it, best fit first; a job that fits no block waits).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "builders.hpp"
#include "core/block_usage.hpp"
#include "core/hostlist.hpp"
#include "core/scheduler.hpp"
#include "core/topology.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;
using hq::test::start;
using hq::test::started_nodes;

namespace {

TopologyConfig blocks_of(int32_t size, int32_t count, std::vector<int32_t> sizes = {}) {
  TopologyConfig t;
  t.present = true;
  t.block_sizes = std::move(sizes);
  for (int32_t b = 0; b < count; ++b) {
    BlockConfig bc;
    bc.name = "b" + std::to_string(b + 1);
    bc.nodes_expr = "n[" + std::to_string(b * size + 1) + "-" + std::to_string((b + 1) * size) + "]";
    bc.nodes = *expand_hostlist(bc.nodes_expr);
    t.blocks.push_back(bc);
  }
  return t;
}

std::vector<std::pair<std::string, std::string>> unlabelled(const std::string& names) {
  std::vector<std::pair<std::string, std::string>> out;
  auto expanded = expand_hostlist(names);  // kept: the loop below reads into it
  for (const auto& n : *expanded) out.emplace_back(n, "");
  return out;
}

std::string block_of(const BlockTopology& t, const std::string& node) { return t.blocks[t.node_bblock.at(node)].name; }

}  // namespace

TEST_CASE("topology: levels from BlockSizes, aggregated blocks of aligned runs, Slurm's show lines") {
  auto topo = build_block_topology(blocks_of(4, 4, {4, 8, 16}), unlabelled("n[1-16]"));
  REQUIRE(topo.active());
  CHECK(topo.bblock_nodes == 4);
  CHECK(topo.levels == std::vector<int32_t>{0, 1, 2});
  CHECK(topo.level_for(1) == 0);
  CHECK(topo.level_for(4) == 0);
  CHECK(topo.level_for(5) == 1);
  CHECK(topo.level_for(9) == 2);
  CHECK(topo.level_for(17) == -1);  // more than the whole topology: one block of everything
  auto lines = topo.show_lines();
  REQUIRE(lines.size() == 4 + 2 + 1);
  CHECK(lines[0] == "BlockName=b1 BlockIndex=0 Nodes=n[1-4] BlockSize=4");
  // Lines by level; BlockIndex as Slurm makes them: b[1-2], b[1-4], then b[3-4].
  CHECK(lines[4] == "AggregatedBlock=b[1-2] BlockIndex=4 Nodes=n[1-8] BlockSize=8");
  CHECK(lines[5] == "AggregatedBlock=b[3-4] BlockIndex=6 Nodes=n[9-16] BlockSize=8");
  CHECK(lines[6] == "AggregatedBlock=b[1-4] BlockIndex=5 Nodes=n[1-16] BlockSize=16");
}

TEST_CASE("topology: without BlockSizes the first block's size and 1-16 base blocks, up to the first level holding all") {
  auto topo = build_block_topology(blocks_of(2, 3), unlabelled("n[1-6]"));
  CHECK(topo.bblock_nodes == 2);
  CHECK(topo.levels == std::vector<int32_t>{0, 1, 2});  // 4 base blocks hold the 3
  CHECK(topo.by_level[1].size() == 1);  // b[1-2]; b3 alone is left out: level 0 holds it
  CHECK(topo.by_level[2].size() == 1);  // b[1-3]: the short last run is kept, level 1 cannot hold 3
  CHECK(topo.level_for(3) == 1);
  CHECK(topo.level_for(5) == 2);
  CHECK(topo.level_for(9) == -1);
  auto lines = topo.show_lines();
  REQUIRE(lines.size() == 5);
  CHECK(lines[3] == "AggregatedBlock=b[1-2] BlockIndex=3 Nodes=n[1-4] BlockSize=4");
  CHECK(lines[4] == "AggregatedBlock=b[1-3] BlockIndex=4 Nodes=n[1-6] BlockSize=8");
}

TEST_CASE("topology: agents' --block labels join configured blocks or make blocks of their own - unlabelled nodes are outside") {
  TopologyConfig t = blocks_of(2, 1);
  std::vector<std::pair<std::string, std::string>> nodes = {
      {"n1", ""}, {"n2", "x"}, {"n3", "b1"}, {"n4", "rack7"}, {"n5", "rack7"}, {"n6", ""}};
  auto topo = build_block_topology(t, nodes);
  CHECK(block_of(topo, "n1") == "b1");
  CHECK(block_of(topo, "n2") == "b1");  // the config wins over the label
  CHECK(block_of(topo, "n3") == "b1");
  CHECK(block_of(topo, "n4") == "rack7");
  CHECK(topo.blocks[1].nodes == std::vector<std::string>{"n4", "n5"});
  CHECK(topo.outside == 1);  // n6
  CHECK_FALSE(build_block_topology(TopologyConfig{}, nodes).active());
}

TEST_CASE("topology: Slurm's config errors") {
  CHECK(validate_topology(blocks_of(4, 2, {4, 8})).is_ok());
  CHECK(validate_topology(blocks_of(4, 2, {4, 12})).message().find("Invalid BlockSizes value: 12") == 0);
  CHECK(validate_topology(blocks_of(4, 2, {0})).message().find("Invalid BlockSizes value: 0") == 0);
  TopologyConfig dup = blocks_of(2, 2);
  dup.blocks[1].name = "b1";
  CHECK(validate_topology(dup).message() == "Duplicate BlockName=b1");
  TopologyConfig twice = blocks_of(2, 2);
  twice.blocks[1].nodes.push_back("n1");
  CHECK(validate_topology(twice).message() == "node n1 is in two blocks: b1 and b2");
}

TEST_CASE("block placement: a job stays inside one block of the smallest level that holds it, the fullest that fits first") {
  auto s = cluster("n[1-16]", 4);
  s.topology = blocks_of(4, 4, {4, 8, 16});
  start(s, 100, {"n1"}, 4);        // b1 has 3 nodes free
  start(s, 101, {"n5", "n6"}, 4);  // b2 has 2
  apply(s, JobBuilder(1).nodes(2));  // fits b2 (2 free) best
  apply(s, JobBuilder(2).nodes(3));  // b1 (3 free) then
  apply(s, JobBuilder(3).nodes(6));  // level 1: b[3-4] holds 8 free; b[1-2] has none left
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n7", "n8"});
  CHECK(started_nodes(p, 2) == std::vector<std::string>{"n2", "n3", "n4"});
  auto six = started_nodes(p, 3);
  REQUIRE(six.size() == 6);
  for (const auto& n : six) CHECK(std::stoi(n.substr(1)) >= 9);
}

TEST_CASE("block placement: a job that no block of its level can hold now waits, although enough nodes are free") {
  auto s = cluster("n[1-8]", 4);
  s.topology = blocks_of(4, 2, {4});  // only level 0 enforced: jobs of up to 4 nodes, one block each
  start(s, 100, {"n1", "n2"}, 4);
  start(s, 101, {"n5", "n6"}, 4);
  apply(s, JobBuilder(1).nodes(3));  // 4 nodes are free, 2 in each block
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1).empty());
  // Without the topology it would start at once.
  s.topology = TopologyConfig{};
  Plan flat = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(flat, 1).size() == 3);
}

TEST_CASE("block placement: nodes in no block take no job while a topology is on") {
  auto s = cluster("n[1-6]", 4);
  s.topology = blocks_of(4, 1);  // n5, n6 in no block
  apply(s, JobBuilder(1).nodes(4).cpus(4));  // b1 whole
  apply(s, JobBuilder(2).nodes(1));
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(started_nodes(p, 2).empty());
}

namespace {

// The levels of the blocks that hold every node of `nodes` (none: no single block does).
std::vector<int32_t> levels_holding(const BlockTopology& topo, const std::vector<std::string>& nodes) {
  std::vector<int32_t> out;
  for (const auto& b : topo.blocks) {
    bool all = std::all_of(nodes.begin(), nodes.end(), [&](const std::string& n) {
      return std::find(b.nodes.begin(), b.nodes.end(), n) != b.nodes.end();
    });
    if (all) out.push_back(b.level);
  }
  return out;
}

}  // namespace

TEST_CASE("block placement (property): over random topologies and workloads no job starts or is reserved across more than its level") {
  std::mt19937 rng(20261128);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int starts = 0, reserved = 0;
  for (int round = 0; round < 150; ++round) {
    int base = pick(1, 4), nblocks = pick(1, 6), outside = pick(0, 2);
    int total = base * nblocks + outside;
    auto s = cluster("n[1-" + std::to_string(total) + "]", 4);
    std::vector<int32_t> sizes;
    if (pick(0, 1)) {
      sizes.push_back(base);
      for (int k = 1; k < 4; ++k)
        if (pick(0, 1)) sizes.push_back(base << k);
    }
    s.topology = blocks_of(base, nblocks, sizes);
    if (pick(0, 2) == 0 && nblocks > 1) s.topology.blocks.back().nodes.pop_back();  // a block with a gap
    std::vector<std::pair<std::string, std::string>> labels;
    for (const auto& [name, n] : s.nodes) labels.emplace_back(name, "");
    BlockTopology topo = build_block_topology(s.topology, labels);
    uint64_t id = 1000;
    for (int r = pick(0, total); r > 0; --r)  // running jobs with limits: later starts and reservations
      start(s, id++, {"n" + std::to_string(pick(1, total))}, pick(1, 4));
    for (auto& [jid, job] : s.jobs) job.time_limit = 600 * pick(1, 6);
    std::map<uint64_t, int> fixed;  // job -> nodes asked for
    for (uint64_t j = 1; j <= static_cast<uint64_t>(pick(1, 12)); ++j) {
      JobBuilder b(j);
      if (pick(0, 2) == 0) {
        b.tasks(pick(1, 4 * total)).cpus(1);
      } else {
        int n = pick(1, total);
        b.nodes(n).cpus(pick(1, 4));
        fixed[j] = n;
      }
      apply(s, b);
    }
    Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
    std::vector<std::pair<JobId, const std::vector<NodeAlloc>*>> placed;  // starts, and backfill's reservations
    for (const auto& st : p.starts) placed.emplace_back(st.job, &st.alloc);
    for (const auto& r : p.reservations) placed.emplace_back(r.job, &r.alloc);
    reserved += static_cast<int>(p.reservations.size());
    for (const auto& [job, alloc] : placed) {
      struct { JobId job; } st{job};
      std::vector<std::string> nodes;
      for (const auto& a : *alloc) nodes.push_back(a.node);
      INFO("round " << round << " job " << st.job.value << " on " << compress_hostlist(nodes));
      for (const auto& n : nodes) CHECK(topo.node_bblock.count(n) == 1);  // never a node outside the blocks
      auto held = levels_holding(topo, nodes);
      if (auto f = fixed.find(st.job.value); f != fixed.end()) {
        int32_t level = topo.level_for(f->second);
        if (level >= 0) CHECK(std::find(held.begin(), held.end(), level) != held.end());
      } else {
        int32_t level = topo.level_for(static_cast<int32_t>(nodes.size()));
        if (level >= 0) CHECK(std::any_of(held.begin(), held.end(), [&](int32_t l) { return l <= level; }));
      }
      ++starts;
    }
  }
  CHECK(starts > 100);  // the workloads did start and reserve jobs
  CHECK(reserved > 20);
}

TEST_CASE("topology: an operator moves a node to another block (Topology=) - its agent's label and the config yield") {
  ClusterState s = cluster("n[1-8]", 4);
  s.topology = blocks_of(4, 2, {4});
  CHECK(block_of(block_topology_of(s), "n4") == "b1");
  REQUIRE(apply(s, NodeUpdated{"n4", 10, std::nullopt, std::nullopt, std::string("b2")}));
  BlockTopology moved = block_topology_of(s);
  CHECK(block_of(moved, "n4") == "b2");
  CHECK(compress_hostlist(moved.blocks[moved.node_bblock.at("n1")].nodes) == "n[1-3]");
  // A registration with another label does not move it back.
  NodeRegistered again{"n4", 20, 4, 64 * 1024, {}, {}, "b1", "", 0, false, 1};
  apply(s, again);
  CHECK(s.nodes.at("n4").block == "b2");
  CHECK(block_of(block_topology_of(s), "n4") == "b2");
  // The same update again changes nothing (not journaled twice).
  CHECK(!apply(s, NodeUpdated{"n4", 30, std::nullopt, std::nullopt, std::string("b2")}));
  // Moving every node of b1 elsewhere keeps b1's place (empty) and the base size.
  ClusterState all = cluster("n[1-8]", 4);
  all.topology = blocks_of(4, 2);  // no BlockSizes: the first block's size is the base size
  for (const char* n : {"n1", "n2", "n3", "n4"}) apply(all, NodeUpdated{n, 10, std::nullopt, std::nullopt, std::string("b9")});
  BlockTopology t = block_topology_of(all);
  CHECK(t.bblock_nodes == 4);
  CHECK(t.blocks[0].name == "b1");
  CHECK(t.blocks[0].nodes.empty());
  CHECK(block_of(t, "n1") == "b9");
  CHECK(block_of(t, "n5") == "b2");
}

TEST_CASE("fragmentation oracle (bf_topopt_delay): a job waits a little for a place that keeps a whole block whole") {
  auto s = cluster("n[1-8]", 4);
  s.topology = blocks_of(4, 2, {4});
  start(s, 100, {"n1", "n2", "n3"}, 4);  // b1 busy: three nodes free up at 300 s, n4 at 3600 s
  start(s, 101, {"n4"}, 4);
  s.jobs.at(JobId{100}).time_limit = 300;
  s.jobs.at(JobId{101}).time_limit = 3600;
  apply(s, JobBuilder(1).nodes(1).cpus(2).submitted(0));  // b2 is whole and idle
  SchedulerConfig slurm;                    // best fit, no oracle: b2 now
  Plan p = Scheduler(slurm).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n5"});
  SchedulerConfig hq = slurm;
  hq.bf_topopt_delay = 600;                 // it may wait up to 10 minutes: b1 at 300 s
  p = Scheduler(hq).schedule(s, 0);
  CHECK(started_nodes(p, 1).empty());
  REQUIRE(p.reservations.size() == 1);
  CHECK(p.reservations[0].start == 300);
  CHECK(block_of(build_block_topology(s.topology, unlabelled("n[1-8]")), p.reservations[0].alloc[0].node) == "b1");
  hq.bf_topopt_delay = 120;                 // b1 frees too late for a 2-minute delay: b2 now
  p = Scheduler(hq).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n5"});
  hq.bf_topopt_delay = 600;                 // the delay counts from eligibility: at 700 s it is spent
  s.jobs.at(JobId{100}).time_limit = 1000;
  p = Scheduler(hq).schedule(s, 700);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n5"});
  s.jobs.at(JobId{100}).time_limit = 300;
  p = Scheduler(hq).quick_pass(s, 0);       // the quick pass (FIFO) reserves it too
  CHECK(started_nodes(p, 1).empty());
  hq.bf_min_age_reserve = 3600;             // a job that gets no reservation is never held: it starts now
  p = Scheduler(hq).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n5"});
}

TEST_CASE("fragmentation score: counts per base block, and what a placement adds") {
  auto topo = build_block_topology(blocks_of(4, 4, {4, 8}), unlabelled("n[1-16]"));
  std::vector<int32_t> idle{4, 4, 4, 4};
  CHECK(block_fragmentation(topo, idle) == 0);
  std::vector<int32_t> one_in_b1{1, 0, 0, 0};
  CHECK(fragmentation_added(topo, idle, one_in_b1) == 1 + 4 + 8);  // the node, b1, b[1-2]
  std::vector<int32_t> b1_broken{3, 4, 4, 4};
  CHECK(fragmentation_added(topo, b1_broken, one_in_b1) == 1);      // nothing whole is broken
  std::vector<int32_t> one_in_b2{0, 1, 0, 0};
  CHECK(fragmentation_added(topo, b1_broken, one_in_b2) == 1 + 4);  // b2; b[1-2] was broken already
}

TEST_CASE("exclusive=topo: a job takes base blocks nothing else runs in, and keeps the rest of them from other jobs") {
  auto s = cluster("n[1-12]", 4);
  s.topology = blocks_of(4, 3, {4});
  start(s, 100, {"n1"}, 1);                       // b1 is in use
  s.jobs.at(JobId{100}).time_limit = 600;
  apply(s, JobBuilder(1).nodes(2).exclusive_topo());  // b2 or b3; best fit would take b1's free nodes
  for (uint64_t id = 2; id <= 4; ++id) apply(s, JobBuilder(id).nodes(2).cpus(4));
  apply(s, JobBuilder(5).nodes(1).exclusive_topo());  // no base block is left without a job
  apply(s, JobBuilder(6).nodes(1).cpus(1));           // fits beside job 1 on its own nodes, were they shared
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  auto topo = build_block_topology(s.topology, unlabelled("n[1-12]"));
  auto one = started_nodes(p, 1);
  REQUIRE(one.size() == 2);
  std::string mine = block_of(topo, one[0]);
  CHECK(block_of(topo, one[1]) == mine);
  CHECK(mine != "b1");
  for (uint64_t id : {2, 3, 4, 6}) {  // never beside job 1, though its block has room
    INFO("job " << id);
    auto nodes = started_nodes(p, id);
    CHECK_FALSE(nodes.empty());
    for (const auto& n : nodes) CHECK(block_of(topo, n) != mine);
  }
  CHECK(started_nodes(p, 5).empty());
  bool reserved = false;
  for (const auto& r : p.reservations)
    if (r.job.value == 5) {
      reserved = true;
      CHECK(r.start >= 600);  // when a base block is idle for good
    }
  CHECK(reserved);
}

TEST_CASE("exclusive=topo: a running job blocks the rest of its base blocks (BLOCKED), also by its partition") {
  auto s = cluster("n[1-8]", 4);
  s.topology = blocks_of(4, 2, {4});
  apply(s, JobBuilder(200).nodes(2).exclusive_topo());
  start(s, 200, {"n5", "n6"}, 4);
  start(s, 201, {"n1", "n2", "n3"}, 4);
  apply(s, JobBuilder(1).nodes(1).cpus(4));  // best fit would be b2 (2 free): n7 and n8 are blocked
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n4"});
  CHECK(blocked_by_exclusive_topo(s) == std::set<std::string>{"n7", "n8"});
  s.jobs.at(JobId{200}).spec.exclusive_topo = false;  // the same by the partition's exclusive_topo
  CHECK(blocked_by_exclusive_topo(s).empty());
  s.partitions.front().exclusive_topo = true;
  s.jobs.at(JobId{200}).partition = s.partitions.front().name;
  s.jobs.at(JobId{201}).partition = s.partitions.front().name;
  CHECK(blocked_by_exclusive_topo(s) == std::set<std::string>{"n4", "n7", "n8"});
}

TEST_CASE("segments (--segment): each segment inside one block of its own level, the fullest blocks first") {
  auto s = cluster("n[1-16]", 4);
  s.topology = blocks_of(4, 4, {4, 8, 16});
  start(s, 100, {"n1", "n2"}, 4);   // b1 and b3 have 2 nodes free, b2 and b4 all 4
  start(s, 101, {"n9", "n10"}, 4);
  apply(s, JobBuilder(1).nodes(4).cpus(4));                           // one block: b2 (best fit of the whole ones)
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n5", "n6", "n7", "n8"});
  s.jobs.at(JobId{1}).spec.segment = 2;                               // two segments of 2: b1's and b3's free pairs
  p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n3", "n4", "n11", "n12"});
  s.jobs.at(JobId{1}).spec.segment = 8;                               // larger than the job: no effect
  p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n5", "n6", "n7", "n8"});
}

TEST_CASE("segments (--segment): a job too large for any free block of its level starts in segments, which need no common block") {
  auto s = cluster("n[1-16]", 4);
  s.topology = blocks_of(4, 4, {4, 8, 16});
  start(s, 100, {"n1", "n2"}, 4);
  start(s, 101, {"n9", "n10"}, 4);
  apply(s, JobBuilder(1).nodes(8).cpus(4));  // level 1: b[1-2] and b[3-4] have 6 free each
  Plan p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1).empty());
  s.jobs.at(JobId{1}).spec.segment = 4;      // b2 and b4, in different pairs
  p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  CHECK(started_nodes(p, 1) == std::vector<std::string>{"n5", "n6", "n7", "n8", "n13", "n14", "n15", "n16"});
  s.jobs.at(JobId{1}).spec.segment = 2;      // pairs may share a block: the fullest first
  p = Scheduler(SchedulerConfig{}).schedule(s, 0);
  auto eight = started_nodes(p, 1);
  CHECK(eight.size() == 8);
  for (const char* n : {"n3", "n4", "n11", "n12"}) CHECK(std::find(eight.begin(), eight.end(), n) != eight.end());
}

TEST_CASE("segments (--segment): Slurm's errors - not a count, or not dividing the node count") {
  JobSpec spec;
  spec.script = std::string("#!/bin/sh\n");
  spec.nodes_min = 6;
  spec.nodes_set = true;
  spec.segment = 4;
  auto bad = validate_spec(spec);
  REQUIRE_FALSE(bad);
  CHECK(bad.message() == "--segment=4 does not fit the job size (6): node count must be evenly divisible by segment size");
  spec.segment = 3;
  CHECK(validate_spec(spec));
  spec.nodes_max = 8;  // -N 6-8: placed at 6, which 4 does not divide
  spec.segment = 4;
  bad = validate_spec(spec);
  REQUIRE_FALSE(bad);
  CHECK(bad.message().find("does not fit the job size (6)") != std::string::npos);
  spec.nodes_max = 0;
  spec.segment = 8;  // larger than the job: ignored
  CHECK(validate_spec(spec));
}
