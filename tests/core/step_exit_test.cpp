// srun's task-end lines and exit code, and slurmstepd's line prefix (core/step_exit), as in Slurm 22.05's goldens
// (tests/fixtures/slurm/steps-inside-allocation.golden).
#include <doctest/doctest.h>

#include <csignal>

#include "core/step_exit.hpp"

using namespace hq;

namespace {
int exited(int code) { return (code & 0xff) << 8; }
int killed(int sig, bool core = false) { return sig | (core ? 0x80 : 0); }
}  // namespace

TEST_CASE("step exit: one line per node and status, with task ranges and Slurm's words") {
  CHECK(task_end_message({"n3", {2}, exited(2)}) == "n3: task 2: Exited with exit code 2");
  CHECK(task_end_message({"n3", {5, 4}, exited(2)}) == "n3: tasks 4-5: Exited with exit code 2");
  CHECK(task_end_message({"n1", {0}, killed(SIGKILL)}) == "n1: task 0: Killed");
  CHECK(task_end_message({"n1", {0}, killed(SIGSEGV, true)}) == "n1: task 0: Segmentation fault (core dumped)");
  CHECK(task_end_message({"n2", {1}, exited(0), true}) == "n2: task 1: Out Of Memory");
  CHECK(task_end_message({"n1", {0, 1}, exited(0)}).empty());
  CHECK(task_ranges({0, 1, 3, 5, 6, 7, 3}) == "0-1,3,5-7");
}

TEST_CASE("step exit: a signal beats any exit code - the highest wins - OOM makes 1") {
  StepExitCode codes;
  codes.add({"n1", {0}, exited(0)});
  codes.add({"n2", {1}, exited(1)});
  codes.add({"n3", {2}, exited(2)});
  CHECK(codes.code() == 2);
  codes.add({"n1", {3}, exited(200)});
  CHECK(codes.code() == 200);
  codes.add({"n1", {4}, killed(SIGKILL)});
  CHECK(codes.code() == 137);
  codes.add({"n1", {5}, killed(SIGTERM)});  // the highest signal number, not the latest
  CHECK(codes.code() == 143);
  codes.add({"n1", {6}, killed(SIGINT)});
  CHECK(codes.code() == 143);
  codes.add({"n2", {7}, exited(0), true});
  CHECK(codes.code() == 1);
  CHECK(StepExitCode().code() == 0);
}

TEST_CASE("step exit: slurmstepd's own lines begin with its name on the node, as in the golden") {
  // steps-inside-allocation.golden: "slurmstepd-n3: error: execve(): nosuchcmd: No such file or directory"
  CHECK(stepd_error_prefix("n3") + "execve(): nosuchcmd: No such file or directory" ==
        "slurmstepd-n3: error: execve(): nosuchcmd: No such file or directory");
}
