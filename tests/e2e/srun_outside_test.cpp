// End-to-end: srun outside an allocation (a login shell, no SLURM_JOB_ID): it asks the
// controller for an allocation, runs one step in it on its nodes from here (TLS to the
// job's first node, pinned), and ends it with the step's exit code (docs/steps.md).
#include <doctest/doctest.h>

#include <fstream>

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
