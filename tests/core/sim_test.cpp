// hq sim (core/sim): SWF parsing, and the topology measures of a replay (blocks spanned,
// large jobs' waits, the fragmentation score over time) with the topology on and off.
#include <doctest/doctest.h>

#include "core/hostlist.hpp"
#include "core/sim.hpp"

using namespace hq;

namespace {

// n[1-4] of 2 CPUs in two blocks of two: b1 = n[1-2], b2 = n[3-4].
ClusterConfig two_blocks() {
  ClusterConfig c = uniform_cluster_config(*expand_hostlist("n[1-4]"), 2, 1024, "batch");
  c.topology.present = true;
  c.topology.block_sizes = {2};
  for (int b = 0; b < 2; ++b) {
    BlockConfig bc;
    bc.name = "b" + std::to_string(b + 1);
    bc.nodes = *expand_hostlist("n[" + std::to_string(2 * b + 1) + "-" + std::to_string(2 * b + 2) + "]");
    bc.nodes_expr = compress_hostlist(bc.nodes);
    c.topology.blocks.push_back(bc);
  }
  return c;
}

}  // namespace

TEST_CASE("sim: SWF lines, the whole-nodes header, malformed lines counted") {
  SwfTrace t = parse_swf("; sizes are whole nodes x 2 CPUs\n1 0 -1 100 4 -1 -1 4 200 -1 1 7\nnot a job\n\n2 5 -1 50 2\n");
  CHECK(t.whole_nodes);
  REQUIRE(t.jobs.size() == 1);
  CHECK(t.jobs[0].procs == 4);
  CHECK(t.jobs[0].limit == 200);
  CHECK(t.jobs[0].user == 7);
  CHECK(t.bad_lines == 2);
}

TEST_CASE("sim: with a topology a 2-node job stays in one block - off, it spans two - and large jobs' waits are apart") {
  // A 1-node job on n1 (the first node), then a 2-node one and a 2-node one after it.
  SwfTrace t = parse_swf("; whole nodes\n1 0 -1 1000 2 -1 -1 2 1000\n2 10 -1 100 4 -1 -1 4 100\n3 20 -1 100 4 -1 -1 4 100\n");
  SimOptions o;
  o.whole_nodes = true;
  ClusterConfig c = two_blocks();
  auto on = simulate(t, c, o, nullptr);
  REQUIRE(on);
  CHECK(on->blocks);
  CHECK(on->mean_blocks == doctest::Approx(1.0));  // job 2 in b2; job 3 waits for b2 (b1 has n1 busy)
  CHECK(on->large_jobs == 2);
  CHECK(on->large_mean_wait == doctest::Approx((0 + 90) / 2.0));  // job 3 starts when job 2 ends, at 110
  CHECK(on->large_within_hour == doctest::Approx(1.0));
  CHECK(on->mean_fragmentation > 0);
  o.topology_off = true;
  auto off = simulate(t, c, o, nullptr);
  REQUIRE(off);
  CHECK(off->mean_blocks == doctest::Approx((1 + 2 + 2) / 3.0));  // n[2-3] spans b1 and b2
  o.large_nodes = 3;
  auto none = simulate(t, c, o, nullptr);
  REQUIRE(none);
  CHECK(none->large_jobs == 0);
}
