// End-to-end: salloc gets an allocation, runs a command here with its environment (srun
// inside runs steps on the allocation's nodes through its first node's agent), and gives
// it back when the command exits, with Slurm 22.05's lines and exit codes (docs/steps.md).
#include <doctest/doctest.h>

#include <fstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

// salloc through its persona link, outside any allocation; stderr with stdout.
std::string salloc_cmd(LocalCluster& c, const std::string& args) {
  return "cd " + c.dir() + " && env -u SLURM_JOB_ID -u SLURM_JOBID -u HQ_STEP_SOCKET -u HQ_STEPMGR PATH=" + c.dir() +
         "/bin:$PATH " + c.dir() + "/bin/salloc " + args;
}


// salloc `args` in the background on a full cluster, once it says it waits; its log.
std::string salloc_waiting(LocalCluster& c, const std::string& args) {
  std::string log = c.dir() + "/salloc.log";
  run_waiting(salloc_cmd(c, args), log);
  return log;
}

}  // namespace

TEST_CASE("e2e: salloc runs a command with the allocation's environment - srun inside runs on its nodes - its exit code") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto r = sh(salloc_cmd(c, "-N2 sh -c 'echo job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST n=$SLURM_JOB_NUM_NODES "
                            "name=$SLURM_JOB_NAME step=${SLURM_STEP_ID:-none} here=${SLURMD_NODENAME:-none}; "
                            "srun -l sh -c \"echo on \\$SLURMD_NODENAME step \\$SLURM_STEP_ID\"'"));
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK(r.out.find("salloc: Granted job allocation ") == 0);
  std::string id = r.out.substr(31, r.out.find('\n') - 31);
  CHECK(r.out.find("job=" + id + " nodes=e[1-2] n=2 name=interactive step=none here=none\n") != std::string::npos);
  CHECK(r.out.find("0: on e1 step 0\n") != std::string::npos);
  CHECK(r.out.find("1: on e2 step 0\n") != std::string::npos);
  CHECK(r.out.find("salloc: Relinquishing job allocation " + id + "\n") != std::string::npos);
  CHECK(c.queue_line("interact").find(" CD ") != std::string::npos);

  auto failed = sh(salloc_cmd(c, "-J three sh -c 'exit 3'"));
  INFO(failed.out);
  CHECK(failed.rc == 3);
  CHECK(c.queue_line("three").find(" F ") != std::string::npos);
  // Killed by SIGTERM: 1 (by SIGKILL, SIGINT, SIGHUP or SIGQUIT it would be 0).
  CHECK(sh(salloc_cmd(c, "-J term sh -c 'kill -TERM $$'")).rc == 1);
  CHECK(sh(salloc_cmd(c, "-J killed sh -c 'kill -KILL $$'")).rc == 0);

  auto missing = sh(salloc_cmd(c, "-J missing /nonexistent/cmd"));
  INFO(missing.out);
  CHECK(missing.rc == 1);
  CHECK(missing.out.find("salloc: error: _fork_command: Unable to find command \"/nonexistent/cmd\"\n") != std::string::npos);
  CHECK(c.queue_line("missing").find(" R ") == std::string::npos);  // given back

  auto bad = sh(salloc_cmd(c, "--wrap true"));  // sbatch's alone: unknown to salloc, as to Slurm 22.05's
  CHECK(bad.rc == 255);
  CHECK(bad.out == "salloc: unrecognized option '--wrap'\nTry \"salloc --help\" for more information\n");
}

TEST_CASE("e2e: salloc waits with Slurm's lines - -I refuses at once - a revoked allocation is reported and -K signals the command") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string batch = c.fill_cluster();
  REQUIRE(!batch.empty());

  auto now = sh(salloc_cmd(c, "-I -J now true"));
  INFO(now.out);
  CHECK(now.rc == 1);
  CHECK(now.out.find("salloc: error: Unable to allocate resources: Immediate execution impossible") != std::string::npos);
  CHECK(c.queue_line("now").find(" CA ") != std::string::npos);

  std::string log = salloc_waiting(c, "-J later sh -c 'echo ran in $SLURM_JOB_ID'");
  REQUIRE(c.hq("cancel " + batch).rc == 0);
  REQUIRE(wait_for_text(log, "rc="));
  std::string out = slurp(log);
  INFO(out);
  CHECK(out.find("salloc: Pending job allocation ") == 0);
  CHECK(out.find("\nsalloc: job ") != std::string::npos);
  CHECK(out.find(" queued and waiting for resources\nsalloc: job ") != std::string::npos);
  CHECK(out.find(" has been allocated resources\nsalloc: Granted job allocation ") != std::string::npos);
  CHECK(out.find("ran in ") != std::string::npos);
  CHECK(out.find("rc=0\n") != std::string::npos);

  // Cancelled under its command: said within the check interval; -K ends the command.
  auto revoked = sh(salloc_cmd(c, "-K -J revoked sh -c 'scancel $SLURM_JOB_ID; sleep 60'"));
  INFO(revoked.out);
  CHECK(revoked.rc == 1);  // the command died of SIGTERM
  CHECK(revoked.out.find(" has been revoked.\nsalloc: Relinquishing job allocation ") != std::string::npos);
  CHECK(c.queue_line("revoked").find(" CA ") != std::string::npos);
}

TEST_CASE("e2e: salloc interrupted while it waits - the job is revoked (CANCELLED), rc 1") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string batch = c.fill_cluster();
  REQUIRE(!batch.empty());
  std::string out = interrupt_and_collect(salloc_waiting(c, "-J waiter true"));
  INFO(out);
  CHECK(out.find(" has been revoked.\nsalloc: Job aborted due to signal\n") != std::string::npos);
  CHECK(out.find("rc=1\n") != std::string::npos);
  CHECK(c.queue_line("waiter").find(" CA ") != std::string::npos);
  c.hq("cancel " + batch);
}

TEST_CASE("e2e: step ids in a salloc allocation go on after its first node's agent restarts") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/inner.sh") << "srun sh -c 'echo before $SLURM_STEP_ID'\necho ready > ready\n"
                                       << until_file("go") << "\nsrun sh -c 'echo after $SLURM_STEP_ID'\n";
  std::string log = c.dir() + "/ids.log";
  REQUIRE(run_background(salloc_cmd(c, "-N1 bash inner.sh"), log));
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/ready").empty(); }, 30));
  c.restart_agent_seen(1);
  c.release("go");
  REQUIRE(wait_for_text(log, "rc="));
  std::string out = slurp(log);
  INFO(out);
  CHECK(out.find("before 0\n") != std::string::npos);
  CHECK(out.find("after 1\n") != std::string::npos);
  CHECK(out.find("rc=0") != std::string::npos);
}
