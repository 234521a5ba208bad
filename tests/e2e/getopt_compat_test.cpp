// The personas read options as Slurm 22.05's getopt_long does: a long name abbreviated to
// a unique prefix, and glibc's words and Slurm's exit codes for what getopt refuses
// (tests/fixtures/slurm/getopt/cases.txt, captured from Slurm 22.05 by capture.sh there).
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

struct GetoptCase {
  std::string command, out;
  int rc = -1;
};

// "== COMMAND", the lines it printed, "rc=N": one case each.
std::vector<GetoptCase> golden_cases() {
  std::vector<GetoptCase> cases;
  std::istringstream in(slurp(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/getopt/cases.txt"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("== ", 0) == 0) cases.push_back({line.substr(3), "", -1});
    else if (line.rfind("rc=", 0) == 0 && !cases.empty()) cases.back().rc = std::stoi(line.substr(3));
    else if (!cases.empty()) cases.back().out += line + "\n";
  }
  return cases;
}

}  // namespace

TEST_CASE("e2e: getopt's refusals print Slurm 22.05's words and exit codes, for every persona") {
  TempDir dir;
  for (const char* cmd : {"sbatch", "squeue", "scancel", "srun", "salloc", "sacct", "sinfo"})
    std::filesystem::create_symlink(HQ_BINARY, dir.path() + "/" + cmd);
  auto cases = golden_cases();
  REQUIRE(cases.size() >= 40);
  for (const GetoptCase& c : cases) {
    // No controller: each answer comes from the command line alone, before any is asked.
    auto r = sh("(cd " + dir.path() + " && env -u SLURM_JOB_ID HOME=" + dir.path() +
                " HQ_CONTROLLER=127.0.0.1:1 timeout 20 ./" + c.command + " </dev/null)");
    INFO(c.command);
    CHECK(r.out == c.out);
    CHECK(r.rc == c.rc);
  }
  // -V in a bundle is answered as getopt meets it (Slurm prints "slurm-wlm 22.05.8"; hq its own line).
  for (const char* line : {"sbatch -HV", "srun -lV", "sacct -XV", "sacct -aV"}) {
    auto r = sh("(cd " + dir.path() + " && env -u SLURM_JOB_ID HOME=" + dir.path() +
                " HQ_CONTROLLER=127.0.0.1:1 timeout 20 ./" + line + " </dev/null)");
    INFO(line);
    CHECK(r.rc == 0);
    CHECK(r.out.rfind("slurm 22.05", 0) == 0);
  }
}

TEST_CASE("e2e: abbreviated long options work on the command line and in #SBATCH lines") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = in_bin(c);
  auto held = sh(bin + "sbatch --parsa --hol --job-n=abbr --wrap=true");
  REQUIRE(held.rc == 0);
  std::string id = held.out.substr(0, held.out.find_first_of(";\n"));
  std::ofstream(c.dir() + "/s.sh") << "#!/bin/sh\n#SBATCH --job-n=fromscript\n#SBATCH --ho\ntrue\n";
  auto script = sh(bin + "sbatch --parsa s.sh");
  REQUIRE(script.rc == 0);
  std::string id2 = script.out.substr(0, script.out.find_first_of(";\n"));
  auto listed = sh(bin + "squeue --noh --form=\"%i %j %T\" --jo=" + id + "," + id2);
  CHECK(listed.rc == 0);
  CHECK(listed.out == id + " abbr PENDING\n" + id2 + " fromscript PENDING\n");
  auto cancelled = sh(bin + "scancel --sta=PD --na=abbr");
  CHECK(cancelled.rc == 0);
  auto left = sh(bin + "squeue --noh --form=%j --stat=PD");
  CHECK(left.out == "fromscript\n");
  // Slurm's other spellings (squeue --users, --partitions are Slurm's names), srun's
  // options of its allocation, and one srun refuses.
  auto users = sh(bin + "squeue --noh --form=%j --users=$(id -un) --partitions=$(" + bin + "squeue --noh --form=%P --jo=" +
                  id2 + ") --stat=PD");
  CHECK(users.out == "fromscript\n");
  auto acct = sh(bin + "srun -A acct -n1 echo ran 2>&1");  // outside a job: the allocation's account
  CHECK(acct.rc == 0);
  CHECK(acct.out == "ran\n");
  auto pty = sh(bin + "srun --pty true 2>&1");
  CHECK(pty.rc == 1);
  CHECK(pty.out == "srun: error: --pty: a pseudo-terminal for the first task is not supported by hq yet\n");
  auto ambiguous = sh(bin + "sbatch --mem-p=1 --wrap=true");
  CHECK(ambiguous.rc == 255);
  CHECK(ambiguous.out ==
        "sbatch: option '--mem-p=1' is ambiguous; possibilities: '--mem-per-cpu' '--mem-per-gpu'\n"
        "Try \"sbatch --help\" for more information\n");
}
