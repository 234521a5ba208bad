// A node's spans out of service (core/node_spans): which spans an event opens and closes,
// read against the state before it, and sreport's Down time from the spans the store has
// and those open now.
#include <doctest/doctest.h>

#include "builders.hpp"
#include "core/node_spans.hpp"

using namespace hq;

namespace {

ClusterState two_nodes() { return test::cluster("n[1-2]", 8); }

NodeSpan span(const std::string& node, const char* state, Time start, Time end) {
  NodeSpan s;
  s.node = node, s.state = state, s.start = start, s.end = end, s.cpus = 8;
  return s;
}

}  // namespace

TEST_CASE("node spans: down then up, drained then resumed, a new reason ends one span and begins another") {
  ClusterState s = two_nodes();
  NodeDownChanged down{"n1", 100, true, "Not responding"};
  auto opened = node_span_changes(s, down);
  REQUIRE(opened.size() == 1);
  CHECK(opened[0].state == "DOWN");
  CHECK(opened[0].start == 100);
  CHECK(opened[0].end == 0);
  CHECK(opened[0].reason == "Not responding");
  CHECK(opened[0].cpus == 8);
  REQUIRE(apply(s, down));
  CHECK(node_span_changes(s, down).empty());  // stale: nothing changes
  auto closed = node_span_changes(s, NodeDownChanged{"n1", 160, false, ""});
  REQUIRE(closed.size() == 1);
  CHECK(closed[0].start == 100);
  CHECK(closed[0].end == 160);
  auto renamed = node_span_changes(s, NodeDownChanged{"n1", 130, true, "GPUs short"});
  REQUIRE(renamed.size() == 2);
  CHECK(renamed[0].end == 130);
  CHECK(renamed[1].start == 130);
  CHECK(renamed[1].reason == "GPUs short");

  NodeDrainChanged drain{"n2", 200, true, "maintenance", 1000};
  auto drained = node_span_changes(s, drain);
  REQUIRE(drained.size() == 1);
  CHECK(drained[0].state == "DRAIN");
  CHECK(drained[0].uid == 1000);
  REQUIRE(apply(s, drain));
  CHECK(node_span_changes(s, NodeDrainChanged{"n1", 210, false, "", 0}).empty());  // n1 was not drained
  auto resumed = node_span_changes(s, NodeDrainChanged{"n2", 260, false, "", 0});
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].start == 200);
  CHECK(resumed[0].end == 260);
  CHECK(open_node_spans(s).size() == 2);  // n1 down, n2 drained
  CHECK(node_span_changes(s, NodeDownChanged{"nosuch", 1, true, "x"}).empty());
}

TEST_CASE("node spans: Down time is each node's union of its spans, stored or open now, counted once") {
  // n1: DOWN 100-200 and DRAIN 150-300 overlap: 100-300. n2: stored open span, also open in
  // memory: once. n3: open only in memory (before the store kept spans).
  std::vector<NodeSpan> stored = {span("n1", "DOWN", 100, 200), span("n1", "DRAIN", 150, 300), span("n2", "DOWN", 400, 0),
                                  span("n1", "DOWN", 500, 600)};
  std::vector<NodeSpan> open = {span("n2", "DOWN", 400, 0), span("n3", "DRAIN", 50, 0)};
  auto down = node_down_spans(stored, open);
  REQUIRE(down.size() == 4);
  CHECK(down[0].start == 100);
  CHECK(down[0].end == 300);
  CHECK(down[1].start == 500);
  CHECK(down[1].end == 600);
  CHECK(down[2].start == 400);
  CHECK(down[2].end == 0);
  CHECK(down[3].start == 50);
  CHECK(down[3].tres.at("cpu") == 8);
  CHECK(down[3].tres.at("node") == 1);
}

TEST_CASE("node spans: a drained dynamic node deleted and joining again is drained from its joining on") {
  ClusterState s = test::cluster("n1", 8);
  NodeRegistered join{"d1", 100, 4, 4096, {}, {}, "", "", 0, true, 0};
  REQUIRE(apply(s, join));
  REQUIRE(apply(s, NodeDrainChanged{"d1", 200, true, "flaky", 1000}));
  auto left = node_span_changes(s, NodeRemoved{"d1", 300});
  REQUIRE(left.size() == 1);
  CHECK(left[0].end == 300);
  REQUIRE(apply(s, NodeRemoved{"d1", 300}));
  join.time = 500;
  auto back = node_span_changes(s, join);
  REQUIRE(back.size() == 1);  // drained again from 500, not from 200
  CHECK(back[0].state == "DRAIN");
  CHECK(back[0].start == 500);
  CHECK(back[0].reason == "flaky");
  CHECK(back[0].cpus == 4);
  REQUIRE(apply(s, join));
  CHECK(s.nodes.at("d1").drain_time == 500);
  auto resumed = node_span_changes(s, NodeDrainChanged{"d1", 600, false, "", 0});
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].start == 500);  // the span it closes is the one opened at the join
}
