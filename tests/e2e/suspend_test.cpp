// End to end: scontrol suspend / resume (operators) stop and continue a job's batch shell
// and steps, give its CPUs to other jobs meanwhile and show it SUSPENDED; scontrol notify
// writes slurmstepd's line into a running job's stderr; --mem=0 takes a node's memory
// whole. Errors and exit codes as Slurm 22.05's scontrol (captured on the slurm-bench).
#include <doctest/doctest.h>

#include <fstream>

#include "cluster_fixture.hpp"
#include "steps_fixture.hpp"

using namespace hq::test;

namespace {

// The state letter of /proc/PID/stat ('T': stopped), or 0 when there is no such process.
char proc_state(const std::string& pid_text) {
  if (pid_text.empty()) return 0;
  std::ifstream in("/proc/" + pid_text + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

TEST_CASE("e2e: scontrol suspend stops a job and its steps and frees its CPUs - resume continues it") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string id = submit_steps(c, "-n2",
                                "echo $$ > batch-$SLURM_JOB_ID\n"
                                "srun -n1 bash -c 'echo $$ > step-$SLURM_JOB_ID; while [ ! -e stop ]; do sleep 0.1; done' &\n"
                                "while [ ! -e stop ]; do sleep 0.1; done\nwait\n");
  std::string batch_pid, step_pid;
  REQUIRE(wait_until([&] {
    batch_pid = first_line(slurp(c.dir() + "/batch-" + id));
    step_pid = first_line(slurp(c.dir() + "/step-" + id));
    return !batch_pid.empty() && !step_pid.empty();
  }, 20));
  std::string other = c.submit("-n2 --wrap 'sleep 300'");
  REQUIRE(c.wait_considered(other, 20));
  CHECK(c.state(other) == "PENDING");
  std::string sc = "cd " + c.dir() + " && " + c.dir() + "/bin/scontrol ";

  auto early = sh(sc + "suspend " + other);
  CHECK(early.rc == 1);
  CHECK(early.out == "Job is pending execution for job " + other + "\n");
  auto not_suspended = sh(sc + "resume " + id);
  CHECK(not_suspended.rc == 1);
  CHECK(not_suspended.out == "Job is not suspended for job " + id + "\n");

  CHECK(sh(sc + "suspend " + id).rc == 0);
  CHECK(c.wait_state(id, "SUSPENDED", 10));
  CHECK(wait_until([&] { return proc_state(batch_pid) == 'T' && proc_state(step_pid) == 'T'; }, 10));
  CHECK(sh(sc + "suspend " + id).rc == 0);  // again: nothing to do, as Slurm's
  CHECK(c.wait_state(other, "RUNNING", 20));  // its CPUs went to the next job
  auto shown = sh(sc + "show job " + id).out;
  CHECK(shown.find("JobState=SUSPENDED") != std::string::npos);
  CHECK(shown.find("SuspendTime=None") == std::string::npos);
  CHECK(c.hq("queue -h -t S -o %i").out == id + "\n");
  CHECK(c.hq("queue -h -t R -o %i").out == other + "\n");
  CHECK(c.hq("cancel " + other).rc == 0);
  REQUIRE(c.wait_state(other, "CANCELLED", 20));

  CHECK(sh(sc + "resume " + id).rc == 0);
  CHECK(c.wait_state(id, "RUNNING", 10));
  CHECK(wait_until([&] { return proc_state(batch_pid) != 'T' && proc_state(step_pid) != 'T'; }, 10));
  CHECK(sh(sc + "show job " + id).out.find("JobState=RUNNING") != std::string::npos);

  // Held while it runs, as Slurm's: it runs on (exit 0), and release takes the hold back.
  CHECK(sh(sc + "hold " + id).rc == 0);
  CHECK(c.state(id) == "RUNNING");
  CHECK(sh(sc + "release " + id).rc == 0);

  // Cancelled while suspended: it is continued to take its SIGTERM, and ends.
  CHECK(sh(sc + "suspend " + id).rc == 0);
  REQUIRE(wait_until([&] { return proc_state(batch_pid) == 'T'; }, 10));
  CHECK(c.hq("cancel " + id).rc == 0);
  CHECK(c.wait_state(id, "CANCELLED", 20));

  auto unknown = sh(sc + "suspend 99999");
  CHECK(unknown.rc == 1);
  CHECK(unknown.out == "Unexpected message received for job 99999\n");
  auto none = sh(sc + "suspend");
  CHECK(none.rc == 1);
  CHECK(none.out == "too few arguments for keyword:suspend\n");
}

TEST_CASE("e2e: scontrol suspend and resume are for operators - the owner is refused with Slurm's words") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto sub = as_user(65534, shared, "submit --parsable --wrap 'sleep 300'");
  REQUIRE(sub.rc == 0);
  std::string id = first_line(sub.out);
  REQUIRE(c.wait_state(id, "RUNNING", 20));
  auto r = as_nobody(c, c.dir() + "/bin/scontrol suspend " + id);
  CHECK(r.rc == 1);
  CHECK(r.out == "Access/permission denied for job " + id + "\n");
  CHECK(c.state(id) == "RUNNING");
  CHECK(c.hq("cancel " + id).rc == 0);
}

TEST_CASE("e2e: scontrol notify writes slurmstepd's line into the job's stderr - pending and unknown jobs refused") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string id = c.submit("-o out-%j.txt --wrap 'echo started; sleep 300'");
  REQUIRE(c.wait_state(id, "RUNNING", 20));
  std::string out = c.dir() + "/out-" + id + ".txt";
  REQUIRE(wait_until([&] { return slurp(out) == "started\n"; }, 10));
  std::string sc = "cd " + c.dir() + " && " + c.dir() + "/bin/scontrol ";
  CHECK(sh(sc + "notify " + id + " hello there").rc == 0);
  CHECK(wait_until([&] { return slurp(out) == "started\nslurmstepd-e1: error: hello there\n"; }, 10));

  std::string held = c.submit("-H --wrap true");
  auto pending = sh(sc + "notify " + held + " hi");
  CHECK(pending.rc == 1);
  CHECK(pending.out == "job notify failure: Requested operation is presently disabled\n");
  auto unknown = sh(sc + "notify 99999 hi");
  CHECK(unknown.rc == 1);
  CHECK(unknown.out == "job notify failure: Invalid job id specified\n");
  auto bare = sh(sc + "notify " + id);
  CHECK(bare.rc == 1);
  CHECK(bare.out == "too few arguments for keyword:notify\n");
  CHECK(c.hq("cancel " + id + " " + held).rc == 0);
}

TEST_CASE("e2e: --mem=0 takes all of a node's memory - a job asking for memory waits, one asking none shares its CPUs") {
  LocalCluster c(1, 4);
  REQUIRE(c.ready());
  std::string whole = c.submit("-n1 --mem=0 --wrap 'sleep 300'");
  REQUIRE(c.wait_state(whole, "RUNNING", 20));
  CHECK(c.hq("show job " + whole).out.find("mem=4G") != std::string::npos);
  std::string needs = c.submit("-n1 --mem=100M --wrap true");
  REQUIRE(c.wait_considered(needs, 20));
  CHECK(c.state(needs) == "PENDING");
  CHECK(c.reason(needs) == "Resources");
  std::string none = c.submit("-n1 --wrap true");
  CHECK(c.wait_state(none, "COMPLETED", 20));
  std::string second = c.submit("-n1 --mem=0 --wrap true");  // the memory is in use: it waits
  REQUIRE(c.wait_considered(second, 20));
  CHECK(c.state(second) == "PENDING");
  CHECK(c.hq("cancel " + whole).rc == 0);
  CHECK(c.wait_state(needs, "COMPLETED", 20));
  CHECK(c.wait_state(second, "COMPLETED", 20));
}
