// Accounting enforcement ([accounting] enforce = "associations,limits,qos") on a real
// cluster, driven through sacctmgr and sbatch as Slurm's users drive them: an unknown
// account or QOS is refused with sbatch's words, a job without -A gets the user's default
// account and QOS normal, submit limits refuse with the limit's name then the policy line,
// and running limits keep jobs PENDING with Slurm's reasons until the limit is lifted. The
// expected texts are those of Slurm 22.05 (tests/fixtures/slurm/sacctmgr/enforce-*).
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

std::string stderr_of(const std::string& cmd) { return "{ " + cmd + " 2>&1 >/dev/null; }"; }
const char* kPolicyLine =
    "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size "
    "and/or time limits)\n";

// sbatch's job id, or "" when refused.
std::string sbatch(const LocalCluster& c, const std::string& args) {
  auto r = sh(in_bin(c) + "sbatch --parsable -o /dev/null " + args + " 2>/dev/null");
  std::string id = r.out;
  while (!id.empty() && id.back() == '\n') id.pop_back();
  return r.rc == 0 ? id : "";
}

// squeue's "%i|%a|%q|%T|%r" line for one job.
std::string line_of(const LocalCluster& c, const std::string& id) {
  auto r = sh(in_bin(c) + "squeue -h -j " + id + " -o '%i|%a|%q|%T|%r'");
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

void acctmgr(const LocalCluster& c, const std::string& words) {
  auto r = sh(in_bin(c) + "sacctmgr -i " + words);
  INFO("sacctmgr -i " << words << ": " << r.out);
  REQUIRE(r.rc == 0);
}

void cancel_all(const LocalCluster& c) {
  sh(in_bin(c) + "scancel -u root");
  REQUIRE(wait_until([&] { return sh(in_bin(c) + "squeue -h -o %i").out.empty(); }, 20));
}

}  // namespace

TEST_CASE("e2e: accounting enforcement - accounts, QOS, submit limits and pending reasons in Slurm's words") {
  LocalCluster c(2, 2, 20, "[accounting]\nenforce = \"associations,limits,qos\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -n -P list assoc format=account").rc == 0);  // the model has loaded

  auto nosuch = sh(stderr_of(in_bin(c) + "sbatch -o /dev/null -A nosuch --wrap true"));
  CHECK(nosuch.rc == 1);
  CHECK(nosuch.out == "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n");
  auto badqos = sh(stderr_of(in_bin(c) + "sbatch -o /dev/null --qos nosuch --wrap true"));
  CHECK(badqos.rc == 1);
  CHECK(badqos.out == "sbatch: error: Batch job submission failed: Invalid qos specification\n");
  CHECK(sh(in_bin(c) + "squeue -h").out.empty());

  // No -A: the user's default account; no --qos: normal.
  std::string plain = sbatch(c, "--wrap 'sleep 300'");
  REQUIRE(!plain.empty());
  REQUIRE(c.wait_state(plain, "RUNNING", 20));
  CHECK(line_of(c, plain) == plain + "|root|normal|RUNNING|None");
  cancel_all(c);

  acctmgr(c, "add account physics");
  acctmgr(c, "add user root account=physics");
  acctmgr(c, "add qos high");
  auto high = sh(stderr_of(in_bin(c) + "sbatch -o /dev/null -A physics --qos high --wrap true"));
  CHECK(high.out == "sbatch: error: Batch job submission failed: Invalid qos specification\n");
  acctmgr(c, "modify user root where account=physics set qos+=high");
  std::string in_high = sbatch(c, "-A physics --qos high --wrap 'sleep 300'");
  REQUIRE(!in_high.empty());
  REQUIRE(c.wait_state(in_high, "RUNNING", 20));
  CHECK(line_of(c, in_high) == in_high + "|physics|high|RUNNING|None");
  cancel_all(c);

  SUBCASE("association MaxSubmitJobs refuses the third submission") {
    acctmgr(c, "modify user where name=root account=physics set MaxSubmitJobs=2");
    CHECK(!sbatch(c, "-A physics --wrap 'sleep 300'").empty());
    CHECK(!sbatch(c, "-A physics --wrap 'sleep 300'").empty());
    auto third = sh(stderr_of(in_bin(c) + "sbatch -o /dev/null -A physics --wrap 'sleep 300'"));
    CHECK(third.rc == 1);
    CHECK(third.out == std::string("sbatch: error: AssocMaxSubmitJobLimit\n") + kPolicyLine);
    // Other accounts of the same user are not limited by it.
    CHECK(!sbatch(c, "-A root --wrap 'sleep 300'").empty());
  }
  SUBCASE("association MaxJobs keeps the second job pending until the limit is lifted") {
    acctmgr(c, "modify user where name=root account=physics set MaxJobs=1");
    std::string first = sbatch(c, "-A physics --wrap 'sleep 300'");
    std::string second = sbatch(c, "-A physics --wrap 'sleep 300'");
    REQUIRE(c.wait_state(first, "RUNNING", 20));
    REQUIRE(c.wait_considered(second, 20));
    CHECK(line_of(c, second) == second + "|physics|normal|PENDING|AssocMaxJobsLimit");
    // scontrol show assoc_mgr shows the limit with what is used against it.
    auto mgr = sh(in_bin(c) + "scontrol show assoc_mgr users=root accounts=physics flags=assoc");
    CHECK(mgr.rc == 0);
    CHECK(mgr.out.find("ClusterName=e2e Account=physics UserName=root(0) Partition=") != std::string::npos);
    CHECK(mgr.out.find("    MaxJobs=1(1) MaxJobsAccrue= MaxSubmitJobs=(") == std::string::npos);
    CHECK(mgr.out.find("    MaxJobs=1(1) MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ=\n") != std::string::npos);
    CHECK(mgr.out.find("    GrpJobs=N(1) GrpJobsAccrue=N(0)\n    GrpSubmitJobs=N(2) ") != std::string::npos);
    // Emptying the job's account or QOS by an update gives it the defaults back (physics is
    // root's default here): it stays held instead of slipping out of its limits.
    acctmgr(c, "modify user root set defaultaccount=physics");
    CHECK(sh(in_bin(c) + "scontrol update jobid=" + second + " account= qos=").rc == 0);
    std::string other = sbatch(c, "-A root --wrap 'sleep 300'");  // once it runs, a pass has seen the update
    REQUIRE(c.wait_state(other, "RUNNING", 20));
    CHECK(line_of(c, second) == second + "|physics|normal|PENDING|AssocMaxJobsLimit");
    acctmgr(c, "modify user where name=root account=physics set MaxJobs=-1");
    CHECK(c.wait_state(second, "RUNNING", 20));
  }
  SUBCASE("association MaxWall: a longer -t waits, no -t gets MaxWall as its limit") {
    acctmgr(c, "modify user where name=root account=physics set MaxWall=00:10:00");
    std::string longer = sbatch(c, "-A physics -t 20 --wrap 'sleep 300'");
    std::string none = sbatch(c, "-A physics --wrap 'sleep 300'");
    REQUIRE(c.wait_state(none, "RUNNING", 20));
    REQUIRE(c.wait_considered(longer, 20));
    CHECK(line_of(c, longer) == longer + "|physics|normal|PENDING|AssocMaxWallDurationPerJobLimit");
    CHECK(sh(in_bin(c) + "squeue -h -j " + none + " -o %l").out == "10:00\n");
  }
  SUBCASE("account GrpTRES=cpu=2 and GrpJobs=1 hold the second job") {
    acctmgr(c, "modify account physics set GrpTRES=cpu=2");
    std::string first = sbatch(c, "-A physics -c 2 --wrap 'sleep 300'");
    std::string second = sbatch(c, "-A physics -c 2 --wrap 'sleep 300'");
    REQUIRE(c.wait_state(first, "RUNNING", 20));
    REQUIRE(c.wait_considered(second, 20));
    CHECK(line_of(c, second) == second + "|physics|normal|PENDING|AssocGrpCpuLimit");
    acctmgr(c, "modify account physics set GrpTRES=cpu=-1 GrpJobs=1");
    REQUIRE(wait_until([&] { return line_of(c, second) == second + "|physics|normal|PENDING|AssocGrpJobsLimit"; }, 20));
    CHECK(c.state(first) == "RUNNING");
  }
  SUBCASE("QOS limits: MaxJobsPerUser, MaxSubmitJobsPerUser, MaxTRESPerJob, DenyOnLimit") {
    acctmgr(c, "modify qos high set MaxJobsPerUser=1");
    std::string first = sbatch(c, "-A physics --qos high --wrap 'sleep 300'");
    std::string second = sbatch(c, "-A physics --qos high --wrap 'sleep 300'");
    REQUIRE(c.wait_state(first, "RUNNING", 20));
    REQUIRE(c.wait_considered(second, 20));
    CHECK(line_of(c, second) == second + "|physics|high|PENDING|QOSMaxJobsPerUserLimit");
    acctmgr(c, "modify qos high set MaxJobsPerUser=-1 MaxSubmitJobsPerUser=2");
    auto third = sh(stderr_of(in_bin(c) + "sbatch -o /dev/null -A physics --qos high --wrap 'sleep 300'"));
    CHECK(third.rc == 1);
    CHECK(third.out == std::string("sbatch: error: QOSMaxSubmitJobPerUserLimit\n") + kPolicyLine);
    cancel_all(c);
    acctmgr(c, "modify qos high set MaxSubmitJobsPerUser=-1 MaxTRESPerJob=cpu=1");
    std::string wide = sbatch(c, "-A physics --qos high -c 2 --wrap 'sleep 300'");
    REQUIRE(c.wait_considered(wide, 20));
    CHECK(line_of(c, wide) == wide + "|physics|high|PENDING|QOSMaxCpuPerJobLimit");
    acctmgr(c, "modify qos high set Flags=DenyOnLimit MaxWall=00:05:00");
    auto denied = sh(stderr_of(in_bin(c) + "sbatch -o /dev/null -A physics --qos high -t 10 --wrap 'sleep 300'"));
    CHECK(denied.rc == 1);
    CHECK(denied.out == std::string("sbatch: error: QOSMaxWallDurationPerJobLimit\n") + kPolicyLine);
    CHECK(!sbatch(c, "-A physics --qos high -t 5 --wrap 'sleep 300'").empty());
  }
  SUBCASE("shape limits: a QOS's MinTRESPerJob holds a small job, MaxTRESMins sets the limit of a job without -t") {
    acctmgr(c, "modify qos high set MinTRESPerJob=cpu=2");
    std::string small = sbatch(c, "-A physics --qos high --wrap 'sleep 300'");
    std::string two = sbatch(c, "-A physics --qos high -c 2 --wrap 'sleep 300'");
    REQUIRE(c.wait_state(two, "RUNNING", 20));
    REQUIRE(c.wait_considered(small, 20));
    CHECK(line_of(c, small) == small + "|physics|high|PENDING|QOSMinCpuNotSatisfied");
    acctmgr(c, "modify user where name=root account=physics set MaxTRESMins=cpu=20");
    std::string capped = sbatch(c, "-A physics -c 2 --wrap 'sleep 300'");  // 20 CPU-minutes / 2 CPUs
    REQUIRE(c.wait_state(capped, "RUNNING", 20));
    CHECK(sh(in_bin(c) + "squeue -h -j " + capped + " -o %l").out == "10:00\n");
    std::string longer = sbatch(c, "-A physics -c 2 -t 11 --wrap 'sleep 300'");
    REQUIRE(c.wait_considered(longer, 20));
    CHECK(line_of(c, longer) == longer + "|physics|normal|PENDING|AssocMaxCpuMinutesPerJobLimit");
  }
  cancel_all(c);
}

TEST_CASE("e2e: accounting enforcement - a user without an association may not submit - the default account is filled in") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2, 20, "[accounting]\nenforce = \"associations\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -n -P list assoc format=account").rc == 0);
  std::string sbatch_nobody = c.dir() + "/bin/sbatch -o /dev/null --wrap true";
  auto refused = as_nobody(c, "sh -c '" + stderr_of(sbatch_nobody) + "'");
  CHECK(refused.rc == 1);
  CHECK(refused.out == "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified\n");
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add account physics").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add user nobody account=physics").rc == 0);
  auto ok = as_nobody(c, c.dir() + "/bin/sbatch --parsable -o /dev/null --wrap 'sleep 300'");
  REQUIRE(ok.rc == 0);
  std::string id = ok.out.substr(0, ok.out.find('\n'));
  CHECK(sh(in_bin(c) + "squeue -h -j " + id + " -o '%u|%a|%q'").out == "nobody|physics|normal\n");
  sh(in_bin(c) + "scancel " + id);
}

TEST_CASE("e2e: accounting enforcement - a partition's QOS limits every job in that partition") {
  LocalCluster c(2, 2, 20, "[accounting]\nenforce = \"associations,limits,qos\"\n", "",
                 "[[partition]]\nname = \"gpu\"\nnodes = \"e[1-2]\"\nqos = \"part\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -n -P list assoc format=account").rc == 0);  // the model has loaded
  acctmgr(c, "add qos part");
  acctmgr(c, "modify qos part set MaxJobsPerUser=1");
  CHECK(sh(in_bin(c) + "scontrol show partition gpu").out.find(" QoS=part\n") != std::string::npos);
  std::string first = sbatch(c, "-p gpu --wrap 'sleep 300'");
  std::string second = sbatch(c, "-p gpu --wrap 'sleep 300'");
  std::string elsewhere = sbatch(c, "-p debug --wrap 'sleep 300'");
  REQUIRE(c.wait_state(first, "RUNNING", 20));
  REQUIRE(c.wait_state(elsewhere, "RUNNING", 20));  // the job's own QOS (normal) sets no limit
  REQUIRE(c.wait_considered(second, 20));
  CHECK(line_of(c, second) == second + "|root|normal|PENDING|QOSMaxJobsPerUserLimit");
  acctmgr(c, "modify qos part set MaxJobsPerUser=-1");
  CHECK(c.wait_state(second, "RUNNING", 20));
  cancel_all(c);
}

TEST_CASE("e2e: accounting enforcement - --qos a,b starts a job under the first QOS whose limits allow it") {
  LocalCluster c(2, 2, 20, "[accounting]\nenforce = \"associations,limits,qos\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -n -P list assoc format=account").rc == 0);  // the model has loaded
  acctmgr(c, "add qos low set Priority=10");
  acctmgr(c, "add qos high set Priority=100 GrpJobs=1");
  acctmgr(c, "add qos secret");
  acctmgr(c, "modify user root set qos=normal,low,high");
  auto refused = sh(stderr_of(in_bin(c) + "sbatch -o /dev/null --qos low,secret --wrap true"));
  CHECK(refused.rc == 1);
  CHECK(refused.out == "sbatch: error: Batch job submission failed: Invalid qos specification\n");
  std::string first = sbatch(c, "--qos low,high --wrap 'sleep 300'");
  REQUIRE(c.wait_state(first, "RUNNING", 20));
  CHECK(line_of(c, first) == first + "|root|high|RUNNING|None");  // highest Priority first
  acctmgr(c, "modify qos low set GrpJobs=1");
  std::string second = sbatch(c, "--qos low,high --wrap 'sleep 300'");
  REQUIRE(c.wait_state(second, "RUNNING", 20));
  CHECK(line_of(c, second) == second + "|root|low|RUNNING|None");  // high is full
  std::string third = sbatch(c, "--qos low,high --wrap 'sleep 300'");
  REQUIRE(c.wait_considered(third, 20));
  CHECK(line_of(c, third) == third + "|root|high,low|PENDING|QOSGrpJobsLimit");
  CHECK(sh(in_bin(c) + "squeue -h -q low -o %i | sort").out == second + "\n" + third + "\n");
  sh(in_bin(c) + "scancel " + first);
  CHECK(c.wait_state(third, "RUNNING", 20));
  CHECK(line_of(c, third) == third + "|root|high|RUNNING|None");
  cancel_all(c);
}
