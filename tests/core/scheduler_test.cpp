#include <doctest/doctest.h>

#include <map>
#include <random>

#include "builders.hpp"
#include "core/admission.hpp"
#include "core/constraint.hpp"
#include "core/scheduler.hpp"

using namespace hq;
using hq::test::add_partition;
using hq::test::cluster;
using hq::test::JobBuilder;
using hq::test::start;

namespace {
SchedulerConfig with_policy(SchedPolicy p) {
  SchedulerConfig c;
  c.policy = p;
  return c;
}
Plan run(const ClusterState& s, Time now = 0, SchedPolicy p = SchedPolicy::kBackfill) {
  return Scheduler(with_policy(p)).schedule(s, now);
}
const PendingInfo* info(const Plan& p, uint64_t id) {
  for (const auto& i : p.pending)
    if (i.job.value == id) return &i;
  return nullptr;
}
std::string reason_of(const Plan& p, uint64_t id) { return info(p, id) ? std::string(to_string(info(p, id)->reason)) : "started"; }
// The nodes a pending job's reservation holds ("" without one).
std::string sched_nodes(const Plan& p, uint64_t id) {
  const PendingInfo* i = info(p, id);
  return i && i->reservation >= 0 ? alloc_hostlist(p.reservations[static_cast<size_t>(i->reservation)].alloc) : "";
}
const StartDecision* started(const Plan& p, uint64_t id) {
  for (const auto& s : p.starts)
    if (s.job.value == id) return &s;
  return nullptr;
}
std::vector<std::string> nodes_of(const StartDecision* s) {
  std::vector<std::string> out;
  if (s) for (const auto& a : s->alloc) out.push_back(a.node);
  return out;
}
}  // namespace

TEST_CASE("priority order, then job id - best fit keeps whole nodes free") {
  auto s = cluster("n[1-2]", 4);
  start(s, 100, {"n2"}, 2);
  apply(s, JobBuilder(1).cpus(2));
  apply(s, JobBuilder(2).cpus(4).priority(5));
  Plan p = run(s);
  REQUIRE(p.starts.size() == 2);
  CHECK(p.starts[0].job.value == 2);  // higher priority first, onto the only free whole node
  CHECK(nodes_of(&p.starts[0]) == std::vector<std::string>{"n1"});
  CHECK(nodes_of(&p.starts[1]) == std::vector<std::string>{"n2"});
}

TEST_CASE("strict priority under fifo - holds and reasons") {
  auto s = cluster("n[1-2]", 4);
  apply(s, JobBuilder(1).cpus(4).held());
  apply(s, JobBuilder(2).nodes(3));   // never fits now: only 2 nodes
  apply(s, JobBuilder(3).cpus(1));
  Plan p = run(s, 0, SchedPolicy::kFifo);
  CHECK(p.starts.empty());
  CHECK(info(p, 1) == nullptr);  // a held job is not a pass's business: it shows its hold already
  CHECK(s.jobs.at(JobId{1}).reason == JobReason::kJobHeldUser);
  CHECK(reason_of(p, 2) == "Resources");
  CHECK(reason_of(p, 3) == "Priority");
}

TEST_CASE("backfill: a short job starts ahead of a blocked wide job, a long one does not") {
  auto s = cluster("n[1-4]", 1);
  start(s, 100, {"n1", "n2"}, 1);                       // busy until t=600
  s.jobs.at(JobId{100}).time_limit = 600;
  apply(s, JobBuilder(1).nodes(4).limit(600).priority(10));  // needs all 4 nodes: t=600
  apply(s, JobBuilder(2).nodes(1).limit(300));         // ends by 300 < 600: backfills
  apply(s, JobBuilder(3).nodes(1).limit(1200));        // would delay job 1
  Plan p = run(s);
  CHECK(reason_of(p, 1) == "Resources");
  CHECK(info(p, 1)->expected_start == 600);
  CHECK(sched_nodes(p, 1) == "n[1-4]");
  CHECK(started(p, 2) != nullptr);
  CHECK(reason_of(p, 3) == "Priority");
  REQUIRE(p.reservations.size() == 2);  // job 3 is reserved after job 1
  CHECK(p.reservations[1].start >= 1200);
  Plan fifo = run(s, 0, SchedPolicy::kFifo);
  CHECK(fifo.starts.empty());
}

TEST_CASE("--time-min: backfill lowers a limit toward it so that the job starts now - never below it") {
  auto s = cluster("n[1-2]", 1);
  start(s, 100, {"n1"}, 1);
  s.jobs.at(JobId{100}).time_limit = 3600;                    // n1 busy until t=3600
  apply(s, JobBuilder(1).nodes(2).limit(3600).priority(10));  // both nodes at t=3600
  apply(s, JobBuilder(2).limit(7200).time_min(600));          // n2 is free until 3600: lowered
  apply(s, JobBuilder(3).limit(7200).time_min(5400));         // even its minimum would delay job 1
  Plan p = run(s);
  REQUIRE(started(p, 2) != nullptr);
  Duration lowered = started(p, 2)->time_limit;
  CHECK(lowered >= 600);
  CHECK(lowered <= 3600);
  CHECK(lowered > 3600 - 2 * 60);  // as long as fits, to the resolution
  CHECK(started(p, 3) == nullptr);
  CHECK(info(p, 1)->expected_start == 3600);  // not delayed
  // Without --time-min the same job only waits; a job that starts as it is keeps its limit.
  auto t = cluster("n[1-2]", 1);
  start(t, 100, {"n1"}, 1);
  t.jobs.at(JobId{100}).time_limit = 3600;
  apply(t, JobBuilder(1).nodes(2).limit(3600).priority(10));
  apply(t, JobBuilder(2).limit(7200));
  CHECK(started(run(t), 2) == nullptr);
  auto u = cluster("n1", 1);
  apply(u, JobBuilder(4).limit(7200).time_min(60));
  REQUIRE(started(run(u), 4) != nullptr);
  CHECK(started(run(u), 4)->time_limit == 0);  // unchanged
  // The lowered limit is the job's from its start on (journaled with the start).
  apply(s, JobStarted{JobId{2}, 0, started(p, 2)->alloc, "", lowered});
  CHECK(s.jobs.at(JobId{2}).time_limit == lowered);
}

TEST_CASE("easy reserves for the first blocked job only - backfill for every tested one") {
  auto s = cluster("n[1-4]", 1);
  start(s, 100, {"n1", "n2", "n3"}, 1);
  s.jobs.at(JobId{100}).time_limit = 600;
  apply(s, JobBuilder(1).nodes(4).limit(600).priority(10));
  apply(s, JobBuilder(2).nodes(2).limit(600).priority(5));
  apply(s, JobBuilder(3).nodes(1).limit(6000));  // fits now on n4 but would delay job 1
  Plan easy = run(s, 0, SchedPolicy::kEasy);
  CHECK(easy.reservations.size() == 1);
  CHECK(info(easy, 2)->expected_start == 0);
  CHECK(started(easy, 3) == nullptr);
  Plan bf = run(s);
  CHECK(bf.reservations.size() == 3);
  CHECK(info(bf, 2)->expected_start == 1200);
  SchedulerConfig cfg;
  cfg.bf_max_job_test = 1;  // only job 2 is tested past job 1
  Plan capped = Scheduler(cfg).schedule(s, 0);
  CHECK(capped.stats.tested == 1);
  CHECK(reason_of(capped, 3) == "Priority");
  CHECK(info(capped, 3)->expected_start == 0);
}

TEST_CASE("multi-node jobs and memory - admission refuses what could never run, in Slurm's words") {
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
  CHECK(check_ever_runnable(s, JobBuilder(2).mem(2000).build()).message() ==
        "Requested node configuration is not available: partition batch has no node that could take this job: "
        "n[1-4] too small for 2000 MiB of memory");
  CHECK(check_ever_runnable(s, JobBuilder(3).nodes(4).build()).is_ok());
  CHECK(check_ever_runnable(s, JobBuilder(3).nodes(5).build()).message() ==
        "Node count specification invalid: the job needs 5 nodes, partition batch has 4");
  CHECK(check_ever_runnable(s, JobBuilder(3).exclusive().cpus(16).build()).message() ==
        "Requested node configuration is not available: partition batch has no node that could take this job: "
        "n[1-4] too small for 16 CPUs");
}

TEST_CASE("admission finds a partition's nodes whatever their order in its list, and skips names the cluster lacks") {
  auto s = cluster("n[1-12]", 8, 1000);
  REQUIRE(s.partitions.size() == 1);
  // Out of the node table's order, with gaps and a name no node has.
  s.partitions[0].nodes = {"n10", "n2", "n3", "n12", "nowhere", "n1", "n11"};
  CHECK(check_ever_runnable(s, JobBuilder(1).nodes(6).build()).is_ok());
  CHECK(check_ever_runnable(s, JobBuilder(2).nodes(7).build()).message() ==
        "Node count specification invalid: the job needs 7 nodes, partition batch has 6");
  CHECK(check_ever_runnable(s, JobBuilder(3).mem(2000).build()).message() ==
        "Requested node configuration is not available: partition batch has no node that could take this job: "
        "n[10,2-3,12,1,11] too small for 2000 MiB of memory");
}

TEST_CASE("an allocation lists its nodes in node order, whichever best fit took first - its first node is the nodelist's") {
  auto s = cluster("n[1-3]", 4);
  start(s, 100, {"n3"}, 2);  // n3 is the best fit for 2 CPUs
  apply(s, JobBuilder(1).nodes(2).tasks(2).cpus(2));
  Plan p = run(s);
  CHECK(nodes_of(started(p, 1)) == std::vector<std::string>{"n1", "n3"});
}

TEST_CASE("-w nodes are always in the allocation: more nodes are added when the job needs them, spread tasks cover each") {
  auto s = cluster("n[1-4]", 4);
  apply(s, JobBuilder(1).nodes(3).nodelist("n4"));
  apply(s, JobBuilder(2).tasks(2).nodelist("n1,n2"));
  Plan p = run(s);
  auto wide = nodes_of(started(p, 1));
  CHECK(wide.size() == 3);
  CHECK(std::find(wide.begin(), wide.end(), "n4") != wide.end());
  REQUIRE(started(p, 2));
  CHECK(nodes_of(started(p, 2)) == std::vector<std::string>{"n1", "n2"});
  for (const auto& a : started(p, 2)->alloc) CHECK(a.tasks == 1);
  CHECK(check_ever_runnable(s, JobBuilder(3).nodelist("n1").mem(100000).build()).message() ==
        "Requested node configuration is not available: node n1 (--nodelist) is too small for 100000 MiB of memory");
  CHECK(check_ever_runnable(s, JobBuilder(3).tasks(1).nodelist("n1,n2").build()).message() ==
        "Requested node configuration is not available: it runs on at most 1 node(s), fewer than the 2 --nodelist nodes");
}

TEST_CASE("unresponsive, down, drained and unregistered nodes are not scheduled") {
  auto s = cluster("n[1-5]", 4);
  s.nodes.at("n1").responding = false;
  s.nodes.at("n2").down = true;
  s.nodes.at("n3").registered = false;
  s.nodes.at("n4").drain = true;
  apply(s, JobBuilder(1));
  apply(s, JobBuilder(2).cpus(4));
  Plan p = run(s);
  REQUIRE(p.starts.size() == 1);
  CHECK(nodes_of(started(p, 1)) == std::vector<std::string>{"n5"});
  CHECK(reason_of(p, 2) == "Resources");
  CHECK(check_ever_runnable(s, JobBuilder(3).nodes(5).build()).is_ok());  // they may come back
}

TEST_CASE("constraint expressions parse and select nodes") {
  CHECK(parse_constraint("a&b").is_ok());
  CHECK(parse_constraint("(a|b)&c").value().alternatives[0].any_of.size() == 2);
  CHECK(parse_constraint("[r1|r2|r3]").value().alternatives.size() == 3);
  CHECK(parse_constraint("[r1*2&r2*4]").value().alternatives[0].counts.size() == 2);
  CHECK_FALSE(parse_constraint("a|b*2").is_ok());
  CHECK_FALSE(parse_constraint("a&").is_ok());
  CHECK_FALSE(parse_constraint("(a").is_ok());
  CHECK_FALSE(parse_constraint("a$b").is_ok());

  auto s = cluster("n[1-6]", 2);
  for (auto n : {"n1", "n2"}) s.nodes[n].features = {"gpu", "a100"};
  for (auto n : {"n3", "n4"}) s.nodes[n].features = {"gpu", "h100"};
  s.nodes["n5"].features = {"bigmem"};
  apply(s, JobBuilder(1).nodes(2).constraint("gpu&h100"));
  apply(s, JobBuilder(2).nodes(1).constraint("a100|nosuch"));
  apply(s, JobBuilder(3).nodes(2).cpus(2).constraint("[a100|bigmem]"));  // both nodes the same kind
  Plan p = run(s);
  CHECK(nodes_of(started(p, 1)) == std::vector<std::string>{"n3", "n4"});
  CHECK(nodes_of(started(p, 2)) == std::vector<std::string>{"n1"});
  CHECK(reason_of(p, 3) == "Resources");  // one a100 left, one bigmem: not the same kind

  auto c = cluster("n[1-4]", 1);
  c.nodes["n4"].features = {"fast"};
  apply(c, JobBuilder(1).nodes(2).constraint("fast*1"));
  Plan q = run(c);
  auto got = nodes_of(started(q, 1));
  CHECK(std::find(got.begin(), got.end(), "n4") != got.end());
  CHECK_FALSE(check_ever_runnable(c, JobBuilder(9).nodes(1).constraint("nosuch").build()).is_ok());
  CHECK_FALSE(check_ever_runnable(c, JobBuilder(9).nodes(2).constraint("fast*2").build()).is_ok());
}

TEST_CASE("multi-partition jobs start where they can start first") {
  auto s = cluster("n[1-2]", 1);
  add_partition(s, "gpu", "n3");
  s.nodes["n3"].name = "n3";
  s.nodes["n3"].cpus = 1;
  s.nodes["n3"].mem_mib = 1024;
  s.nodes["n3"].registered = s.nodes["n3"].responding = true;
  start(s, 100, {"n1", "n2"}, 1);
  apply(s, JobBuilder(1).partitions({"batch", "gpu"}));
  Plan p = run(s);
  REQUIRE(started(p, 1));
  CHECK(started(p, 1)->partition == "gpu");
  CHECK(nodes_of(started(p, 1)) == std::vector<std::string>{"n3"});
}

TEST_CASE("partition state and limits give Slurm's reasons") {
  auto s = cluster("n[1-4]", 1);
  apply(s, JobBuilder(1).limit(7200));
  apply(s, JobBuilder(2).nodes(3));
  s.partitions[0].max_time = 3600;
  s.partitions[0].max_nodes = 2;
  Plan p = run(s);
  CHECK(reason_of(p, 1) == "PartitionTimeLimit");
  CHECK(reason_of(p, 2) == "PartitionNodeLimit");
  s.partitions[0] = PartitionConfig{s.partitions[0].name, "", s.partitions[0].nodes};
  s.partitions[0].state = PartitionState::kDown;
  CHECK(reason_of(run(s), 1) == "PartitionDown");
  s.partitions[0].state = PartitionState::kDrain;  // queued jobs still run
  CHECK(started(run(s), 1));
}

TEST_CASE("exclusive, nodelist, exclude and node weight") {
  auto s = cluster("n[1-4]", 4);
  s.nodes["n1"].weight = 10;
  apply(s, JobBuilder(1).cpus(1));
  Plan p = run(s);
  CHECK(nodes_of(started(p, 1)) == std::vector<std::string>{"n2"});  // lower weight first
  start(s, 1, {"n2"}, 1);
  apply(s, JobBuilder(2).exclusive());
  apply(s, JobBuilder(3).nodelist("n2"));
  apply(s, JobBuilder(4).exclude("n[2-4]"));
  p = run(s);
  REQUIRE(started(p, 2));
  CHECK(started(p, 2)->alloc[0].cpus == 4);
  CHECK(started(p, 2)->alloc[0].node != "n2");
  CHECK(nodes_of(started(p, 3)) == std::vector<std::string>{"n2"});
  CHECK(nodes_of(started(p, 4)) == std::vector<std::string>{"n1"});
}

namespace {
// Two partitions over the same nodes: "low" (tier 1, preemptable) and "high" (tier 2).
ClusterState tiered(const std::string& nodes, int cpus, PreemptMode mode, Duration grace) {
  auto s = cluster(nodes, cpus);
  PartitionConfig& low = s.partitions[0];
  low.preempt_mode = mode;
  low.grace_time = grace;
  add_partition(s, "high", nodes).priority_tier = 2;
  return s;
}
Plan run_preempt(const ClusterState& s, Time now, Duration exempt = 0) {
  SchedulerConfig c;
  c.preempt_partition_prio = true;
  c.preempt_exempt_time = exempt;
  return Scheduler(c).schedule(s, now);
}
}  // namespace

TEST_CASE("preemption by partition tier picks the fewest, youngest lower-tier jobs") {
  auto s = tiered("n[1-3]", 2, PreemptMode::kRequeue, 120);
  start(s, 1, {"n1"}, 2, 0);
  start(s, 2, {"n2"}, 2, 50);    // youngest: preempted first
  start(s, 3, {"n3"}, 1, 10);    // n3 keeps 1 CPU free
  apply(s, JobBuilder(10).partition("high").cpus(2).submitted(100));
  Plan p = run_preempt(s, 100);
  REQUIRE(p.preemptions.size() == 1);
  CHECK(p.preemptions[0].victim == JobId{2});
  CHECK(p.preemptions[0].preemptor == JobId{10});
  CHECK(p.preemptions[0].mode == PreemptMode::kRequeue);
  CHECK(p.preemptions[0].grace == 120);
  REQUIRE(info(p, 10));
  CHECK(sched_nodes(p, 10) == "n2");
  CHECK(info(p, 10)->expected_start == 100 + 120);

  // While job 2 is in its grace time, the next pass waits for it and preempts nobody else.
  s.jobs.at(JobId{2}).preempting = true;
  p = run_preempt(s, 110);
  CHECK(p.preemptions.empty());
  CHECK(sched_nodes(p, 10) == "n2");

  // Two CPUs on each of two nodes: both youngest victims, nothing else.
  s.jobs.at(JobId{2}).preempting = false;
  apply(s, JobBuilder(11).partition("high").nodes(2).cpus(2).submitted(100));
  s.jobs.at(JobId{10}).hold = HoldKind::kUser;
  p = run_preempt(s, 100);
  std::vector<uint64_t> victims;
  for (const auto& v : p.preemptions) victims.push_back(v.victim.value);
  CHECK(victims == std::vector<uint64_t>{2, 3});
}

TEST_CASE("no preemption: mode OFF, same tier, exempt time, or a free start sooner") {
  auto off = tiered("n1", 2, PreemptMode::kOff, 0);
  start(off, 1, {"n1"}, 2, 0);
  apply(off, JobBuilder(10).partition("high").cpus(2).submitted(100));
  CHECK(run_preempt(off, 100).preemptions.empty());

  auto same = tiered("n1", 2, PreemptMode::kCancel, 0);
  start(same, 1, {"n1"}, 2, 0);
  apply(same, JobBuilder(10).cpus(2).submitted(100));  // "low" itself
  CHECK(run_preempt(same, 100).preemptions.empty());

  auto young = tiered("n1", 2, PreemptMode::kCancel, 0);
  start(young, 1, {"n1"}, 2, 90);
  apply(young, JobBuilder(10).partition("high").cpus(2).submitted(100));
  CHECK(run_preempt(young, 100, 600).preemptions.empty());
  Plan p = run_preempt(young, 100, 5);
  REQUIRE(p.preemptions.size() == 1);
  CHECK(p.preemptions[0].mode == PreemptMode::kCancel);

  auto ending = tiered("n1", 2, PreemptMode::kCancel, 300);
  start(ending, 1, {"n1"}, 2, 0);
  ending.jobs.at(JobId{1}).time_limit = 160;  // ends at 160, before a 300 s grace would
  apply(ending, JobBuilder(10).partition("high").cpus(2).submitted(100));
  CHECK(run_preempt(ending, 100).preemptions.empty());

  auto disabled = tiered("n1", 2, PreemptMode::kCancel, 0);
  start(disabled, 1, {"n1"}, 2, 0);
  apply(disabled, JobBuilder(10).partition("high").cpus(2).submitted(100));
  CHECK(run(disabled, 100).preemptions.empty());
}

TEST_CASE("a quick pass looks at the first default_queue_depth jobs and never past a blocked one") {
  auto s = cluster("n[1-4]", 1);
  start(s, 100, {"n1"}, 1);
  apply(s, JobBuilder(1).priority(50).nodes(4));   // blocked: n1 is busy
  apply(s, JobBuilder(2).priority(40));            // would fit, but is behind job 1
  for (int i = 3; i <= 8; ++i) apply(s, JobBuilder(i).priority(10 - i));
  SchedulerConfig cfg;
  cfg.default_queue_depth = 3;
  Plan quick = Scheduler(cfg).quick_pass(s, 0);
  CHECK(quick.starts.empty());
  CHECK(quick.pending.size() == 3);
  CHECK(reason_of(quick, 1) == "Resources");
  CHECK(reason_of(quick, 2) == "Priority");
  CHECK(!info(quick, 4));                          // beyond the depth: not looked at
  Plan full = Scheduler(cfg).schedule(s, 0);       // backfill starts job 2 around job 1
  CHECK(started(full, 2));
  CHECK(full.pending.size() + full.starts.size() == 8);
}

TEST_CASE("array throttle, begin time and dependencies") {
  auto s = cluster("n[1-8]", 1);
  for (int i = 0; i < 5; ++i) apply(s, JobBuilder(10 + i).array(10, i, 2));
  apply(s, JobBuilder(20).begin(500));
  Plan p = run(s);
  int started_tasks = 0;
  for (int i = 0; i < 5; ++i) started_tasks += started(p, 10 + i) != nullptr;
  CHECK(started_tasks == 2);
  CHECK(reason_of(p, 12) == "JobArrayTaskLimit");
  CHECK(reason_of(p, 20) == "BeginTime");
  CHECK(started(run(s, 600), 20));
}

TEST_CASE("every dependency type") {
  auto s = cluster("n[1-8]", 1);
  apply(s, JobBuilder(1));                 // will complete
  apply(s, JobBuilder(2));                 // will fail
  apply(s, JobBuilder(3));                 // stays running
  for (uint64_t id : {1, 2, 3}) start(s, id, {"n" + std::to_string(id)}, 1, 100);
  apply(s, JobEnded{JobId{1}, 200, JobState::kCompleted, 0, 0});
  apply(s, JobEnded{JobId{2}, 200, JobState::kFailed, 1, 0});
  struct Case { uint64_t id; std::string dep; std::string want; };
  std::vector<Case> cases = {
      {10, "afterok:1", "started"},          {11, "afterok:2", "DependencyNeverSatisfied"},
      {12, "afternotok:2", "started"},       {13, "afternotok:1", "DependencyNeverSatisfied"},
      {14, "afterany:1:2", "started"},       {15, "afterany:3", "Dependency"},
      {16, "after:3", "started"},            {17, "after:3+10", "Dependency"},
      {18, "afterok:1?afterok:2", "started"}, {19, "afterok:1,afterok:2", "DependencyNeverSatisfied"},
      {20, "afterok:2?afterany:3", "Dependency"}, {21, "afterok:999", "started"},  // purged target
  };
  for (const auto& c : cases) apply(s, JobBuilder(c.id).depends(c.dep));
  Plan p = run(s, 300);
  for (const auto& c : cases) {
    CAPTURE(c.dep);
    CHECK(reason_of(p, c.id) == c.want);
  }
  CHECK(std::count_if(p.dependency_changes.begin(), p.dependency_changes.end(),
                      [](const auto& d) { return d.second == DepState::kNever; }) == 3);
  CHECK(started(run(s, 100 + 601), 17));

  // aftercorr: task i waits for task i of the other array.
  auto a = cluster("n[1-8]", 1);
  for (int i = 0; i < 2; ++i) apply(a, JobBuilder(30 + i).array(30, i));
  for (int i = 0; i < 2; ++i) apply(a, JobBuilder(40 + i).array(40, i).depends("aftercorr:30"));
  start(a, 30, {"n1"}, 1);
  start(a, 31, {"n2"}, 1);
  apply(a, JobEnded{JobId{30}, 10, JobState::kCompleted, 0, 0});
  Plan q = run(a, 20);
  CHECK(started(q, 40));
  CHECK(reason_of(q, 41) == "Dependency");

  // singleton: one running job per user and name.
  auto g = cluster("n[1-8]", 1);
  apply(g, JobBuilder(50).name("x").depends("singleton"));
  apply(g, JobBuilder(51).name("x").depends("singleton"));
  apply(g, JobBuilder(52).name("x", 2000).depends("singleton"));
  Plan r = run(g);
  CHECK(started(r, 50));
  CHECK(reason_of(r, 51) == "Dependency");
  CHECK(started(r, 52));
}

TEST_CASE("test-only schedules an extra job without touching the state") {
  auto s = cluster("n[1-2]", 1);
  start(s, 100, {"n1", "n2"}, 1);
  s.jobs.at(JobId{100}).time_limit = 120;
  Job extra = JobBuilder(7).nodes(2).build();
  Plan p = Scheduler().schedule(s, 0, &extra);
  REQUIRE(info(p, 7));
  CHECK(info(p, 7)->expected_start == 120);
  CHECK(s.jobs.count(JobId{7}) == 0);
}

// Property: over random workloads in which every job runs exactly its limit, (1) the
// running jobs plus every reservation never oversubscribe a node at any time, and
// (2) the highest-priority pending job's expected start never moves later, and it
// starts no later than first promised.
TEST_CASE("backfill never delays a reservation (random workloads)") {
  for (int seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    auto s = cluster("n[1-6]", 4);
    if (seed % 2) s.nodes["n5"].cpus = s.nodes["n6"].cpus = 8;  // a second node type
    int jobs = 40;
    for (int i = 1; i <= jobs; ++i) {
      JobBuilder b(i);
      b.limit(60 * (1 + rng() % 20)).priority(jobs - i);
      if (rng() % 2) b.nodes(1 + rng() % 4).cpus(1 + rng() % 4);
      else b.tasks(1 + rng() % 10);
      apply(s, b);
    }
    Scheduler sched;
    Time now = 0;
    std::map<uint64_t, Time> promised;  // head job -> first expected start
    Time head_last = 0;
    uint64_t head = 0;
    for (int step = 0; step < 500 && (s.pending_jobs > 0 || !s.running.empty()); ++step) {
      Plan p = sched.schedule(s, now);
      for (auto& st : p.starts) {
        if (promised.count(st.job.value)) CHECK(now <= promised[st.job.value]);
        apply(s, JobStarted{st.job, now, st.alloc, st.partition});
      }
      // (1) capacity over time: running jobs [start, start+limit) plus reservations.
      std::vector<Time> points{now};
      for (const auto& r : p.reservations) points.push_back(r.start);
      for (Time t : points) {
        std::map<std::string, int> used;
        for (JobId id : s.running) {
          const Job& j = s.jobs.at(id);
          if (j.start_time <= t && t < j.start_time + j.time_limit)
            for (const auto& a : j.alloc) used[a.node] += a.cpus;
        }
        for (const auto& r : p.reservations)
          if (r.start <= t && (r.end == 0 || t < r.end))
            for (const auto& a : r.alloc) used[a.node] += a.cpus;
        for (const auto& [node, cpus] : used) CHECK(cpus <= s.nodes.at(node).cpus);
      }
      // (2) the head's promise only improves.
      if (!p.pending.empty()) {
        const PendingInfo& h = p.pending.front();
        if (h.job.value == head && h.expected_start > 0) CHECK(h.expected_start <= head_last);
        if (h.expected_start > 0) {
          head = h.job.value;
          head_last = h.expected_start;
          promised.try_emplace(head, h.expected_start);
        }
      }
      // Advance to the next completion; every job runs exactly its limit.
      Time next = INT64_MAX;
      for (JobId id : s.running) next = std::min(next, s.jobs.at(id).start_time + s.jobs.at(id).time_limit);
      if (next == INT64_MAX) break;
      now = next;
      std::vector<JobId> done;
      for (JobId id : s.running)
        if (s.jobs.at(id).start_time + s.jobs.at(id).time_limit == now) done.push_back(id);
      for (JobId id : done) apply(s, JobEnded{id, now, JobState::kCompleted, 0, 0});
    }
    CHECK(s.pending_jobs == 0);
  }
}

TEST_CASE("a long queue: sorted only as far as it matters, every job still gets its reason") {
  auto s = cluster("n[1-2]", 4);
  start(s, 1, {"n1", "n2"}, 4);  // the cluster is full
  for (uint64_t id = 2; id < 10002; ++id) {
    JobBuilder b(id);
    b.priority(static_cast<int64_t>((id * 7919) % 1000));
    if (id % 97 == 0) b.held();
    apply(s, b);
  }
  SchedulerConfig cfg;
  cfg.bf_max_job_test = 3;
  Plan p = Scheduler(cfg).schedule(s, 0);
  int held = 0;
  for (uint64_t id = 2; id < 10002; ++id) held += id % 97 == 0;
  REQUIRE(p.pending.size() == static_cast<size_t>(10000 - held));  // the held ones are not looked at
  CHECK(p.stats.considered == 10000 - held);
  std::map<std::string, int> reasons;
  for (const auto& i : p.pending) ++reasons[std::string(to_string(i.reason))];
  CHECK(reasons["Resources"] == 1);  // the first tested job reserves; it blocks the partition
  CHECK(reasons["Resources"] + reasons["Priority"] == 10000 - held);
  int showing_hold = 0;
  for (const auto& [id, job] : s.jobs) showing_hold += job.held() && job.reason == JobReason::kJobHeldUser;
  CHECK(showing_hold == held);
  // The one that reserved is the highest-priority job that is not held.
  int64_t best = -1;
  uint64_t best_id = 0;
  for (const auto& [id, job] : s.jobs)
    if (job.state == JobState::kPending && !job.held() && -job.spec.nice > best) {
      best = -job.spec.nice;
      best_id = id.value;
    }
  CHECK(reason_of(p, best_id) == "Resources");
}

TEST_CASE("held jobs: out of the pass's queue until released, but a held job's deadline still ends it") {
  auto s = cluster("n1", 1);
  apply(s, JobBuilder(1).cpus(1).held());
  apply(s, JobBuilder(2).cpus(1).limit(600).deadline(100).held());  // past its deadline at t=500
  CHECK(s.queued == std::set<JobId>{JobId{2}});
  CHECK(s.jobs.at(JobId{1}).reason == JobReason::kJobHeldUser);
  Plan p = run(s, 500);
  CHECK(p.starts.empty());
  CHECK(p.deadline_kills == std::vector<JobId>{JobId{2}});
  CHECK(info(p, 1) == nullptr);
  apply(s, JobHoldChanged{JobId{1}, 500, HoldKind::kNone});  // released: queued, and it starts
  CHECK(s.queued.count(JobId{1}) == 1);
  CHECK(started(run(s, 500), 1) != nullptr);
  apply(s, JobHoldChanged{JobId{1}, 501, HoldKind::kAdmin});
  CHECK(s.queued.count(JobId{1}) == 0);
  CHECK(s.jobs.at(JobId{1}).reason == JobReason::kJobHeldAdmin);
}

TEST_CASE("deadline: a pending job that can no longer finish by its deadline is ended - others wait or start") {
  auto s = cluster("n1", 1);
  start(s, 100, {"n1"}, 1);                                  // the node is busy
  apply(s, JobBuilder(1).cpus(1).limit(600).deadline(1000));  // 500 + 600 > 1000: cannot make it
  apply(s, JobBuilder(2).cpus(1).limit(300).deadline(1000));  // still can: waits
  apply(s, JobBuilder(3).cpus(1).limit(kUnlimited).deadline(400));  // no limit: only a passed deadline ends it
  Plan p = run(s, 500);
  CHECK(p.deadline_kills == std::vector<JobId>{JobId{1}, JobId{3}});
  CHECK(reason_of(p, 2) == "Resources");
  CHECK(!info(p, 1));  // ended, not ranked
  CHECK(misses_deadline(s.jobs.at(JobId{2}), 701));
  CHECK(!misses_deadline(s.jobs.at(JobId{2}), 700));
}

TEST_CASE("deadline with --time-min: its time-min is checked, and it starts with a limit that ends by the deadline") {
  auto s = cluster("n[1-2]", 1);
  start(s, 100, {"n1"}, 1);                                                // n1 busy, n2 free
  apply(s, JobBuilder(1).cpus(1).limit(3600).time_min(300).deadline(2000));  // 3600 runs past 2000; 300 fits
  apply(s, JobBuilder(2).cpus(1).limit(3600).time_min(1800).deadline(2000)); // at 500, 500 + 1800 > 2000: ended
  Plan p = run(s, 500);
  CHECK(p.deadline_kills == std::vector<JobId>{JobId{2}});
  REQUIRE(p.starts.size() == 1);
  CHECK(p.starts[0].job == JobId{1});
  CHECK(p.starts[0].time_limit == 1500);  // ends at its deadline, not an hour later
  Job plain = JobBuilder(3).limit(3600).deadline(2000).build();  // without a time-min: its whole limit counts
  CHECK(misses_deadline(plain, 500));
  CHECK(deadline_cap(plain, 500) == 0);
  Job fits = JobBuilder(4).limit(600).time_min(60).deadline(2000).build();
  CHECK(deadline_cap(fits, 500) == 0);  // its whole limit ends in time: nothing to cap
  auto busy = cluster("n1", 1);  // no room now: it waits, and reserves nothing (later leaves less time)
  start(busy, 100, {"n1"}, 1, 0);
  apply(busy, JobBuilder(5).cpus(1).limit(3600).time_min(300).deadline(2000));
  Plan q = run(busy, 500);
  CHECK(reason_of(q, 5) == "Resources");
  CHECK(q.reservations.empty());
}

TEST_CASE("--mem=0: the job takes all of a node's memory, only where none of it is in use - others share its CPUs") {
  auto s = cluster("n[1-2]", 8, 1000);
  start(s, 1, {"n1"}, 2, 0, 100);  // n1 has memory in use; n2 none
  Job whole = JobBuilder(2).cpus(2).build();
  whole.spec.mem_all = true;
  apply(s, JobSubmitted{whole});
  Plan p = run(s);
  REQUIRE(p.starts.size() == 1);
  REQUIRE(p.starts[0].alloc.size() == 1);
  CHECK(p.starts[0].alloc[0].node == "n2");
  CHECK(p.starts[0].alloc[0].mem_mib == 1000);
  CHECK(p.starts[0].alloc[0].cpus == 2);
  Job again = JobBuilder(3).cpus(2).build();  // both nodes have memory in use now
  again.spec.mem_all = true;
  apply(s, JobStarted{JobId{2}, 0, p.starts[0].alloc});
  apply(s, JobSubmitted{again});
  apply(s, JobBuilder(4).cpus(2));  // without memory asked, n2's free CPUs still serve
  Plan q = run(s);
  CHECK(reason_of(q, 3) == "Resources");
  REQUIRE(q.starts.size() == 1);
  CHECK(q.starts[0].job == JobId{4});
}

TEST_CASE("--hint=nomultithread: a job's CPUs are whole cores on nodes with two threads per core") {
  auto s = cluster("n[1-2]", 8);
  s.nodes.at("n1").threads_per_core = 2;  // n1: 4 cores of 2 threads; n2: 8 cores of 1
  Job job = JobBuilder(1).tasks(3).nodelist("n1").build();
  job.spec.nomultithread = true;
  apply(s, JobSubmitted{job});
  Plan p = run(s);
  REQUIRE(p.starts.size() == 1);
  REQUIRE(p.starts[0].alloc.size() == 1);
  CHECK(p.starts[0].alloc[0].cpus == 6);  // 3 cores, every thread of them
  apply(s, JobStarted{JobId{1}, 0, p.starts[0].alloc});
  Job more = JobBuilder(2).tasks(2).nodelist("n1").build();  // 2 CPUs left: one core, not two
  more.spec.nomultithread = true;
  apply(s, JobSubmitted{more});
  CHECK(reason_of(run(s), 2) == "Resources");
  Job plain = JobBuilder(3).tasks(2).nodelist("n2").build();
  plain.spec.nomultithread = true;
  apply(s, JobSubmitted{plain});
  Plan q = run(s);
  REQUIRE(q.starts.size() == 1);
  CHECK(q.starts[0].alloc[0].cpus == 2);  // one thread per core: as asked
}
