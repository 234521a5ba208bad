// A QOS's usage limits (GrpTRESMins, GrpWall, read from the decayed usage of the jobs that
// ran in it) and QOS lists (--qos a,b: checked at submit, tried in turn by the scheduler
// like several partitions). core/acct_policy, with the model built the way sacctmgr builds it.
#include <doctest/doctest.h>

#include "acctmgr_commands.hpp"
#include "builders.hpp"
#include "core/acct_policy.hpp"
#include "core/acctmgr.hpp"
#include "core/assoc_mgr_format.hpp"
#include "core/cluster_state.hpp"
#include "core/scheduler.hpp"

using namespace hq;
using hq::test::JobBuilder;

namespace {

const AcctEnforce kQosEnforceAll{true, true, true, false};
const FairShareConfig kNoDecay{0, false, 1};


Job job(uint64_t id, const std::string& account, const std::string& qos) {
  Job j = JobBuilder(id).name("j", 1000).build();
  j.spec.user = "alice";
  j.spec.account = account;
  JobExtras e;
  e.qos = qos;
  j.spec.extra = e;
  return j;
}

// `minutes` of one CPU that ran in `qos` (and in alice's association in physics), in `partition`.
UsageRecord ran(const std::string& qos, int64_t minutes, int64_t cpus = 1, const std::string& partition = "batch") {
  UsageRecord r;
  r.account = "physics", r.user = "alice", r.qos = qos, r.partition = partition;
  r.start = 1, r.end = 1 + minutes * 60, r.billing = cpus;
  r.tres[kTresCpu] = cpus;
  return r;
}

std::shared_ptr<const FairShare> shares(const AcctModel& m, std::vector<UsageRecord> records) {
  return std::make_shared<const FairShare>(m, "c", records, 100000, kNoDecay);
}

std::string qos_reason(JobReason r) { return std::string(to_string(r)); }

}  // namespace

TEST_CASE("a QOS's GrpTRESMins counts what ran in that QOS, not in others - QOSGrpCPUMinutesLimit") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos long",
                             "modify user alice set qos+=long", "modify qos long set GrpTRESMins=cpu=100"});
  AcctPolicy p(m, "c", kQosEnforceAll, shares(m, {ran("long", 50), ran("normal", 500)}));
  REQUIRE(p.has_usage_limits());
  AcctUsage u(p, 100000);
  Job hour = job(1, "physics", "long");  // 50 used + 60 of this job > 100
  CHECK(qos_reason(u.blocked(hour)) == "QOSGrpCPUMinutesLimit");
  Job half = job(2, "physics", "long");  // 50 + 30: fits
  half.time_limit = 1800;
  CHECK(u.blocked(half) == JobReason::kNone);
  CHECK(u.blocked(job(3, "physics", "normal")) == JobReason::kNone);  // normal sets no limit
  // What a running job of the QOS may still use counts too.
  u.start(half, "batch", {}, 1800);
  Job more = job(4, "physics", "long");
  more.time_limit = 1800;
  CHECK(qos_reason(u.blocked(more)) == "QOSGrpCPUMinutesLimit");
}

TEST_CASE("a QOS's GrpWall: its jobs' wall minutes used up, its jobs wait - QOSGrpWallLimit, not the association's") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos long",
                             "modify user alice set qos+=long", "modify qos long set GrpWall=60",
                             "modify account physics set GrpWall=10"});
  AcctPolicy under(m, "c", kQosEnforceAll, shares(m, {ran("long", 40, 8)}));  // 40 wall minutes, whatever the CPUs
  AcctUsage u(under, 100000);
  // The QOS sets GrpWall: the association's (10, used up) does not apply.
  CHECK(u.blocked(job(1, "physics", "long")) == JobReason::kNone);
  CHECK(qos_reason(u.blocked(job(2, "physics", "normal"))) == "AssocGrpWallLimit");
  AcctPolicy spent(m, "c", kQosEnforceAll, shares(m, {ran("long", 60)}));
  AcctUsage after(spent, 100000);
  CHECK(qos_reason(after.blocked(job(3, "physics", "long"))) == "QOSGrpWallLimit");
}

TEST_CASE("scontrol show assoc_mgr shows a QOS's raw usage and the wall and CPU minutes used") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos long",
                             "modify qos long set GrpWall=60 GrpTRESMins=cpu=1000"});
  auto fs = shares(m, {ran("long", 30, 2)});
  AcctPolicy p(m, "c", kQosEnforceAll, fs);
  CHECK(p.qos_used("long").billing() == doctest::Approx(30 * 60 * 2));
  CHECK(p.qos_used("long").wall == doctest::Approx(30 * 60));
  CHECK(p.qos_used("normal").billing() == 0);
  AcctUsage u(p, 100000);
  auto q = parse_assoc_mgr_args({"flags=qos", "qos=long"});
  REQUIRE(q.is_ok());
  q->gpu_tres = false;
  std::string out = render_assoc_mgr(m, "c", *fs, u, [](const std::string&) -> int64_t { return 1000; }, *q);
  INFO(out);
  CHECK(out.find("UsageRaw=3600.000000") != std::string::npos);
  CHECK(out.find("GrpWall=60(30.00)") != std::string::npos);
  CHECK(out.find("GrpTRESMins=cpu=1000(60)") != std::string::npos);
}

TEST_CASE("a partition's QOS is credited with its partition's jobs' usage too, and NoDecay counts it undecayed") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos part",
                             "modify qos part set GrpTRESMins=cpu=100"});
  auto fs = std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{ran("normal", 80, 1, "gpu")}, 100000,
                                              FairShareConfig{0, false, 1});
  AcctPolicy p(m, "c", kQosEnforceAll, fs, {{"gpu", "part"}});
  CHECK(p.qos_used("part").billing() == doctest::Approx(80 * 60));  // a job of QOS normal, in gpu
  CHECK(p.qos_used("normal").billing() == doctest::Approx(80 * 60));
  AcctUsage u(p, 100000);
  Job there = job(1, "physics", "normal");  // 80 + 60 > 100
  there.partition = "gpu";
  CHECK(qos_reason(u.blocked(there)) == "QOSGrpCPUMinutesLimit");
  CHECK(u.blocked(job(2, "physics", "normal")) == JobReason::kNone);  // elsewhere: no partition QOS
  // With a half-life, usage an hour old counts less; with NoDecay, all of it.
  UsageRecord old = ran("long", 60);
  old.start = 100000 - 2 * 3600, old.end = 100000 - 3600;
  AcctModel flags = test::cluster_model_after({"add qos long", "add qos flat set Flags=NoDecay"});
  UsageRecord flat_old = old;
  flat_old.qos = "flat";
  auto decayed = std::make_shared<const FairShare>(flags, "c", std::vector<UsageRecord>{old, flat_old}, 100000,
                                                   FairShareConfig{3600, false, 1});
  AcctPolicy d(flags, "c", kQosEnforceAll, decayed);
  CHECK(d.qos_used("long").billing() < 3600 * 0.5);
  CHECK(d.qos_used("flat").billing() == doctest::Approx(3600));
}

TEST_CASE("--qos a,b at submit: every name must be allowed - kept highest Priority first") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos low set Priority=10",
                             "add qos high set Priority=100", "add qos secret",
                             "modify user alice set qos=normal,low,high"});
  AcctPolicy p(m, "c", kQosEnforceAll);
  JobSpec s;
  s.user = "alice";
  JobExtras e;
  e.qos = "low,high";
  s.extra = e;
  REQUIRE(p.choose(s, {"batch"}).is_ok());
  CHECK(s.extra->qos == "high,low");
  e.qos = "low,secret";  // secret exists but alice may not use it
  s.extra = e;
  auto refused = p.choose(s, {"batch"});
  REQUIRE(!refused.is_ok());
  CHECK(refused.message() == "Invalid qos specification");
  for (const char* bad : {"low,nosuch", ",", "low,", ",low", "low,,high"}) {
    e.qos = bad;
    s.extra = e;
    CHECK_MESSAGE(!p.choose(s, {"batch"}).is_ok(), bad);
  }
  Job listed = job(1, "physics", "high,low");
  CHECK(p.qos(listed) == doctest::Approx(1.0));  // the first (highest) QOS's factor
}

TEST_CASE("--qos a,b in a pass: the first QOS whose limits allow the job, else the first's reason") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos low set Priority=10",
                             "add qos high set Priority=100 GrpJobs=1", "modify user alice set qos=normal,low,high",
                             "modify qos low set GrpJobs=1"});
  AcctPolicy p(m, "c", kQosEnforceAll);
  AcctUsage u(p, 0);
  Job first = job(1, "physics", "high,low");
  std::string chosen;
  CHECK(u.blocked(first, &chosen) == JobReason::kNone);
  CHECK(chosen == "high");
  u.start(first, "batch", {}, 3600, chosen);
  Job second = job(2, "physics", "high,low");  // high is full: low takes it
  CHECK(u.blocked(second, &chosen) == JobReason::kNone);
  CHECK(chosen == "low");
  u.start(second, "batch", {}, 3600, chosen);
  Job third = job(3, "physics", "high,low");  // both full: high's reason
  CHECK(qos_reason(u.blocked(third, &chosen)) == "QOSGrpJobsLimit");
  REQUIRE(u.qos_counts("low") != nullptr);
  CHECK(u.qos_counts("low")->jobs == 1);
  CHECK(u.qos_counts("high")->jobs == 1);
}

TEST_CASE("--qos a,b end to end in the scheduler: the start names its QOS and the job takes it") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos low set Priority=10",
                             "add qos high set Priority=100 GrpJobs=1", "modify user alice set qos=normal,low,high"});
  auto policy = std::make_shared<const AcctPolicy>(m, "c", kQosEnforceAll);
  ClusterState s = test::cluster("n1", 8);
  for (uint64_t id : {1, 2, 3}) REQUIRE(apply(s, JobSubmitted{job(id, "physics", "high,low")}));
  Plan plan = Scheduler(SchedulerConfig{}, policy).schedule(s, 0);
  REQUIRE(plan.starts.size() == 3);  // one under high (GrpJobs=1), two under low
  int high = 0, low = 0;
  for (const StartDecision& st : plan.starts) {
    high += st.qos == "high";
    low += st.qos == "low";
  }
  CHECK(high == 1);
  CHECK(low == 2);
  StartDecision st = plan.starts.front();
  REQUIRE(apply(s, JobStarted{st.job, 0, st.alloc, st.partition, st.time_limit, st.qos}));
  CHECK(s.jobs.at(st.job).spec.extra->qos == st.qos);
  // Unenforced, a list's job starts under its first QOS.
  ClusterState plain = test::cluster("n1", 8);
  REQUIRE(apply(plain, JobSubmitted{job(7, "physics", "high,low")}));
  Plan unenforced = Scheduler(SchedulerConfig{}).schedule(plain, 0);
  REQUIRE(unenforced.starts.size() == 1);
  CHECK(unenforced.starts.front().qos == "high");
}

TEST_CASE("qos_list: names in order, empty items skipped") {
  CHECK(qos_list("") == std::vector<std::string>{});
  CHECK(qos_list("a") == std::vector<std::string>{"a"});
  CHECK(qos_list("a,,b,") == std::vector<std::string>{"a", "b"});
  CHECK(qos_list(",") == std::vector<std::string>{});
  CHECK(first_qos("high,low") == "high");
  CHECK(first_qos(",low") == "low");
  CHECK(first_qos("one") == "one");
}

TEST_CASE("a QOS's MaxTRESRunMinsPerUser and PerAccount (24.05): the TRES-minutes left of running jobs, and this job's") {
  AcctModel m = test::cluster_model_after({"add account physics", "add account chem", "add user alice account=physics",
                             "add user bob account=chem", "add user carol account=chem",
                             "modify qos normal set MaxTRESRunMinsPU=cpu=100 MaxTRESRunMinsPA=mem=6000"});
  AcctPolicy p(m, "c", kQosEnforceAll);
  REQUIRE(p.has_limits());
  AcctUsage u(p, 0);
  Job hour = job(1, "physics", "normal");  // 1 CPU x 60 minutes
  CHECK(u.blocked(hour) == JobReason::kNone);
  u.start(hour, "batch", {}, 3600);
  CHECK(qos_reason(u.blocked(job(2, "physics", "normal"))) == "MaxCpuRunMinsPerUser");  // 60 + 60 > 100
  Job bobs = job(3, "chem", "normal");
  bobs.spec.user = "bob", bobs.spec.uid = 1001;
  CHECK(u.blocked(bobs) == JobReason::kNone);  // another user's minutes are his own
  bobs.spec.mem_per_node_mib = 60;  // 60 MiB x 60 minutes = 3600
  u.start(bobs, "batch", {}, 3600);
  Job carols = job(4, "chem", "normal");
  carols.spec.user = "carol", carols.spec.uid = 1002, carols.spec.mem_per_node_mib = 60;
  CHECK(qos_reason(u.blocked(carols)) == "MaxMemoryRunMinsPerAccount");  // chem's 3600 + 3600 > 6000
  carols.time_limit = 1800;  // 1800 more: fits
  CHECK(u.blocked(carols) == JobReason::kNone);
}

TEST_CASE("--qos a,b and submit limits: a waiting job counts in each QOS of its list, so neither can be got around") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos low set Priority=10",
                             "add qos high set Priority=100", "modify user alice set qos=normal,low,high",
                             "modify qos high set MaxSubmitJobsPerUser=1", "modify qos low set GrpSubmitJobs=1"});
  AcctPolicy p(m, "c", kQosEnforceAll);
  AcctUsage u(p, 0);
  Job first = job(1, "physics", "high,low");
  CHECK(u.refused(first, 1) == JobReason::kNone);
  u.add(first);  // waiting: counted in high and in low
  REQUIRE(u.qos_counts("high") != nullptr);
  CHECK(u.qos_counts("high")->submitted == 1);
  CHECK(u.qos_counts("low")->submitted == 1);
  REQUIRE(u.assoc_counts("physics", "alice", "") != nullptr);
  CHECK(u.assoc_counts("physics", "alice", "")->submitted == 1);  // once, not once per QOS
  CHECK(qos_reason(u.refused(job(2, "physics", "high,low"), 1)) == "QOSMaxSubmitJobPerUserLimit");
  CHECK(u.refused(job(3, "physics", "normal"), 1) == JobReason::kNone);  // normal sets none
}

TEST_CASE("a job of a QOS list requeued waits under its whole list again") {
  ClusterState s = test::cluster("n1", 8);
  REQUIRE(apply(s, JobSubmitted{job(1, "physics", "high,low")}));
  REQUIRE(apply(s, JobStarted{JobId{1}, 10, {{"n1", 1, 0, 1}}, "batch", 0, "low"}));
  CHECK(s.jobs.at(JobId{1}).spec.extra->qos == "low");
  REQUIRE(apply(s, JobRequeued{JobId{1}, 20}));
  CHECK(s.jobs.at(JobId{1}).spec.extra->qos == "high,low");
  CHECK(s.jobs.at(JobId{1}).spec.extra->qos_list.empty());
}

TEST_CASE("--qos a,b where b is the partition's QOS: a waiting job counts in b once") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos a", "add qos b",
                             "modify user alice set qos=normal,a,b"});
  AcctPolicy p(m, "c", kQosEnforceAll, nullptr, {{"batch", "b"}});
  AcctUsage u(p, 0);
  u.add(job(1, "physics", "a,b"));
  REQUIRE(u.qos_counts("b") != nullptr);
  CHECK(u.qos_counts("b")->submitted == 1);
  CHECK(u.qos_counts("a")->submitted == 1);
}

TEST_CASE("an operator's QOS for a running job of a list stays across a requeue") {
  ClusterState s = test::cluster("n1", 8);
  REQUIRE(apply(s, JobSubmitted{job(1, "physics", "high,low")}));
  REQUIRE(apply(s, JobStarted{JobId{1}, 10, {{"n1", 1, 0, 1}}, "batch", 0, "low"}));
  Job changed = s.jobs.at(JobId{1});
  JobExtras e = *changed.spec.extra;
  e.qos = "normal";
  changed.spec.extra = e;
  REQUIRE(apply(s, JobUpdated{JobId{1}, 15, changed}));
  REQUIRE(apply(s, JobRequeued{JobId{1}, 20}));
  CHECK(s.jobs.at(JobId{1}).spec.extra->qos == "normal");
}
