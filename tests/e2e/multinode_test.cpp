// End to end: a multi-node job is held on every one of its nodes. The first runs the
// script; the others hold an alloc-only share (CPUs, cgroup) for its steps, get it again
// after their agent restarts, and let go of it when the job ends or is cancelled.
#include <doctest/doctest.h>

#include <filesystem>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

std::string held_line(const std::string& id) { return "job " + id + ": holding its share here for steps (alloc-only"; }
std::string released_line(const std::string& id) { return "job " + id + ": released its share here"; }

int held(const LocalCluster& c, int node, const std::string& id) {
  return count(slurp(c.dir() + "/e" + std::to_string(node) + ".log"), held_line(id));
}
int released(const LocalCluster& c, int node, const std::string& id) {
  return count(slurp(c.dir() + "/e" + std::to_string(node) + ".log"), released_line(id));
}

// The cgroup directory agent e<node> logged for its share of job `id` ("" without cgroups).
std::string held_cgroup(const LocalCluster& c, int node, const std::string& id) {
  std::string line = line_with(slurp(c.dir() + "/e" + std::to_string(node) + ".log"), held_line(id));
  size_t at = line.find("; cgroup ");
  if (at == std::string::npos) return "";
  std::string dir = line.substr(at + 9);
  return dir.substr(0, dir.rfind(')'));
}

// Waits until e2 and e3 hold job `id` (e2 `e2_times` times in its log, e3 `e3_times`: an
// agent restarted, the job runs again); e1 runs its script.
void check_held(const LocalCluster& c, const std::string& id, int e2_times = 1, int e3_times = 1) {
  for (int node : {2, 3}) {
    CAPTURE(node);
    INFO("agent log: " << slurp(c.dir() + "/e" + std::to_string(node) + ".log"));
    int times = node == 2 ? e2_times : e3_times;
    REQUIRE(wait_until([&] { return held(c, node, id) == times; }, 10));
    std::string cg = held_cgroup(c, node, id);
    if (!cg.empty()) CHECK(std::filesystem::exists(cg));
  }
  CHECK(held(c, 1, id) == 0);  // the first node runs the script
  // Its LaunchJob went out with theirs, but nothing orders its handling after theirs.
  CHECK(wait_until([&] { return std::filesystem::exists(c.spool(1, id)); }, 10));
}

void check_released(const LocalCluster& c, const std::string& id, int times = 1) {
  for (int node : {2, 3}) {
    CAPTURE(node);
    INFO("agent log: " << slurp(c.dir() + "/e" + std::to_string(node) + ".log"));
    CHECK(wait_until([&] { return released(c, node, id) == times; }, 10));
    std::string cg = held_cgroup(c, node, id);
    if (!cg.empty()) CHECK(wait_until([&] { return !std::filesystem::exists(cg); }, 5));
  }
}

}  // namespace

TEST_CASE("e2e: a 3-node job is held on each of its nodes and released when it ends or is cancelled") {
  LocalCluster c(3);
  REQUIRE(c.ready());

  // Ends by itself: the controller releases the other nodes once the end is durable.
  std::string done = c.submit("-N3 --wrap '" + until_file("go") + "'");
  REQUIRE(c.wait_state(done, "RUNNING", 10));
  check_held(c, done);
  // Agent e2 restarts: held shares are not adopted, so the controller sends it again; the
  // job keeps running.
  c.restart_agent_after_kill9(2);
  check_held(c, done, 2);
  CHECK(c.state(done) == "RUNNING");
  c.release("go");
  CHECK(c.wait_state(done, "COMPLETED", 15));
  check_released(c, done);

  // Cancelled: the cancel's kill reaches every node.
  std::string cancelled = c.submit("-N3 --wrap 'sleep 300'");
  REQUIRE(c.wait_state(cancelled, "RUNNING", 10));
  check_held(c, cancelled);
  CHECK(c.hq("cancel " + cancelled).rc == 0);
  CHECK(c.wait_state(cancelled, "CANCELLED", 15));
  check_released(c, cancelled);
  CHECK(c.state(done) == "COMPLETED");
}

TEST_CASE("e2e: a 3-node job requeued onto the same nodes lets go of its old share before it holds the new one") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::string id = c.submit("-N3 --wrap 'sleep 300'");
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  check_held(c, id);
  CHECK(c.hq("requeue " + id).rc == 0);
  // Three nodes only: the second run is on the same ones.
  check_held(c, id, 2, 2);
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  CHECK(c.hq("show job " + id + " --json").out.find("\"restart_count\": 1") != std::string::npos);
  for (int node : {2, 3}) {
    CAPTURE(node);
    std::string log = slurp(c.dir() + "/e" + std::to_string(node) + ".log");
    INFO("agent log: " << log);
    size_t first_hold = log.find(held_line(id)), release = log.find(released_line(id));
    size_t second_hold = log.find(held_line(id), first_hold + 1);
    REQUIRE(release != std::string::npos);
    CHECK(first_hold < release);
    CHECK(release < second_hold);
  }
  CHECK(c.hq("cancel " + id).rc == 0);
  CHECK(c.wait_state(id, "CANCELLED", 15));
  check_released(c, id, 2);
}

TEST_CASE("e2e: a node of a 3-node job other than its first fails - the job ends NODE_FAIL and its script dies") {
  LocalCluster c(3, 2, 2);  // nodes are declared DOWN after 2 s of silence
  REQUIRE(c.ready());
  std::string id = c.submit("-N3 --no-requeue --wrap 'echo $$ > script.pid; " + until_file("never") + "'");
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/script.pid").empty(); }, 10));
  std::string pid = slurp(c.dir() + "/script.pid");
  pid.erase(pid.find_last_not_of("\n") + 1);
  c.kill9_agent(3);
  CHECK(c.wait_state(id, "NODE_FAIL", 20));
  // The script on e1 (alive) is killed once the end is durable.
  CHECK(wait_until([&] { return sh("kill -0 " + pid + " 2>/dev/null").rc != 0; }, 15));
  c.respawn_agent(3);
}
