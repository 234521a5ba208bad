#include <doctest/doctest.h>

#include "builders.hpp"
#include "core/placement.hpp"
#include "core/scheduler.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;

namespace {
Plan run(const ClusterState& s) { return make_first_fit_scheduler()->schedule(s, 0); }
std::string reason_of(const Plan& p, uint64_t id) {
  for (const auto& [j, r] : p.reasons)
    if (j.value == id) return r;
  return "";
}
}  // namespace

TEST_CASE("first fit places by priority, then job id") {
  auto s = cluster("n[1-2]", 4);
  apply(s, JobBuilder(1).cpus(4));
  apply(s, JobBuilder(2).cpus(4).priority(5));
  apply(s, JobBuilder(3).cpus(4));
  Plan p = run(s);
  REQUIRE(p.starts.size() == 2);
  CHECK(p.starts[0].job.value == 2);
  CHECK(p.starts[0].alloc[0].node == "n1");
  CHECK(p.starts[1].job.value == 1);
  CHECK(p.starts[1].alloc[0].node == "n2");
  CHECK(reason_of(p, 3) == "Resources");
}

TEST_CASE("a blocked job blocks lower priority in its partition; holds are skipped") {
  auto s = cluster("n[1-2]", 4);
  apply(s, JobBuilder(1).cpus(4).held());
  apply(s, JobBuilder(2).nodes(3));   // cannot fit now: 2 nodes
  apply(s, JobBuilder(3).cpus(1));
  Plan p = run(s);
  CHECK(p.starts.empty());
  CHECK(reason_of(p, 1) == "JobHeldUser");
  CHECK(reason_of(p, 2) == "Resources");
  CHECK(reason_of(p, 3) == "Priority");
}

TEST_CASE("multi-node jobs and memory") {
  auto s = cluster("n[1-4]", 8, 1000);
  apply(s, JobBuilder(1).nodes(3).tasks(6).cpus(2));
  apply(s, JobBuilder(2).mem(2000));
  Plan p = run(s);
  REQUIRE(p.starts.size() == 1);
  REQUIRE(p.starts[0].alloc.size() == 3);
  for (const auto& a : p.starts[0].alloc) {
    CHECK(a.cpus == 4);
    CHECK(a.tasks == 2);
  }
  CHECK(reason_of(p, 2) == "Resources");
  CHECK(!check_ever_runnable(s, JobBuilder(2).mem(2000).build()).is_ok());
  CHECK(check_ever_runnable(s, JobBuilder(3).nodes(4).build()).is_ok());
  CHECK(!check_ever_runnable(s, JobBuilder(3).nodes(5).build()).is_ok());
}

TEST_CASE("tasks spread over nodes when -n exceeds one node") {
  std::vector<FreeNode> nodes = {{"a", 2, 100}, {"b", 4, 100}, {"c", 4, 100}};
  JobSpec spec;
  spec.ntasks = 7;
  spec.ntasks_set = true;
  auto alloc = place_first_fit(spec, nodes);
  REQUIRE(alloc.size() == 3);
  CHECK(alloc[0].tasks + alloc[1].tasks + alloc[2].tasks == 7);
  spec.ntasks = 4;
  alloc = place_first_fit(spec, nodes);
  REQUIRE(alloc.size() == 1);  // prefers a single node that holds all tasks
  CHECK(alloc[0].node == "b");
  spec.ntasks = 11;
  CHECK(place_first_fit(spec, nodes).empty());
}

TEST_CASE("unresponsive nodes are not scheduled") {
  auto s = cluster("n[1-2]", 4);
  s.nodes.at("n1").responding = false;
  apply(s, JobBuilder(1));
  Plan p = run(s);
  REQUIRE(p.starts.size() == 1);
  CHECK(p.starts[0].alloc[0].node == "n2");
}
