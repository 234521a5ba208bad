// sacctmgr dump against Slurm 22.05's own: the same accounts, users, coordinators, QOS and
// limits made with sacctmgr on the slurm-bench (slurmdbd) and here give the same flat file
// and the same "sacctmgr: ..." lines on stderr (tests/fixtures/slurm/sacctmgr/dump-*).
#include <doctest/doctest.h>

#include <algorithm>

#include "acctmgr_commands.hpp"
#include "core/acctmgr.hpp"

#include "../fixture_file.hpp"

using hq::test::slurp_file;

namespace hq {
namespace {

const std::string kAcctmgrDumpDir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacctmgr/";

AcctMgrResult run(const AcctModel& m, const std::string& line) {
  return run_acctmgr(m, test::acctmgr_words(line), AcctMgrOptions{}, AcctMgrActor{"root", true});
}

AcctModel apply(AcctModel m, const std::vector<std::string>& lines) { return test::after_acctmgr(std::move(m), lines); }

// The bench's database as its setup leaves it, then the commands the capture ran.
AcctModel captured_model() {
  AcctModel m = default_acct_model();
  register_cluster(m, "hqbench", "127.0.0.1", 16817);
  return apply(m, {"add account hqtest Description=hq_test Organization=hq", "add user root account=hqtest",
                   "add account physics Description=phys_dept Organization=uni fairshare=10 GrpTRES=cpu=100",
                   "add account theory parent=physics",
                   "add user alice account=physics,theory DefaultAccount=physics MaxJobs=5",
                   "add qos high Priority=10 MaxWall=1:00:00", "modify user alice set qos+=high",
                   "add coordinator account=physics names=alice"});
}

// The captured text with underscores standing for the spaces the capture's quoted words had.
std::string spaced(std::string s) {
  for (const char* from : {"hq_test", "phys_dept"}) {
    std::string to(from);
    std::replace(to.begin(), to.end(), '_', ' ');
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at)) s.replace(at, to.size(), to);
  }
  return s;
}

}  // namespace

TEST_CASE("sacctmgr dump: Slurm's flat file of a cluster - the tree, users first, coordinators, QOS changes") {
  AcctMgrResult r = run(captured_model(), "dump hqbench file=/x/hqbench.cfg");
  CHECK(r.rc == 0);
  CHECK(!r.changed);
  CHECK(r.file_name == "/x/hqbench.cfg");
  CHECK(spaced(r.file_text) == slurp_file(kAcctmgrDumpDir + "dump-hqbench.cfg"));
  CHECK(spaced(r.err) == slurp_file(kAcctmgrDumpDir + "dump-hqbench.err"));
  CHECK(r.out.empty());
}

TEST_CASE("sacctmgr dump: every limit in Slurm's order, Fairshare=parent, DefaultQOS, AdminLevel, a QOS taken away") {
  AcctModel m = apply(captured_model(),
                      {"modify account theory set GrpJobs=1 GrpSubmitJobs=3 GrpTRES=cpu=4 GrpTRESMins=cpu=5 "
                       "GrpTRESRunMins=cpu=6 GrpWall=7 MaxJobs=8 MaxSubmitJobs=10 MaxTRES=cpu=11,mem=20 "
                       "MaxTRESPerNode=cpu=12 MaxTRESMins=cpu=13 MaxWall=14 Priority=15 qos=high,normal "
                       "DefaultQOS=high fairshare=parent",
                       "add user bob account=theory", "modify user bob set adminlevel=operator", "add qos low",
                       "modify user alice where account=theory set qos-=normal"});
  std::string want = slurp_file(kAcctmgrDumpDir + "dump-limits.cfg");
  for (const char* accrue : {":GrpJobsAccrue=2", ":MaxJobsAccrue=9"})  // hq keeps no accrue limits
    want.erase(want.find(accrue), std::string(accrue).size());
  // Slurm keeps the changes as they were typed (+high when theory gave normal alone, then
  // -normal); hq writes them from what theory gives now (high,normal): the same QOS, {high}.
  want.replace(want.find("QOS='+high,-normal'"), 19, "QOS='-normal'");
  CHECK(spaced(run(m, "dump cluster=hqbench File=d.cfg").file_text) == want);
}

TEST_CASE("sacctmgr dump: no file name, no cluster, an unknown cluster - Slurm's words and codes") {
  AcctModel m = captured_model();
  AcctMgrResult named = run(m, "dump hqbench");
  CHECK(named.out == " No filename given, using ./hqbench.cfg.\n");
  CHECK(named.file_name == "./hqbench.cfg");
  AcctMgrResult none = run(m, "dump");
  CHECK(none.rc == 1);
  CHECK(none.err == " We need a cluster to dump.\n");
  CHECK(none.file_name.empty());
  AcctMgrResult unknown = run(m, "dump nosuch file=x.cfg");
  CHECK(unknown.rc == 1);
  CHECK(unknown.err == " Cluster nosuch doesn't exist.\n");
  CHECK(unknown.file_name.empty());
}

}  // namespace hq
