// End to end: backfill on a real local cluster, plus hold/release, arrays,
// dependencies, --test-only and explain through the real binary.
#include <doctest/doctest.h>

#include <regex>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

// An int64 field of the first job in `hq queue --json` / `hq show job --json` output.
int64_t json_int(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": \"?(-?[0-9]+)"))) return 0;
  return std::stoll(m[1]);
}

}  // namespace

TEST_CASE("e2e: a short low-priority job backfills ahead of a blocked wide job, which starts on time") {
  LocalCluster c(2, 1, 20, "[scheduler]\nbf_resolution = 1\n");
  REQUIRE(c.ready());
  std::string a = c.submit("-N1 -t 8s --wrap 'sleep 5'");            // holds e1 for up to 8 s
  REQUIRE(c.wait_state(a, "RUNNING", 10));
  std::string wide = c.submit("-N2 -t 10s --wrap 'sleep 1'");       // needs both nodes
  std::string longer = c.submit("-N1 -t 30s --wrap 'sleep 1'");     // would delay the wide job
  std::string shortj = c.submit("-N1 -t 3s --wrap 'sleep 1'");      // ends before the reservation
  REQUIRE(c.wait_state(shortj, "RUNNING", 10));
  CHECK(c.state(wide) == "PENDING");
  CHECK(c.state(longer) == "PENDING");
  auto q = c.hq("queue --json -j " + wide);
  int64_t expected = json_int(q.out, "expected_start");
  CHECK(expected > 0);
  CHECK(q.out.find("\"reason\": \"Resources\"") != std::string::npos);
  auto start_view = c.hq("queue --start -h -j " + wide);
  CHECK(start_view.out.find("N/A") == std::string::npos);
  CHECK(start_view.out.find("e[1-2]") != std::string::npos);
  auto explain = c.hq("explain " + wide);
  CHECK(explain.out.find("expected to start at") != std::string::npos);
  CHECK(explain.out.find("busy") != std::string::npos);
  REQUIRE(c.wait_state(wide, "RUNNING", 20));
  int64_t started = json_int(c.hq("show job --json " + wide).out, "start_time");
  CHECK(started > 0);
  CHECK(started <= expected);
  int64_t short_start = json_int(c.hq("show job --json " + shortj).out, "start_time");
  CHECK(short_start < started);
  CHECK(c.wait_state(longer, "COMPLETED", 40));
}

TEST_CASE("e2e: hold/release, arrays with a throttle, dependencies, test-only") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  std::string held = c.submit("--hold --wrap true");
  CHECK(c.state(held) == "PENDING");
  CHECK(c.hq("release " + held).rc == 0);
  CHECK(c.wait_state(held, "COMPLETED", 15));
  std::string h2 = c.submit("--wrap true");
  (void)h2;

  std::string arr = c.submit("--array=0-5%2 --wrap 'sleep 1; echo $SLURM_ARRAY_TASK_ID'");
  REQUIRE(arr.find("ERROR") == std::string::npos);
  auto running = [&] {
    auto r = c.hq("queue -h -t R");
    int n = 0;
    for (size_t p = 0; (p = r.out.find(arr + "_", p)) != std::string::npos; ++p) ++n;
    return n;
  };
  int max_running = 0;
  wait_until([&] { max_running = std::max(max_running, running()); return false; }, 2);
  CHECK(max_running <= 2);
  CHECK(max_running >= 1);

  std::string after = c.submit("-d afterok:" + arr + " --wrap true");
  std::string never = c.submit("-d afternotok:" + arr + " --wrap true");
  CHECK(c.wait_state(after, "COMPLETED", 40));
  auto q = c.hq("queue -h -j " + never);
  CHECK(q.out.find("DependencyNeverSatisfied") != std::string::npos);
  CHECK(c.hq("cancel " + never).rc == 0);

  auto bad = c.hq("submit -N 5 --wrap true");
  CHECK(bad.rc != 0);
  CHECK(bad.out.find("Node count specification invalid") != std::string::npos);
  auto test = c.hq("submit --test-only -N2 --wrap true");
  CHECK(test.rc == 0);
  CHECK(test.out.find("to start at") != std::string::npos);
  CHECK(test.out.find("e[1-2]") != std::string::npos);
}

TEST_CASE("e2e: a higher-tier job preempts a lower-tier one, which is requeued and runs again") {
  const std::string parts =
      "[scheduler]\npreempt_type = \"partition_prio\"\n"
      "[[partition]]\nname = \"low\"\nnodes = \"e1\"\npreempt_mode = \"REQUEUE\"\ngrace_time = \"1s\"\n"
      "[[partition]]\nname = \"high\"\nnodes = \"e1\"\npriority_tier = 2\n"
      "[[partition]]\nname = \"stay\"\nnodes = \"e1\"\npreempt_mode = \"CANCEL\"\n";
  LocalCluster c(1, 2, 20, parts);
  REQUIRE(c.ready());
  std::string low = c.submit("-p low -c 2 --wrap 'sleep 60'");
  REQUIRE(c.wait_state(low, "RUNNING", 10));
  std::string high = c.submit("-p high -c 2 --wrap '" + until_file("go") + "'");
  REQUIRE(c.wait_state(high, "RUNNING", 15));
  auto shown = c.hq("show job " + low);
  CHECK(shown.out.find("JobState=PENDING") != std::string::npos);
  CHECK(shown.out.find("Restarts=1") != std::string::npos);
  c.release("go");
  CHECK(c.wait_state(high, "COMPLETED", 15));
  CHECK(c.wait_state(low, "RUNNING", 15));

  std::string top = c.submit("-p high -c 2 --wrap true");     // preempts the requeued job again
  CHECK(c.wait_state(top, "COMPLETED", 15));
  CHECK(c.wait_state(low, "RUNNING", 15));
  CHECK(c.hq("cancel " + low).rc == 0);

  std::string doomed = c.submit("-p stay -c 2 --wrap 'sleep 60'");   // CANCEL mode: ends PREEMPTED
  REQUIRE(c.wait_state(doomed, "RUNNING", 15));
  std::string again = c.submit("-p high -c 2 --wrap true");
  CHECK(c.wait_state(again, "COMPLETED", 15));
  CHECK(c.wait_state(doomed, "PREEMPTED", 5));
}

TEST_CASE("e2e: allow_groups admits members of a listed group only") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  const std::string parts =
      "[[partition]]\nname = \"members\"\nnodes = \"e1\"\nallow_groups = [\"65534\"]\n"
      "[[partition]]\nname = \"others\"\nnodes = \"e1\"\nallow_groups = [\"root\"]\n";
  LocalCluster c(1, 2, 20, parts);
  REQUIRE(c.ready());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  auto in = as_user(65534, shared, "submit --parsable --hold -p members --wrap true");
  CHECK(in.rc == 0);
  auto out = as_user(65534, shared, "submit --parsable --hold -p others --wrap true");
  CHECK(out.rc != 0);
  CHECK(out.out.find("group not permitted to use this partition (others allows groups root)") != std::string::npos);
  CHECK(c.hq("submit --hold -p others --wrap true").rc == 0);  // root may use every partition
}

TEST_CASE("e2e: --time-min - a job that would delay a blocked wide job starts now with a shorter limit") {
  LocalCluster c(2, 1, 20, "[scheduler]\nbf_resolution = 1\n");
  REQUIRE(c.ready());
  std::string a = c.submit("-N1 -t 20s --wrap 'sleep 15'");        // holds e1 for up to 20 s
  REQUIRE(c.wait_state(a, "RUNNING", 10));
  std::string wide = c.submit("-N2 -t 10s --wrap 'sleep 1'");      // needs both nodes
  std::string flexible = c.submit("-N1 -t 5:00 --time-min=5s --wrap 'sleep 1'");
  REQUIRE(c.wait_state(flexible, "RUNNING", 10));
  CHECK(c.state(wide) == "PENDING");
  auto shown = c.hq("show job " + flexible).out;
  CHECK(shown.find("TimeMin=00:00:05") != std::string::npos);
  size_t at = shown.find("TimeLimit=00:00:");  // lowered from 5 minutes to seconds
  REQUIRE(at != std::string::npos);
  int limit = std::stoi(shown.substr(at + 16, 2));
  CHECK(limit >= 5);
  CHECK(limit <= 20);  // no later than e1 comes back for the wide job
  auto refused = c.hq("submit -t 1 --time-min=5 --wrap true");
  CHECK(refused.rc != 0);
  CHECK(refused.out.find("Invalid time-min specification") != std::string::npos);
  c.hq("cancel " + a);
}
