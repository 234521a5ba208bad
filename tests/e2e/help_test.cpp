// Every subcommand, and every Slurm name hq answers to, answers -h/--help: it prints its
// usage on stdout, exits 0, and does nothing else (no file written, no process left behind:
// no cluster started, no benchmark run), wherever it is run.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

constexpr const char* kMarkName = "HQ_HELP_TEST_MARK";

// The processes whose environment holds kMarkName=`mark`: what a command started with that
// entry in its environment left running (children inherit it). One pass over /proc.
std::vector<pid_t> marked_processes(const std::string& mark) {
  std::vector<pid_t> out;
  std::string entry = std::string(kMarkName) + "=" + mark;
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = d.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream env(d.path() / "environ", std::ios::binary);
    for (std::string e; std::getline(env, e, '\0');)
      if (e == entry) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

// Runs `command` (a shell line) marked, in `dir`, its output into a file outside `dir` (so a
// process left behind holding it cannot hold this test up); returns its exit code and output,
// and in `left` the marked processes still there once it has exited, which it then kills.
CmdResult run_marked(const std::string& dir, const std::string& command, std::vector<pid_t>& left) {
  TempDir out_dir;
  std::string out = out_dir.path() + "/out";
  auto r = sh("(cd " + dir + " && env " + kMarkName + "=" + dir + " " + command + " </dev/null >" + out + " 2>&1)");
  r.out = slurp(out);
  left = marked_processes(dir);
  for (pid_t pid : left) kill(pid, SIGKILL);
  return r;
}

}  // namespace

TEST_CASE("e2e: the check for processes left behind sees one") {
  TempDir dir;
  std::vector<pid_t> left;
  auto r = run_marked(dir.path(), "sh -c 'sleep 30 & echo started'", left);
  CHECK(r.out == "started\n");
  // The sleep, found and killed. A child caught inside its exec shows no environment for
  // that moment: look again until it is found (bounded).
  CHECK(wait_until([&] {
    if (left.empty())
      for (pid_t pid : marked_processes(dir.path())) left.push_back(pid), kill(pid, SIGKILL);
    return !left.empty();
  }, 5));
  CHECK(left.size() == 1);
}

TEST_CASE("e2e: every subcommand's --help and -h print usage, exit 0 and touch nothing") {
  const char* commands[] = {"controller", "node",    "accounting", "submit",  "queue",       "cancel",  "nodes",   "show",
                            "local",      "init",    "hostlist", "keygen",     "bench",   "install-links",
                            "hold",       "uhold",   "release", "requeue",     "requeuehold", "explain", "sim",
                            "config",     "control", "sbatch",  "squeue",      "scancel", "sinfo",   "scontrol",
                            "run",        "srun",    "alloc",   "salloc",      "bench steps", "bench accounting", "local start",
                            "acct",       "sacct",   "acctmgr", "sacctmgr", "share", "sshare", "prio", "sprio",
                            "report",     "sreport"};
  // squeue's, sinfo's, sshare's and sprio's -h is --noheader, as in Slurm: only --help there.
  auto noheader = [](const std::string& c) {
    return c == "queue" || c == "squeue" || c == "nodes" || c == "sinfo" || c == "share" || c == "sshare" || c == "prio" ||
           c == "sprio";
  };
  for (const char* cmd : commands)
    for (const char* flag : {"--help", "-h"}) {
      if (noheader(cmd) && std::string(flag) == "-h") continue;
      TempDir dir;
      std::vector<pid_t> left;
      // No SLURM_JOB_ID: srun and salloc would otherwise act inside a job. stdout only.
      auto r = run_marked(dir.path(), "env -u SLURM_JOB_ID HOME=" + dir.path() + " HQ_HOME=" + dir.path() +
                                          " timeout 20 " + HQ_BINARY + " " + cmd + " " + flag + " 2>/dev/null", left);
      std::string what = std::string("hq ") + cmd + " " + flag + ": rc " + std::to_string(r.rc) + "\n" + r.out;
      INFO(what);
      CHECK(r.rc == 0);
      CHECK(r.out.find("sage") != std::string::npos);  // "usage" or "Usage"
      CHECK(r.out.find("sage: [") == std::string::npos);  // the usage line names the command
      CHECK(std::filesystem::is_empty(dir.path()));
      CHECK(left.empty());
    }
}

TEST_CASE("e2e: install-links keeps a file that is not a link to hq (Slurm's own sbatch) unless --force") {
  TempDir dir;
  std::string bin = dir.path() + "/bin";
  std::filesystem::create_directories(bin);
  std::ofstream(bin + "/sbatch") << "#!/bin/sh\necho real slurm\n";
  auto kept = sh(std::string(HQ_BINARY) + " install-links " + bin);
  INFO(kept.out);
  CHECK(kept.rc == 1);
  CHECK(kept.out.find(bin + "/sbatch exists and is not a link to hq") != std::string::npos);
  CHECK(slurp(bin + "/sbatch") == "#!/bin/sh\necho real slurm\n");
  CHECK_FALSE(std::filesystem::exists(bin + "/squeue"));  // all or nothing
  CHECK(sh(std::string(HQ_BINARY) + " install-links --force " + bin).rc == 0);
  CHECK(std::filesystem::is_symlink(bin + "/sbatch"));
  CHECK(sh(std::string(HQ_BINARY) + " install-links " + bin).rc == 0);  // links to hq are replaced freely
}

TEST_CASE("e2e: install-links run again replaces each link at once - a script running srun meanwhile never finds none") {
  TempDir dir;
  std::string bin = dir.path() + "/bin";
  REQUIRE(sh(std::string(HQ_BINARY) + " install-links " + bin).rc == 0);
  // A shell that found no srun there would take the next one on PATH (Slurm's own, where
  // installed) and keep it for the rest of the script.
  std::atomic<bool> done{false};
  std::atomic<long> looks{0}, missing{0};
  std::thread watcher([&] {
    struct stat st{};
    while (!done) {
      ++looks;
      if (::lstat((bin + "/srun").c_str(), &st) != 0) ++missing;
    }
  });
  auto runs = sh("for i in $(seq 100); do " + std::string(HQ_BINARY) + " install-links " + bin + " >/dev/null || exit 1; done");
  done = true;
  watcher.join();
  CHECK(runs.rc == 0);
  CHECK(looks.load() > 0);
  CHECK(missing.load() == 0);
  CHECK(std::filesystem::read_symlink(bin + "/srun").filename() == "hq");
  for (const auto& e : std::filesystem::directory_iterator(bin)) CHECK(e.path().filename().string()[0] != '.');  // no temp link left
}

TEST_CASE("e2e: the personas' --usage is Slurm 22.05's brief usage, and -V/--version and a --help after other options answer too") {
  for (const char* cmd : {"sbatch", "srun", "salloc", "squeue", "sinfo", "scancel"}) {
    TempDir dir;
    std::string link = dir.path() + "/" + cmd;
    std::filesystem::create_symlink(HQ_BINARY, link);
    auto usage = sh("(cd " + dir.path() + " && env -u SLURM_JOB_ID HOME=" + dir.path() + " HQ_HOME=" + dir.path() + " " +
                    link + " --usage </dev/null 2>&1)");
    std::string what = std::string(cmd) + " --usage: rc " + std::to_string(usage.rc) + "\n" + usage.out;
    INFO(what);
    CHECK(usage.rc == 0);
    CHECK(usage.out == slurp(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/usage/" + cmd + ".txt"));
    for (const char* flag : {"-V", "--version"}) {
      auto version = sh("(cd " + dir.path() + " && env -u SLURM_JOB_ID " + link + " " + flag + " </dev/null 2>&1)");
      CHECK(version.rc == 0);
      CHECK(version.out.rfind("slurm 22.05", 0) == 0);
    }
  }
  TempDir dir;
  std::string sbatch = dir.path() + "/sbatch", srun = dir.path() + "/srun";
  std::filesystem::create_symlink(HQ_BINARY, sbatch);
  std::filesystem::create_symlink(HQ_BINARY, srun);
  auto late = sh("(cd " + dir.path() + " && " + sbatch + " -J x -t 5 --help </dev/null 2>&1)");
  CHECK(late.rc == 0);
  CHECK(late.out.find("sage") != std::string::npos);
  // After the script or program, the words are its own: not answered (no controller here: fails).
  auto theirs = sh("(cd " + dir.path() + " && env -u SLURM_JOB_ID HQ_CONTROLLER=127.0.0.1:1 timeout 20 " + srun +
                   " -n 1 myprog --version </dev/null 2>&1)");
  CHECK(theirs.out.find("slurm 22.05") == std::string::npos);
  auto unknown_first = sh("(cd " + dir.path() + " && " + sbatch + " --bogus --help </dev/null 2>&1)");
  CHECK(unknown_first.rc == 255);  // getopt meets --bogus first, as Slurm's sbatch
  CHECK(unknown_first.out == "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n");
  // srun and salloc as Slurm 22.05's (captured on the slurm-bench): getopt's line, the hint, exit 255.
  std::string salloc = dir.path() + "/salloc";
  std::filesystem::create_symlink(HQ_BINARY, salloc);
  for (const std::string& prog : {std::string("srun"), std::string("salloc")}) {
    auto bad = sh("(cd " + dir.path() + " && ./" + prog + " --bogus-x true </dev/null 2>&1)");
    CHECK(bad.rc == 255);
    CHECK(bad.out == prog + ": unrecognized option '--bogus-x'\nTry \"" + prog + " --help\" for more information\n");
    auto short_bad = sh("(cd " + dir.path() + " && ./" + prog + " -y true </dev/null 2>&1)");
    CHECK(short_bad.rc == 255);
    CHECK(short_bad.out == prog + ": invalid option -- 'y'\nTry \"" + prog + " --help\" for more information\n");
  }
}

TEST_CASE("e2e: an unknown option of any hq command is one line and a hint, exit 1, and creates nothing") {
  const char* commands[] = {"controller", "node",  "accounting", "submit",  "queue", "cancel",  "nodes",   "show",    "local",
                            "local start", "init", "hostlist", "keygen", "bench", "bench sched", "install-links",
                            "hold",       "release", "requeue", "explain", "sim", "config",  "control", "acct",
                            "acctmgr",    "share", "prio",    "run",   "alloc"};
  for (const char* cmd : commands) {
    TempDir dir;
    std::vector<pid_t> left;
    auto r = run_marked(dir.path(), "env -u SLURM_JOB_ID HOME=" + dir.path() + " HQ_HOME=" + dir.path() +
                                        " timeout 20 " + HQ_BINARY + " " + cmd + " --bogus-option", left);
    std::string what = "hq " + std::string(cmd) + " --bogus-option: rc " + std::to_string(r.rc) + "\n" + r.out;
    INFO(what);
    CHECK((r.rc == 1 || (r.rc == 255 && std::string(cmd) == "submit")));
    CHECK(r.out.find("--bogus-option") != std::string::npos);
    CHECK(std::filesystem::is_empty(dir.path()));
    CHECK(left.empty());
  }
}
