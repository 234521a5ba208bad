// End-to-end: srun outside an allocation (a login shell, no SLURM_JOB_ID): it asks the
// controller for an allocation, runs one step in it on its nodes from here (TLS to the
// job's first node, pinned), and ends it with the step's exit code (docs/steps.md).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

// srun through its persona link, with no allocation in the environment; stderr with stdout.
std::string srun_cmd(LocalCluster& c, const std::string& args) {
  return "cd " + c.dir() + " && env -u SLURM_JOB_ID -u SLURM_JOBID -u HQ_STEP_SOCKET " + c.dir() + "/bin/srun " + args;
}


}  // namespace

TEST_CASE("e2e: srun outside an allocation runs one step on its nodes - labels, node names, job COMPLETED with the command's name") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto r = sh(srun_cmd(c, "-N2 -n2 -l sh -c 'echo on $SLURMD_NODENAME job $SLURM_JOB_NAME $SLURM_JOB_NUM_NODES'"));
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK(r.out.find("0: on e1 job sh 2\n") != std::string::npos);
  CHECK(r.out.find("1: on e2 job sh 2\n") != std::string::npos);
  CHECK(r.out.find("queued and waiting") == std::string::npos);  // it did not wait
  std::string line = c.queue_line("sh");
  INFO(line);
  CHECK(line.find(" CD ") != std::string::npos);
  // A failing step: the job FAILED, srun's exit code is the step's.
  auto failed = sh(srun_cmd(c, "-n1 -J failing sh -c 'exit 3'"));
  INFO(failed.out);
  CHECK(failed.rc == 3);
  CHECK(failed.out.find("srun: error: e1: task 0: Exited with exit code 3") != std::string::npos);
  std::string fline = c.queue_line("failing");
  INFO(fline);
  CHECK(fline.find(" F ") != std::string::npos);
}

TEST_CASE("e2e: srun outside an allocation waits for resources - Slurm's queued and allocated lines - then runs") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string batch = c.fill_cluster();
  REQUIRE(!batch.empty());
  std::string log = c.dir() + "/srun.log";
  run_waiting(srun_cmd(c, "-N1 hostname"), log);
  REQUIRE(c.hq("cancel " + batch).rc == 0);
  REQUIRE(wait_for_text(log, "rc="));
  std::string out = slurp(log);
  INFO(out);
  CHECK(out.find("srun: job ") == 0);
  CHECK(out.find(" queued and waiting for resources\nsrun: job ") != std::string::npos);
  CHECK(out.find(" has been allocated resources\n") != std::string::npos);
  CHECK(out.find("rc=0\n") != std::string::npos);
  CHECK(c.queue_line("hostname").find(" CD ") != std::string::npos);
}

TEST_CASE("e2e: srun outside an allocation interrupted while it waits - the job is revoked (CANCELLED), rc 1") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string batch = c.fill_cluster();
  REQUIRE(!batch.empty());
  std::string log = c.dir() + "/srun.log";
  run_waiting(srun_cmd(c, "-J waiter true"), log);
  std::string out = interrupt_and_collect(log);
  INFO(out);
  CHECK(out.find(" has been revoked\n") != std::string::npos);
  CHECK(out.find("rc=1\n") != std::string::npos);
  CHECK(c.queue_line("waiter").find(" CA ") != std::string::npos);
  c.hq("cancel " + batch);
}

namespace {
// The pid of the one process whose command line matches `pattern` ("" when none or several).
std::string pid_of(const std::string& pattern) {
  auto r = sh("pgrep -f -- '" + pattern + "'");
  std::istringstream in(r.out);
  std::string pid, another;
  in >> pid >> another;
  return r.rc == 0 && another.empty() ? pid : "";
}
}  // namespace

TEST_CASE("e2e: InactiveLimit ends an allocation whose srun or salloc went silent (kill -9, SIGSTOP) - live ones keep theirs") {
  LocalCluster c(2, 2, 20, "inactive_limit = \"3s\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string salloc = "cd " + c.dir() + " && env -u SLURM_JOB_ID -u SLURM_JOBID -u HQ_STEP_SOCKET -u HQ_STEPMGR " + c.dir() + "/bin/salloc ";
  // Holders that live past the limit: their keepalives hold their jobs.
  std::string alive_salloc = c.dir() + "/alive-salloc.log", alive_srun = c.dir() + "/alive-srun.log";
  REQUIRE(run_background(salloc + "-J alive1 sh -c 'sleep 8; echo held on'", alive_salloc));
  REQUIRE(run_background(srun_cmd(c, "-J alive2 sh -c 'sleep 8; echo held on'"), alive_srun));
  // A salloc killed with SIGKILL, and an srun stopped (Slurm's InactiveLimit ends both).
  std::string dead = c.dir() + "/dead.log", stopped = c.dir() + "/stopped.log";
  REQUIRE(run_background(salloc + "-J deadhold sleep 297", dead));
  REQUIRE(wait_for_text(dead, "Granted job allocation "));
  REQUIRE(run_background(srun_cmd(c, "-J stopped sleep 296"), stopped));
  REQUIRE(wait_until([&] { return c.queue_line("stopped").find(" R ") != std::string::npos; }, 30));
  // The processes themselves, not the shells that started them: their command lines begin so.
  std::string dead_pid = pid_of("^" + c.dir() + "/bin/salloc -J deadhold"), stopped_pid = pid_of("^" + c.dir() + "/bin/srun -J stopped");
  REQUIRE(!dead_pid.empty());
  REQUIRE(!stopped_pid.empty());
  CHECK(sh("kill -9 " + dead_pid).rc == 0);
  CHECK(sh("kill -STOP " + stopped_pid).rc == 0);

  auto id_of = [&](const std::string& name) {
    std::string id;
    std::istringstream(c.queue_line(name)) >> id;
    return id;
  };
  std::string dead_id = id_of("deadhold"), stopped_id = id_of("stopped");
  CHECK(c.wait_state(dead_id, "TIMEOUT", 20));
  CHECK(c.wait_state(stopped_id, "TIMEOUT", 20));
  std::string shown = c.hq("show job " + dead_id).out;
  INFO(shown);
  CHECK(shown.find("JobState=TIMEOUT Reason=InactiveLimit") != std::string::npos);
  CHECK(c.hq("show job " + stopped_id).out.find("JobState=TIMEOUT Reason=InactiveLimit") != std::string::npos);
  sh("kill -CONT " + stopped_pid + "; kill -9 " + stopped_pid + "; pkill -f 'sleep 297'");

  REQUIRE(wait_for_text(alive_salloc, "rc="));
  REQUIRE(wait_for_text(alive_srun, "rc="));
  INFO(slurp(alive_salloc));
  INFO(slurp(alive_srun));
  CHECK(slurp(alive_salloc).find("held on\n") != std::string::npos);
  CHECK(slurp(alive_srun).find("held on\n") != std::string::npos);
  CHECK(c.queue_line("alive1").find(" CD ") != std::string::npos);
  CHECK(c.queue_line("alive2").find(" CD ") != std::string::npos);
  CHECK(sh(c.dir() + "/bin/scontrol show config").out.find("InactiveLimit           = 3 sec\n") != std::string::npos);
}
