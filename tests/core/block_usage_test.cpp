// Operators' view of a block topology (core/block_usage): per base block what its nodes do,
// and Slurm 24.11's fragmentation score, worked by hand from its definition.
#include <doctest/doctest.h>

#include <set>

#include "builders.hpp"
#include "core/block_usage.hpp"
#include "core/hostlist.hpp"

using namespace hq;

namespace {

// Four blocks of 2 nodes (b1 = n[1-2], ... b4 = n[7-8]), levels of 1, 2 and 4 blocks.
BlockTopology four_blocks() {
  TopologyConfig c;
  c.present = true;
  c.block_sizes = {2, 4, 8};
  for (int b = 0; b < 4; ++b) {
    std::string nodes = "n[" + std::to_string(2 * b + 1) + "-" + std::to_string(2 * b + 2) + "]";
    c.blocks.push_back({"b" + std::to_string(b + 1), nodes, *expand_hostlist(nodes)});
  }
  return build_block_topology(c, {});
}

int64_t frag_with_busy(const BlockTopology& t, const std::set<std::string>& busy) {
  return block_fragmentation(t, [&](const std::string& n) { return !busy.count(n); });
}

}  // namespace

TEST_CASE("fragmentation: 0 when every block is free - each group not wholly free counts its size once") {
  BlockTopology t = four_blocks();
  CHECK(frag_with_busy(t, {}) == 0);
  // n1 busy: b1 (1 block), b[1-2] (2) and b[1-4] (4) are not whole: 7 blocks x 2 nodes + 1 node.
  CHECK(frag_with_busy(t, {"n1"}) == 7 * 2 + 1);
  // n1 and n2 in the same block: the same groups, two nodes.
  CHECK(frag_with_busy(t, {"n1", "n2"}) == 7 * 2 + 2);
  // n1 and n3 in two blocks of one pair: b1, b2, b[1-2], b[1-4].
  CHECK(frag_with_busy(t, {"n1", "n3"}) == (1 + 1 + 2 + 4) * 2 + 2);
  // n1 and n5 in two pairs: b1, b3, both pairs, the four: worse than packing them in a pair.
  CHECK(frag_with_busy(t, {"n1", "n5"}) == (1 + 1 + 2 + 2 + 4) * 2 + 2);
  CHECK(frag_with_busy(t, {"n1", "n5"}) > frag_with_busy(t, {"n1", "n3"}));
}

TEST_CASE("block usage: idle, busy and out-of-service nodes per base block") {
  BlockTopology t = four_blocks();
  ClusterState s = test::cluster("n[1-8]", 4);
  test::start(s, 1, {"n1", "n2", "n3"}, 2);
  s.nodes.at("n8").drain = true;
  auto rows = block_usage(t, s.nodes);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].name == "b1");
  CHECK(rows[0].nodes == "n[1-2]");
  CHECK((rows[0].busy == 2 && rows[0].idle == 0));
  CHECK((rows[1].busy == 1 && rows[1].idle == 1));
  CHECK((rows[2].idle == 2 && rows[2].total == 2));
  CHECK((rows[3].idle == 1 && rows[3].unavailable == 1));
}
