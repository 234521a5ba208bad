// End to end, through the Slurm personas: job arrays as Slurm users meet them. Each task's
// SLURM_ARRAY_* variables, %A/%a in paths and the default slurm-%A_%a.out, squeue's one
// line for an array's waiting tasks ("12_[2,5,8%1]") and -r's line per task, scancel of a
// task range, and scontrol show job of one task.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {
// squeue's lines (no header), each its first word: the job ids shown.
std::vector<std::string> ids_shown(const std::string& out) {
  std::vector<std::string> ids;
  std::istringstream in(out);
  for (std::string line, first; std::getline(in, line);)
    if (std::istringstream(line) >> first) ids.push_back(first);
  return ids;
}
}  // namespace

TEST_CASE("e2e: array tasks get Slurm's SLURM_ARRAY_* variables and %A/%a in their paths") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string sbatch = "cd " + c.dir() + " && " + c.dir() + "/bin/sbatch --parsable ";
  auto r = sh(sbatch + "-a 1,3,8 -o 'env-%A_%a.txt' --wrap 'env | grep ^SLURM_ARRAY_ | sort'");
  REQUIRE(r.rc == 0);
  std::string arr = r.out.substr(0, r.out.find('\n'));
  auto stepped = sh(sbatch + "-a 0-10:5 --wrap 'echo $SLURM_ARRAY_TASK_STEP'");
  REQUIRE(stepped.rc == 0);
  std::string st = stepped.out.substr(0, stepped.out.find('\n'));
  for (const char* t : {"1", "3", "8"}) REQUIRE(c.wait_state(arr + "_" + t, "COMPLETED", 30));
  for (const char* t : {"0", "5", "10"}) REQUIRE(c.wait_state(st + "_" + t, "COMPLETED", 30));
  for (const char* t : {"1", "3", "8"}) {
    INFO("task " << t);
    CHECK(slurp(c.dir() + "/env-" + arr + "_" + t + ".txt") ==
          "SLURM_ARRAY_JOB_ID=" + arr + "\nSLURM_ARRAY_TASK_COUNT=3\nSLURM_ARRAY_TASK_ID=" + t +
              "\nSLURM_ARRAY_TASK_MAX=8\nSLURM_ARRAY_TASK_MIN=1\nSLURM_ARRAY_TASK_STEP=1\n");
  }
  for (const char* t : {"0", "5", "10"}) CHECK(slurp(c.dir() + "/slurm-" + st + "_" + t + ".out") == "5\n");
  auto shown = c.hq("show job " + st + "_5").out;  // one task: its own record only
  CHECK(shown.find(" ArrayJobId=" + st + " ArrayTaskId=5 ") != std::string::npos);
  CHECK(shown.find("ArrayTaskId=0") == std::string::npos);
  CHECK(shown.find("   StdOut=" + c.dir() + "/slurm-" + st + "_5.out\n") != std::string::npos);
}

TEST_CASE("e2e: squeue shows an array's waiting tasks as one line, -r one per task - scancel takes 12_[a-b]") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = "cd " + c.dir() + " && " + c.dir() + "/bin/";
  auto r = sh(bin + "sbatch --parsable -H -a 2-9:3%1 --wrap true");
  REQUIRE(r.rc == 0);
  std::string arr = r.out.substr(0, r.out.find('\n'));
  REQUIRE(c.wait_considered(arr, 10));
  auto one = sh(bin + "squeue -h");
  CHECK(ids_shown(one.out) == std::vector<std::string>{arr + "_[2,5,8%1]"});
  CHECK(one.out.find("(JobHeldUser)") != std::string::npos);
  auto each = sh(bin + "squeue -h -r");
  CHECK(ids_shown(each.out) == std::vector<std::string>{arr + "_2", arr + "_5", arr + "_8"});
  CHECK(sh(bin + "squeue -h -o '%K' -j " + arr).out == "2,5,8%1\n");
  // An even step over a span of more than 10 with more than 5 tasks: Slurm 22.05's step form.
  auto stepped = sh(bin + "sbatch --parsable -H -a 0-30:3%4 --wrap true");
  REQUIRE(stepped.rc == 0);
  std::string st = stepped.out.substr(0, stepped.out.find('\n'));
  REQUIRE(c.wait_considered(st, 10));
  CHECK(sh(bin + "squeue -h -o '%i %K' -j " + st).out == st + "_[0-30:3%4] 0-30:3%4\n");
  auto shown = sh(bin + "scontrol show job " + st).out;  // one record for the pending tasks, as Slurm's
  INFO(shown);
  CHECK(shown.find("JobId=" + st + " ArrayJobId=" + st + " ArrayTaskId=0-30:3%4 ArrayTaskThrottle=4 ") == 0);
  CHECK(shown.find("ArrayTaskId=3 ") == std::string::npos);
  REQUIRE(sh(bin + "scancel " + st).rc == 0);
  // A task updated on its own gets a line of its own (its limit and comment differ).
  REQUIRE(sh(bin + "scontrol update JobId=" + arr + "_5 TimeLimit=5 Comment=five").rc == 0);
  auto split = sh(bin + "squeue -h -o '%i %l %k' -j " + arr);
  CHECK(split.out.find(arr + "_[2,8%1] ") != std::string::npos);
  CHECK(split.out.find(arr + "_5 5:00 five\n") != std::string::npos);

  CHECK(sh(bin + "scancel '" + arr + "_[2,5]'").rc == 0);
  CHECK(ids_shown(sh(bin + "squeue -h").out) == std::vector<std::string>{arr + "_8"});
  CHECK(c.state(arr + "_2") == "CANCELLED");
  auto bad = sh(bin + "scancel '" + arr + "_[x]'");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("Invalid job id") != std::string::npos);
  CHECK(sh(bin + "scancel " + arr + "_8").rc == 0);
}

namespace {
// What squeue -v prints after its options and its "last_update_time=... records=N" line:
// the listing, made by the client from the records (squeue -v counts them, so it never
// asks the controller for the text).
std::string listing_after_verbose(const std::string& out) {
  size_t at = out.find("\nlast_update_time=");
  if (at == std::string::npos) return "(no records line)";
  size_t end = out.find('\n', at + 1);
  return end == std::string::npos ? "" : out.substr(end + 1);
}
}  // namespace

TEST_CASE("e2e: squeue's text made by the controller is what the client makes of the records") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = "cd " + c.dir() + " && " + c.dir() + "/bin/";
  std::vector<std::string> ids;
  for (const char* args : {"-H -J plain", "-H -a 1-7%2 -J arr", "-H -J other -t 5", "-H -a 3-4 -J two"}) {
    auto r = sh(bin + "sbatch --parsable " + std::string(args) + " --wrap true");
    REQUIRE(r.rc == 0);
    ids.push_back(r.out.substr(0, r.out.find('\n')));
  }
  REQUIRE(c.wait_considered(ids.back(), 10));
  REQUIRE(sh(bin + "scontrol update JobId=" + ids[1] + "_4 TimeLimit=9").rc == 0);  // a row of its own
  for (const char* args : {"", "-h", "-r", "-S V,i", "-S -i", "-o '%i %K %j %l'", "-O JobID,Name,TimeLimit", "-t PD"}) {
    CAPTURE(args);
    auto made = sh(bin + "squeue " + std::string(args));
    auto counted = sh(bin + "squeue -v " + std::string(args));
    REQUIRE(made.rc == 0);
    REQUIRE(counted.rc == 0);
    CHECK(made.out == listing_after_verbose(counted.out));
    CHECK(made.out.find("arr") != std::string::npos);
  }
}
