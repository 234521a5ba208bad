// Accounting enforcement (core/acct_policy): the account and QOS a submission gets, the
// submit limits that refuse it, and the limits that keep a queued job pending in a
// scheduling pass, with Slurm's reason names. The model is built the way sacctmgr builds it.
#include <doctest/doctest.h>

#include "acctmgr_commands.hpp"
#include "builders.hpp"
#include "core/acct_policy.hpp"
#include "core/acctmgr.hpp"
#include "core/scheduler.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;
using hq::test::start;

namespace {

const AcctEnforce kPolicyEnforceAll{true, true, true, false};


// A job of `user` (uid) in `account` with QOS `qos` ("" none), as submitted.
Job job(uint64_t id, const std::string& user, uint32_t uid, const std::string& account, const std::string& qos = "normal") {
  Job j = JobBuilder(id).name("j", uid).build();
  j.spec.user = user;
  j.spec.account = account;
  JobExtras e;
  e.qos = qos;
  j.spec.extra = e;
  return j;
}

std::string policy_reason(JobReason r) { return std::string(to_string(r)); }

}  // namespace

TEST_CASE("enforce words: Slurm's names, limits and qos imply associations, unknown words are named") {
  auto e = parse_acct_enforce("limits,qos");
  REQUIRE(e.is_ok());
  CHECK(e->associations);
  CHECK(acct_enforce_name(*e) == "associations,limits,qos");
  CHECK(acct_enforce_name(*parse_acct_enforce("")) == "none");
  CHECK(acct_enforce_name(*parse_acct_enforce("All")) == "associations,limits,qos,safe");
  auto bad = parse_acct_enforce("associations,limitz");
  REQUIRE(!bad.is_ok());
  CHECK(bad.status().message().find("'limitz'") != std::string::npos);
}

TEST_CASE("submit: the default account and QOS are filled in - unknown or not allowed ones are refused in sbatch's words") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos high"});
  AcctPolicy p(m, "c", kPolicyEnforceAll);
  JobSpec s;
  s.user = "alice";
  REQUIRE(p.choose(s, {"batch"}).is_ok());
  CHECK(s.account == "physics");
  CHECK(s.extra->qos == "normal");
  JobSpec nosuch = JobSpec{};
  nosuch.user = "alice";
  nosuch.account = "chem";
  CHECK(p.choose(nosuch, {"batch"}).message() == "Invalid account or account/partition combination specified");
  JobSpec stranger;
  stranger.user = "bob";
  CHECK(p.choose(stranger, {"batch"}).message() == "Invalid account or account/partition combination specified");
  JobSpec high;
  high.user = "alice";
  JobExtras e;
  e.qos = "high";
  high.extra = e;
  CHECK(p.choose(high, {"batch"}).message() == "Invalid qos specification");
  e.qos = "high,normal";  // a list: Slurm 22.05 refuses it too
  high.extra = e;
  CHECK(p.choose(high, {"batch"}).message() == "Invalid qos specification");
  // Allowed once added to the association (on top of what it had from its account).
  AcctPolicy after(test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos high",
                                "modify user alice set qos+=high"}),
                   "c", kPolicyEnforceAll);
  e.qos = "high";
  high.extra = e;
  CHECK(after.choose(high, {"batch"}).is_ok());
  JobSpec plain;
  plain.user = "alice";
  REQUIRE(after.choose(plain, {"batch"}).is_ok());
  CHECK(plain.extra->qos == "normal");
  // With associations only, a QOS the association lacks is not checked (but must exist).
  AcctPolicy loose(m, "c", AcctEnforce{true, false, false, false});
  CHECK(loose.choose(high, {"batch"}).is_ok());
}

TEST_CASE("submit limits: MaxSubmitJobs counts queued and running jobs of the association - an array counts each task") {
  AcctPolicy p(test::cluster_model_after({"add account physics", "add user alice account=physics",
                            "modify user alice set MaxSubmitJobs=3"}),
               "c", kPolicyEnforceAll);
  REQUIRE(p.has_submit_limits());
  AcctUsage u(p, 0);
  Job running = job(1, "alice", 1000, "physics");
  running.state = JobState::kRunning;
  u.add(running);
  u.add(job(2, "alice", 1000, "physics"));
  u.add(job(3, "alice", 1000, "root"));  // another account of hers: not counted
  CHECK(u.refused(job(4, "alice", 1000, "physics"), 1) == JobReason::kNone);
  CHECK(policy_reason(u.refused(job(4, "alice", 1000, "physics"), 2)) == "AssocMaxSubmitJobLimit");
  Job ended = job(5, "alice", 1000, "physics");
  ended.state = JobState::kCompleted;
  u.add(ended);
  CHECK(u.refused(job(4, "alice", 1000, "physics"), 1) == JobReason::kNone);
}

TEST_CASE("submit limits: the QOS's per-user limit wins over the association's - DenyOnLimit refuses per-job limits") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "modify user alice set MaxSubmitJobs=1",
                             "modify qos normal set MaxSubmitJobsPerUser=2"});
  AcctPolicy p(m, "c", kPolicyEnforceAll);
  AcctUsage u(p, 0);
  u.add(job(1, "alice", 1000, "physics"));
  CHECK(u.refused(job(2, "alice", 1000, "physics"), 1) == JobReason::kNone);  // the QOS limit (2) applies, not 1
  CHECK(policy_reason(u.refused(job(2, "alice", 1000, "physics"), 2)) == "QOSMaxSubmitJobPerUserLimit");
  AcctPolicy deny(test::cluster_model_after({"add account physics", "add user alice account=physics",
                               "modify qos normal set Flags=DenyOnLimit MaxWall=00:05:00 MaxTRESPerJob=cpu=1"}),
                  "c", kPolicyEnforceAll);
  AcctUsage none(deny, 0);
  Job wide = job(3, "alice", 1000, "physics");
  wide.spec.cpus_per_task = 2;
  wide.time_limit = 60;
  CHECK(policy_reason(none.refused(wide, 1)) == "QOSMaxCpuPerJobLimit");
  Job slow = job(4, "alice", 1000, "physics");
  slow.time_limit = 600;
  CHECK(policy_reason(none.refused(slow, 1)) == "QOSMaxWallDurationPerJobLimit");
  slow.time_limit = 300;
  CHECK(none.refused(slow, 1) == JobReason::kNone);
  // Without DenyOnLimit the same jobs are accepted (they wait instead).
  AcctPolicy lenient(test::cluster_model_after({"add account physics", "add user alice account=physics",
                                  "modify qos normal set MaxTRESPerJob=cpu=1"}),
                     "c", kPolicyEnforceAll);
  CHECK(AcctUsage(lenient, 0).refused(wide, 1) == JobReason::kNone);
  CHECK(policy_reason(AcctUsage(lenient, 0).blocked(wide)) == "QOSMaxCpuPerJobLimit");
}

TEST_CASE("running limits: Grp limits count the whole subtree, Max limits the user's association - the QOS's first") {
  AcctModel m = test::cluster_model_after({"add account physics", "add account theory parent=physics", "add user alice account=theory",
                             "add user bob account=physics", "modify account physics set GrpTRES=cpu=4 GrpJobs=3",
                             "modify user alice set MaxJobs=2"});
  AcctPolicy p(m, "c", kPolicyEnforceAll);
  REQUIRE(p.has_limits());
  AcctUsage u(p, 0);
  Job bob_running = job(1, "bob", 1001, "physics");
  bob_running.state = JobState::kRunning;
  bob_running.alloc = {{"n1", 3, 0, 1, {}}};
  u.add(bob_running);
  Job alice = job(2, "alice", 1000, "theory");
  CHECK(u.blocked(alice) == JobReason::kNone);  // 3 + 1 CPUs of 4
  alice.spec.cpus_per_task = 2;
  CHECK(policy_reason(u.blocked(alice)) == "AssocGrpCpuLimit");  // bob's CPUs count against physics, theory's parent
  alice.spec.cpus_per_task = 1;
  u.start(alice, "batch", {}, 3600);
  Job alice2 = job(3, "alice", 1000, "theory");
  CHECK(policy_reason(u.blocked(alice2)) == "AssocGrpCpuLimit");  // 4 of 4 CPUs held now
  AcctPolicy jobs_only(test::cluster_model_after({"add account physics", "add account theory parent=physics",
                                    "add user alice account=theory", "modify user alice set MaxJobs=1"}),
                       "c", kPolicyEnforceAll);
  AcctUsage v(jobs_only, 0);
  v.start(job(2, "alice", 1000, "theory"), "batch", {}, 3600);
  CHECK(policy_reason(v.blocked(alice2)) == "AssocMaxJobsLimit");
  Job other_user = job(4, "bob", 1001, "physics");
  CHECK(v.blocked(other_user) == JobReason::kNone);
  // A QOS MaxJobsPerUser replaces the association's MaxJobs.
  AcctPolicy with_qos(test::cluster_model_after({"add account physics", "add user alice account=physics", "modify user alice set MaxJobs=1",
                                   "modify qos normal set MaxJobsPerUser=2"}),
                      "c", kPolicyEnforceAll);
  AcctUsage w(with_qos, 0);
  w.start(job(5, "alice", 1000, "physics"), "batch", {}, 3600);
  CHECK(w.blocked(job(6, "alice", 1000, "physics")) == JobReason::kNone);
  w.start(job(6, "alice", 1000, "physics"), "batch", {}, 3600);
  CHECK(policy_reason(w.blocked(job(7, "alice", 1000, "physics"))) == "QOSMaxJobsPerUserLimit");
}

TEST_CASE("running limits: MaxWall, GrpTRESRunMins and MaxTRESPerUser with their reasons - a job without -t gets MaxWall") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "modify user alice set MaxWall=00:10:00",
                             "modify account physics set GrpTRESRunMins=cpu=100"});
  AcctPolicy p(m, "c", kPolicyEnforceAll);
  AcctUsage u(p, 0);
  Job slow = job(1, "alice", 1000, "physics");
  slow.time_limit = 1200;
  CHECK(policy_reason(u.blocked(slow)) == "AssocMaxWallDurationPerJobLimit");
  slow.time_limit = kUnlimited;
  CHECK(policy_reason(u.blocked(slow)) == "AssocMaxWallDurationPerJobLimit");
  JobSpec s = slow.spec;
  CHECK(p.default_limit(s, "batch", kUnlimited) == 600);
  CHECK(p.default_limit(s, "batch", 300) == 300);
  Job fits = job(2, "alice", 1000, "physics");
  fits.time_limit = 600;
  fits.spec.cpus_per_task = 8;  // 8 CPUs x 10 minutes = 80 of 100
  CHECK(u.blocked(fits) == JobReason::kNone);
  u.start(fits, "batch", {}, 600);
  Job more = job(3, "alice", 1000, "physics");
  more.time_limit = 600;
  more.spec.cpus_per_task = 3;  // 80 + 30 > 100
  CHECK(policy_reason(u.blocked(more)) == "AssocGrpCPURunMinutesLimit");
  AcctPolicy pu(test::cluster_model_after({"add account physics", "add user alice account=physics",
                             "modify qos normal set MaxTRESPerUser=cpu=2,gres/gpu=1"}),
                "c", kPolicyEnforceAll);
  AcctUsage v(pu, 0);
  Job gpu = job(4, "alice", 1000, "physics");
  gpu.spec.gpus = 2;
  CHECK(policy_reason(v.blocked(gpu)) == "QOSMaxGRESPerUser");
  v.start(job(5, "alice", 1000, "physics"), "batch", {}, 60);
  Job two = job(6, "alice", 1000, "physics");
  two.spec.cpus_per_task = 2;
  CHECK(policy_reason(v.blocked(two)) == "QOSMaxCpuPerUserLimit");
}

TEST_CASE("the scheduler keeps jobs over a limit pending with the limit's reason and starts no more than allowed in one pass") {
  ClusterState s = cluster("n[1-4]", 4);
  AcctPolicy policy(test::cluster_model_after({"add account physics", "add user alice account=physics", "add user bob account=physics",
                                 "modify user alice set MaxJobs=2"}),
                    "c", kPolicyEnforceAll);
  auto shared = std::make_shared<const AcctPolicy>(policy);
  for (uint64_t id = 1; id <= 4; ++id) apply(s, JobSubmitted{job(id, "alice", 1000, "physics")});
  apply(s, JobSubmitted{job(5, "bob", 1001, "physics")});
  Plan plan = Scheduler(SchedulerConfig{}, shared).schedule(s, 0);
  CHECK(plan.starts.size() == 3);  // alice's first two and bob's
  int held = 0;
  for (const PendingInfo& i : plan.pending) held += i.reason == JobReason::kAssocMaxJobs;
  CHECK(held == 2);
  // Without the policy all five start.
  CHECK(Scheduler(SchedulerConfig{}).schedule(s, 0).starts.size() == 5);
  // A running job of alice's counts: one more may start.
  start(s, 1, {"n1"}, 1);
  Plan after = Scheduler(SchedulerConfig{}, shared).schedule(s, 0);
  int alice_started = 0;
  for (const StartDecision& d : after.starts) alice_started += s.jobs.at(d.job).spec.user == "alice";
  CHECK(alice_started == 1);
}

TEST_CASE("running limits: a started job counts what it was given (memory it did not name) - counts saturate instead of wrapping") {
  AcctPolicy p(test::cluster_model_after({"add account physics", "add user alice account=physics",
                            "modify account physics set GrpTRES=mem=8G GrpTRESRunMins=mem=100000000"}),
               "c", kPolicyEnforceAll);
  AcctUsage u(p, 0);
  Job first = job(1, "alice", 1000, "physics");  // no --mem: asks for none
  CHECK(u.blocked(first) == JobReason::kNone);
  u.start(first, "batch", {{"n1", 1, 8192, 1, {}}}, 60);  // but its node gave it 8 GiB
  Job second = job(2, "alice", 1000, "physics");
  second.spec.mem_per_node_mib = 1;
  CHECK(policy_reason(u.blocked(second)) == "AssocGrpMemLimit");
  // A limit far past any clock and a huge request: the TRES-minutes saturate and the job waits.
  Job huge = job(3, "alice", 1000, "physics");
  huge.spec.mem_per_node_mib = int64_t{1} << 40;
  huge.time_limit = INT64_MAX;
  AcctUsage fresh(p, 0);
  CHECK(policy_reason(fresh.blocked(huge)) == "AssocGrpMemLimit");
  fresh.start(huge, "batch", {}, INT64_MAX);  // counted without wrapping to a negative total
  CHECK(policy_reason(fresh.blocked(second)) == "AssocGrpMemLimit");
}

TEST_CASE("GrpTRESMins: decayed usage from fair share, plus what runs and this job may still use") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics",
                             "modify account physics set GrpTRESMins=cpu=100"});
  UsageRecord used;  // 50 CPU-minutes already used (no decay)
  used.account = "physics", used.user = "alice", used.start = 1, used.end = 3001, used.billing = 1;
  used.tres[kTresCpu] = 1;
  auto shares = std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{used}, 5000, FairShareConfig{0, false, 1});
  AcctPolicy p(m, "c", kPolicyEnforceAll, shares);
  REQUIRE(p.has_limits());
  AcctUsage u(p, 5000);
  Job hour = job(1, "alice", 1000, "physics");  // 1 CPU x 60 minutes: 110 > 100
  CHECK(policy_reason(u.blocked(hour)) == "AssocGrpCPUMinutesLimit");
  Job half = job(2, "alice", 1000, "physics");  // 1 CPU x 30 minutes: 80
  half.time_limit = 1800;
  CHECK(u.blocked(half) == JobReason::kNone);
  u.start(half, "batch", {}, 1800);
  Job more = job(3, "alice", 1000, "physics");  // 80 + 30 > 100
  more.time_limit = 1800;
  CHECK(policy_reason(u.blocked(more)) == "AssocGrpCPUMinutesLimit");
  // Without fair share worked out, nothing is known to be used: only what runs counts.
  AcctPolicy unknown_usage(m, "c", kPolicyEnforceAll);
  AcctUsage fresh(unknown_usage, 5000);
  CHECK(fresh.blocked(half) == JobReason::kNone);
}

TEST_CASE("GrpTRESMins of gres/gpu, mem and node: each TRES's decayed usage, with the QOS's UsageFactor") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics",
                             "modify account physics set GrpTRESMins=gres/gpu=100,mem=100000,node=1000"});
  UsageRecord used;  // 2 GPUs, 2000 MiB, 1 node for 20 minutes, UsageFactor 2: 80 GPU-minutes, 80000 MiB-minutes
  used.account = "physics", used.user = "alice", used.start = 1, used.end = 1201, used.billing = 1, used.factor = 2.0;
  used.tres[kTresCpu] = 1, used.tres[kTresGpu] = 2, used.tres[kTresMem] = 2000, used.tres[kTresNode] = 1;
  auto shares = std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{used}, 5000, FairShareConfig{0, false, 1});
  AcctPolicy p(m, "c", kPolicyEnforceAll, shares);
  AcctUsage u(p, 5000);
  Job cpu_only = job(1, "alice", 1000, "physics");  // no GPU, no --mem: fits every limit
  cpu_only.time_limit = 600;
  CHECK(u.blocked(cpu_only) == JobReason::kNone);
  Job gpu = job(2, "alice", 1000, "physics");  // 1 GPU x 30 minutes: 80 + 30 > 100
  gpu.spec.gpus = 1;
  gpu.time_limit = 1800;
  CHECK(policy_reason(u.blocked(gpu)) == "AssocGrpGRESMinutes");
  gpu.time_limit = 600;  // 80 + 10: fine
  CHECK(u.blocked(gpu) == JobReason::kNone);
  Job mem = job(3, "alice", 1000, "physics");  // 1000 MiB x 30 minutes: 80000 + 30000 > 100000
  mem.spec.mem_per_node_mib = 1000;
  mem.time_limit = 1800;
  CHECK(policy_reason(u.blocked(mem)) == "AssocGrpMemMinutes");
  // Without the usage factor, the same run used half: the GPU job fits.
  used.factor = 1.0;
  AcctPolicy plain(m, "c", kPolicyEnforceAll,
                   std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{used}, 5000, FairShareConfig{0, false, 1}));
  gpu.time_limit = 1800;
  CHECK(AcctUsage(plain, 5000).blocked(gpu) == JobReason::kNone);
}

TEST_CASE("GrpWall: the subtree's jobs' decayed wall minutes, whatever their size - used up, jobs wait") {
  AcctModel m = test::cluster_model_after({"add account physics", "add account theory parent=physics", "add user alice account=theory",
                             "modify account physics set GrpWall=60"});
  // 40 wall minutes on 8 CPUs (billing 8): 40 of GrpWall's minutes, not 320.
  UsageRecord used;
  used.account = "theory", used.user = "alice", used.start = 1, used.end = 2401, used.billing = 8;
  auto shares = std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{used}, 5000, FairShareConfig{0, false, 1});
  AcctPolicy p(m, "c", kPolicyEnforceAll, shares);
  REQUIRE(p.has_usage_limits());
  AcctUsage u(p, 5000);
  Job job1 = job(1, "alice", 1000, "theory");
  CHECK(u.blocked(job1) == JobReason::kNone);  // 40 < 60: runs (Slurm does not add this job's limit)
  UsageRecord doubled = used;  // its QOS's UsageFactor counts for wall time too, as in Slurm: 80 minutes
  doubled.factor = 2.0;
  AcctPolicy factored(m, "c", kPolicyEnforceAll,
                      std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{doubled}, 5000, FairShareConfig{0, false, 1}));
  CHECK(policy_reason(AcctUsage(factored, 5000).blocked(job1)) == "AssocGrpWallLimit");
  used.end = 3601;  // 60 minutes: used up, in physics' subtree
  shares = std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{used}, 5000, FairShareConfig{0, false, 1});
  AcctPolicy spent(m, "c", kPolicyEnforceAll, shares);
  AcctUsage after(spent, 5000);
  CHECK(policy_reason(after.blocked(job1)) == "AssocGrpWallLimit");
}

TEST_CASE("per-job shape limits: MaxTRESPerNode, MaxTRESMins and a QOS's MinTRES, with Slurm's reasons") {
  AcctPolicy p(test::cluster_model_after({"add account physics", "add user alice account=physics",
                            "modify user alice set MaxTRESPerNode=cpu=4 MaxTRESMins=cpu=600"}),
               "c", kPolicyEnforceAll);
  REQUIRE(p.has_limits());
  AcctUsage u(p, 0);
  Job wide = job(1, "alice", 1000, "physics");
  wide.time_limit = 600;
  wide.spec.ntasks = 8;  // 8 CPUs on one node: 8 > 4 a node
  CHECK(policy_reason(u.blocked(wide)) == "AssocMaxCpuPerNode");
  wide.spec.nodes_min = 2;  // 4 a node
  CHECK(u.blocked(wide) == JobReason::kNone);
  wide.time_limit = 6000;  // 8 CPUs x 100 minutes = 800 > 600
  CHECK(policy_reason(u.blocked(wide)) == "AssocMaxCpuMinutesPerJobLimit");
  wide.time_limit = 4500;  // 8 x 75 = 600
  CHECK(u.blocked(wide) == JobReason::kNone);
  // A job that gives no -t gets the limit its CPU-minutes leave: 600 / 8 = 75 minutes.
  CHECK(p.default_limit(wide.spec, "batch", kUnlimited) == 75 * 60);
  CHECK(p.default_limit(wide.spec, "batch", 3600) == 3600);

  AcctPolicy q(test::cluster_model_after({"add account physics", "add user alice account=physics",
                            "modify user alice set MaxTRESPerNode=cpu=1",
                            "modify qos normal set MaxTRESPerNode=cpu=2,gres/gpu=1 MinTRESPerJob=cpu=2 "
                            "MaxTRESMinsPerJob=gres/gpu=60"}),
               "c", kPolicyEnforceAll);
  AcctUsage v(q, 0);
  Job small = job(2, "alice", 1000, "physics");
  small.time_limit = 600;
  CHECK(policy_reason(v.blocked(small)) == "QOSMinCpuNotSatisfied");  // 1 CPU, the QOS wants 2
  small.spec.cpus_per_task = 2;  // the QOS's 2 a node shadows the association's 1
  CHECK(v.blocked(small) == JobReason::kNone);
  small.spec.gpus_per_node = 2;
  CHECK(policy_reason(v.blocked(small)) == "QOSMaxGRESPerNode");
  small.spec.gpus_per_node = 1;  // 1 GPU x 10 minutes: fine; x 61 minutes: over 60
  CHECK(v.blocked(small) == JobReason::kNone);
  small.time_limit = 61 * 60;
  CHECK(policy_reason(v.blocked(small)) == "QOSMaxGRESMinutesPerJob");
  // With DenyOnLimit the same shapes are refused at submit.
  AcctPolicy deny(test::cluster_model_after({"add account physics", "add user alice account=physics",
                               "modify qos normal set Flags=DenyOnLimit MinTRESPerJob=cpu=2"}),
                  "c", kPolicyEnforceAll);
  CHECK(policy_reason(AcctUsage(deny, 0).refused(job(3, "alice", 1000, "physics"), 1)) == "QOSMinCpuNotSatisfied");
}

TEST_CASE("a partition's QOS: its limits apply to every job there, before the job's QOS's unless that has OverPartQOS") {
  AcctModel m = test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos part", "add qos over",
                             "modify qos part set MaxJobsPerUser=1 MaxTRESPerJob=cpu=2",
                             "modify qos normal set MaxTRESPerJob=cpu=8",
                             "modify qos over set Flags=OverPartQOS MaxTRESPerJob=cpu=4"});
  AcctPolicy p(m, "c", kPolicyEnforceAll, nullptr, {{"gpu", "part"}, {"cpu", "nosuch"}});
  AcctUsage u(p, 0);
  Job wide = job(1, "alice", 1000, "physics");  // QOS normal
  wide.partition = "gpu";
  wide.spec.cpus_per_task = 3;
  CHECK(policy_reason(u.blocked(wide)) == "QOSMaxCpuPerJobLimit");  // the partition's 2 before the job's 8
  wide.partition = "batch";
  CHECK(u.blocked(wide) == JobReason::kNone);  // elsewhere the job's QOS alone
  wide.partition = "cpu";
  CHECK(u.blocked(wide) == JobReason::kNone);  // a QOS the model does not have: none
  // Its MaxJobsPerUser counts the partition's jobs, whatever their own QOS.
  Job running = job(2, "alice", 1000, "physics");
  running.partition = "gpu";
  u.start(running, "gpu", {}, 600);
  Job next = job(3, "alice", 1000, "physics");
  next.partition = "gpu";
  CHECK(policy_reason(u.blocked(next)) == "QOSMaxJobsPerUserLimit");
  next.partition = "batch";
  CHECK(u.blocked(next) == JobReason::kNone);
  // OverPartQOS: the job's QOS's MaxTRESPerJob (4) comes first; the partition's
  // MaxJobsPerUser, which it does not set, still applies.
  Job over = job(4, "alice", 1000, "physics", "over");
  over.partition = "gpu";
  over.spec.cpus_per_task = 3;
  AcctUsage v(p, 0);
  CHECK(v.blocked(over) == JobReason::kNone);
  over.spec.cpus_per_task = 5;
  CHECK(policy_reason(v.blocked(over)) == "QOSMaxCpuPerJobLimit");
  over.spec.cpus_per_task = 3;
  v.start(running, "gpu", {}, 600);
  CHECK(policy_reason(v.blocked(over)) == "QOSMaxJobsPerUserLimit");
  // A job without -t in the partition gets the MaxWall of the first QOS that sets one.
  AcctPolicy walls(test::cluster_model_after({"add account physics", "add user alice account=physics", "add qos part",
                                "modify qos part set MaxWall=00:05:00", "modify qos normal set MaxWall=01:00:00"}),
                   "c", kPolicyEnforceAll, nullptr, {{"gpu", "part"}});
  CHECK(walls.default_limit(next.spec, "gpu", kUnlimited) == 300);
  CHECK(walls.default_limit(next.spec, "batch", kUnlimited) == 3600);
}
