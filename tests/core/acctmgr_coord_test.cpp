// sacctmgr as a coordinator (core/acctmgr_coord): what a coordinator of an account may
// change below it, and what stays an administrator's.
#include <doctest/doctest.h>

#include "acctmgr_commands.hpp"
#include "core/acct_model.hpp"
#include "core/acctmgr.hpp"

using namespace hq;

namespace {

// physics (MaxJobs=10) > theory; chemistry beside it; alice coordinates physics.
AcctModel tree() {
  return test::after_acctmgr(default_acct_model(), {"add cluster c1", "add account physics cluster=c1 MaxJobs=10",
                                                    "add account theory parent=physics cluster=c1",
                                                    "add account chemistry cluster=c1",
                                                    "add user alice account=physics cluster=c1",
                                                    "add coordinator account=physics names=alice"});
}

AcctMgrResult as(const std::string& who, const AcctModel& m, const std::string& line) {
  return run_acctmgr(m, test::acctmgr_words(line), AcctMgrOptions{}, AcctMgrActor{who, false});
}

}  // namespace

TEST_CASE("sacctmgr: a coordinator changes what is below the accounts they coordinate, and nothing else") {
  AcctModel m = tree();
  // Within physics: a user, a sub-account, a limit at or under physics' own.
  auto user = as("alice", m, "add user bob account=theory cluster=c1");
  INFO(user.out << user.err);
  CHECK(user.rc == 0);
  CHECK(user.changed);
  m = user.model;
  auto sub = as("alice", m, "add account quantum parent=theory cluster=c1");
  CHECK(sub.rc == 0);
  auto limit = as("alice", m, "modify user bob where account=theory set MaxJobs=8");
  INFO(limit.out << limit.err);
  CHECK(limit.rc == 0);
  CHECK(limit.changed);

  // Slurm 24.05: not above the parent's job limits (physics' MaxJobs=10 reaches theory too).
  auto above = as("alice", m, "modify user bob where account=theory set MaxJobs=20");
  CHECK(above.rc == 1);
  CHECK_FALSE(above.changed);
  CHECK(above.err.find("Access/permission denied") != std::string::npos);
  CHECK(above.err.find("MaxJobs=20 of association (theory, bob) is above its parent's 10") != std::string::npos);

  // Outside physics, and what is an administrator's: refused, nothing changed.
  for (const char* line : {"add user carol account=chemistry cluster=c1", "modify account chemistry set MaxJobs=3",
                           "add qos fast", "add user dave account=physics adminlevel=admin cluster=c1",
                           "modify user alice set adminlevel=admin", "delete account physics"}) {
    auto r = as("alice", m, line);
    INFO(line << ": " << r.err);
    CHECK(r.rc == 1);
    CHECK_FALSE(r.changed);
    CHECK(r.err.rfind(" Error with request: Access/permission denied\n", 0) == 0);
  }
  // Someone who coordinates nothing may change nothing, as before.
  CHECK(as("bob", m, "add user erin account=theory cluster=c1").err ==
        " Error with request: Access/permission denied\n");
}

TEST_CASE("sacctmgr: a coordinator's TRES limits stay within the parent's, TRES by TRES") {
  AcctModel m = test::after_acctmgr(tree(), {"modify account physics set GrpTRES=cpu=16 MaxTRES=gres/gpu=2",
                                             "add user bob account=theory cluster=c1"});
  auto within = as("alice", m, "modify account theory set GrpTRES=cpu=8,mem=4G MaxTRES=gres/gpu=1");
  INFO(within.out << within.err);
  CHECK(within.rc == 0);  // mem: physics sets none, so no cap
  CHECK(within.changed);
  auto grp = as("alice", m, "modify account theory set GrpTRES=cpu=32");
  CHECK(grp.rc == 1);
  CHECK_FALSE(grp.changed);
  CHECK(grp.err.find("GrpTRES=cpu=32 of association (theory) is above its parent's cpu=16") != std::string::npos);
  // A Max limit physics sets reaches bob through theory.
  auto gpus = as("alice", m, "modify user bob where account=theory set MaxTRES=gres/gpu=4");
  CHECK(gpus.rc == 1);
  CHECK(gpus.err.find("MaxTRES=gres/gpu=4 of association (theory, bob) is above its parent's gres/gpu=2") !=
        std::string::npos);
  // An administrator is not held to them.
  auto admin = run_acctmgr(m, test::acctmgr_words("modify account theory set GrpTRES=cpu=32"), AcctMgrOptions{},
                           AcctMgrActor{"root", true});
  CHECK(admin.rc == 0);
}
