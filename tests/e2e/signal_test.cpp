// End to end: scancel -s SIG as Slurm's. By default the signal goes to the job's steps
// (not the batch shell), with -b to the batch shell alone, with -f to both; the job goes
// on. A pending job cannot be signalled; an unknown signal name is refused.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"
#include "steps_fixture.hpp"

using namespace hq::test;

namespace {
size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }
}  // namespace

TEST_CASE("e2e: scancel -s signals a job's steps, -b its batch shell, -f both - the job goes on") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string id = submit_steps(c, "-n2",
                                "trap 'echo batch >> got-$SLURM_JOB_ID' USR1\n"
                                "srun -n1 bash -c 'trap \"echo step >> got-$SLURM_JOB_ID.step\" USR1; "
                                "echo > ready-$SLURM_JOB_ID; while [ ! -e stop ]; do sleep 0.1; done' &\n"
                                "while [ ! -e stop ]; do sleep 0.1; done\nwait\n");
  std::string got = c.dir() + "/got-" + id, step = got + ".step";
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/ready-" + id).empty(); }, 20));
  std::string sc = "cd " + c.dir() + " && " + c.dir() + "/bin/scancel ";

  CHECK(sh(sc + "-s USR1 " + id).rc == 0);  // the step only
  CHECK(wait_until([&] { return lines(slurp(step)) == 1; }, 10));
  CHECK(sh(sc + "-b --signal=SIGUSR1 " + id).rc == 0);  // the batch shell only
  CHECK(wait_until([&] { return lines(slurp(got)) == 1; }, 10));
  CHECK(lines(slurp(step)) == 1);
  // -f signals the batch shell with its children, as Slurm's batch step does: srun is one
  // of them and forwards USR1 to its step, so the step may see it once more.
  CHECK(sh(sc + "-f -s 10 " + id).rc == 0);  // both
  CHECK(wait_until([&] { return lines(slurp(got)) == 2 && lines(slurp(step)) >= 2; }, 10));
  CHECK(c.state(id) == "RUNNING");

  std::string pending = c.submit("-H --wrap true");
  auto early = sh(sc + "-s USR1 " + pending);
  CHECK(early.rc == 228);  // Slurm's: ESLURM_TRANSITION_STATE_NO_UPDATE (2020) in exit()'s 8 bits
  CHECK(early.out == "scancel: error: Kill job error on job id " + pending + ": Job can not be altered now, try again later\n");
  auto bogus = sh(sc + "-s BOGUS " + id);
  CHECK(bogus.rc == 1);
  CHECK(bogus.out == "Unknown job signal: BOGUS\n");
  CHECK(c.state(pending) == "PENDING");
  c.release("stop");
  CHECK(c.wait_state(id, "COMPLETED", 20));
}

TEST_CASE("e2e: scancel -i asks for each job and cancels the confirmed ones - -w and -q filter") {
  LocalCluster c(1, 4);
  REQUIRE(c.ready());
  auto a = c.submit("--hold -J one --wrap true"), b = c.submit("--hold -J two --wrap true");
  REQUIRE((!a.empty() && !b.empty()));
  auto r = sh("printf 'n\\ny\\n' | " + std::string(HQ_BINARY) + " cancel -i " + a + " " + b);
  CHECK(r.rc == 0);
  CHECK(r.out.find("Cancel job_id=" + a + " name=one partition=debug [y/n]? ") != std::string::npos);
  CHECK(c.state(a) == "PENDING");
  CHECK(c.wait_state(b, "CANCELLED", 10));
  auto run = c.submit("-n1 --wrap 'sleep 30'");
  REQUIRE(c.wait_state(run, "RUNNING", 20));
  CHECK(c.hq("cancel -w e2 " + run).rc == 0);  // not on e2: nothing matched, nothing done
  CHECK(c.state(run) == "RUNNING");
  CHECK(c.hq("cancel -q high " + run).rc == 0);  // no such QOS on it
  CHECK(c.state(run) == "RUNNING");
  CHECK(c.hq("cancel -w e[1-2] " + run).rc == 0);
  CHECK(c.wait_state(run, "CANCELLED", 10));
  CHECK(c.hq("cancel " + a).rc == 0);
}
