// scontrol show assoc_mgr (core/assoc_mgr_format) against Slurm 22.05's answers captured while
// one job of nobody ran in physics (tests/fixtures/slurm/sacctmgr/enforce-assoc-mgr*): the
// same model and job give the same section headers, user records and the lines that do not
// depend on slurmdbd's ids, nested-set numbers, priority/basic's unset shares or a job
// without a time limit; the words scontrol takes and refuses.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "core/acctmgr.hpp"
#include "core/assoc_mgr_format.hpp"

#include "../fixture_file.hpp"

using namespace hq;
using hq::test::slurp_file;

namespace {

const std::string kAssocMgrFormatDir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacctmgr/";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

AcctModel bench_state() {
  AcctModel m = default_acct_model();
  register_cluster(m, "hqbench", "127.0.0.1", 16817);
  for (const std::vector<std::string>& w : std::vector<std::vector<std::string>>{
           {"add", "account", "hqtest"}, {"add", "user", "root", "account=hqtest"}, {"add", "account", "physics"},
           {"add", "user", "nobody", "account=physics"}, {"add", "qos", "high"}, {"add", "qos", "bad2"},
           {"modify", "user", "nobody", "set", "qos+=high"}}) {
    auto r = run_acctmgr(m, w, {}, {"root", true});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    m = r.model;
  }
  return m;
}

std::string render(const std::vector<std::string>& words) {
  AcctModel m = bench_state();
  AcctPolicy policy(m, "hqbench", AcctEnforce{true, true, true, false});
  AcctUsage usage(policy, 1000);
  Job j;
  j.id = JobId{2};
  j.state = JobState::kRunning;
  j.spec.user = "nobody";
  j.spec.uid = 65534;
  j.spec.account = "physics";
  JobExtras e;
  e.qos = "normal";
  j.spec.extra = e;
  j.partition = "bench";
  j.start_time = 900;
  j.time_limit = kUnlimited;
  j.alloc = {{"n1", 1, 0, 1, {}}};
  usage.add(j);
  FairShare shares(m, "hqbench", {}, 1000, FairShareConfig{});
  auto uid_of = [](const std::string& name) -> int64_t { return name == "nobody" ? 65534 : name == "root" ? 0 : -1; };
  auto q = parse_assoc_mgr_args(words);
  REQUIRE(q.is_ok());
  q->gpu_tres = false;  // the bench's cluster has no GPUs
  return render_assoc_mgr(m, "hqbench", shares, usage, uid_of, *q);
}

bool has_line(const std::string& text, const std::string& line) {
  auto lines = lines_of(text);
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

}  // namespace

TEST_CASE("scontrol show assoc_mgr: Slurm 22.05's sections, user records and limit lines") {
  std::string ours = render({});
  std::string golden = slurp_file(kAssocMgrFormatDir + "enforce-assoc-mgr.txt");
  INFO(ours);
  // Everything up to the first association record is the same, byte for byte.
  std::string head = golden.substr(0, golden.find("ClusterName="));
  CHECK(ours.rfind(head, 0) == 0);
  for (const char* line : {"ClusterName=hqbench Account=root UserName= Partition= Priority=0 ID=1",
                           "ClusterName=hqbench Account=root UserName=root(0) Partition= Priority=0 ID=2",
                           "ClusterName=hqbench Account=hqtest UserName=root(0) Partition= Priority=0 ID=4",
                           "    GrpJobs=N(1) GrpJobsAccrue=N(0)", "    GrpSubmitJobs=N(1) GrpWall=N(0.00)",
                           "    GrpTRES=cpu=N(1),mem=N(0),energy=N(0),node=N(1),billing=N(1),fs/disk=N(0),vmem=N(0),pages=N(0)",
                           "    GrpTRESMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)",
                           "    MaxJobs= MaxJobsAccrue= MaxSubmitJobs= MaxWallPJ=", "    MaxTRESPJ=", "    MaxTRESPN=",
                           "    MaxTRESMinsPJ=", "    MinPrioThresh=", "QOS Records", "QOS=normal(1)", "    UsageRaw=0.000000",
                           "    GrpJobs=N(1) GrpJobsAccrue=N(0) GrpSubmitJobs=N(1) GrpWall=N(0.00)", "    MinPrioThresh= ",
                           "    MinTRESPJ=", "    PreemptMode=OFF", "    Priority=0", "    Account Limits", "      physics",
                           "        MaxJobsPA=N(1) MaxJobsAccruePA=N(0) MaxSubmitJobsPA=N(1)",
                           "        MaxTRESPA=cpu=N(1),mem=N(0),energy=N(0),node=N(1),billing=N(1),fs/disk=N(0),vmem=N(0),pages=N(0)",
                           "    User Limits", "      65534", "        MaxJobsPU=N(1) MaxJobsAccruePU=N(0) MaxSubmitJobsPU=N(1)",
                           "        No Accounts", "        No Users"}) {
    CHECK_MESSAGE(has_line(golden, line), "not in Slurm's: " << line);  // the expectation itself is Slurm's
    CHECK_MESSAGE(has_line(ours, line), "not in ours: " << line);
  }
  CHECK(ours.find("\n    ParentAccount=root(1) Lft=") != std::string::npos);  // hqtest's (Slurm's Lft numbers differ)
  // physics/nobody's association is nobody's default; the record for the user running the job counts it.
  CHECK(ours.find("UserName=nobody(65534) Partition= Priority=0 ID=6\n") != std::string::npos);
}

TEST_CASE("scontrol show assoc_mgr: flags and users select sections and rows, as Slurm's") {
  std::string qos = render({"flags=qos"});
  CHECK(qos.rfind("Current Association Manager state\n\nQOS Records\n\nQOS=normal(1)\n", 0) == 0);
  CHECK(qos.find("Association Records") == std::string::npos);
  std::string nobody = render({"users=nobody", "flags=assoc"});
  CHECK(nobody.rfind("Current Association Manager state\n\nAssociation Records\n\n", 0) == 0);
  // Every account's own association, and nobody's, not root's user associations.
  CHECK(nobody.find("Account=hqtest UserName= ") != std::string::npos);
  CHECK(nobody.find("UserName=nobody(65534)") != std::string::npos);
  CHECK(nobody.find("UserName=root(0)") == std::string::npos);
  std::string one = render({"qos=bad2", "f=qos"});
  CHECK(one == "Current Association Manager state\n\nQOS Records\n\nQOS=bad2(3)\n    UsageRaw=0.000000\n"
               "    GrpJobs=N(0) GrpJobsAccrue=N(0) GrpSubmitJobs=N(0) GrpWall=N(0.00)\n"
               "    GrpTRES=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)\n"
               "    GrpTRESMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)\n"
               "    GrpTRESRunMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0),fs/disk=N(0),vmem=N(0),pages=N(0)\n"
               "    MaxWallPJ=\n    MaxTRESPJ=\n    MaxTRESPN=\n    MaxTRESMinsPJ=\n    MinPrioThresh= \n    MinTRESPJ=\n"
               "    PreemptMode=OFF\n    Priority=0\n    Account Limits\n        No Accounts\n    User Limits\n        No Users\n");
  CHECK(render({"users=nosuch", "flags=users"}) == "Current Association Manager state\n\nNo users currently cached in Slurm.\n\n");
  CHECK(parse_assoc_mgr_args({"flags=bogus"}).status().message() ==
        "invalid flag 'bogus', valid options are 'Assoc, QOS, and/or Users'");
  CHECK(parse_assoc_mgr_args({"users="}).status().message() == "No value given for option users=");
  CHECK(parse_assoc_mgr_args({"partition=x"}).status().message() == "invalid entity: partition for keyword:show assoc_mgr");
}
