// launch_batch (cmd/agent/launcher): the job's script starts only after the agent has
// recorded the launch, so an agent killed between fork and record leaves no job running
// that a restarted agent could not find (the controller runs it again elsewhere).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "../temp_dir.hpp"
#include "cmd/agent/launcher.hpp"
#include "cmd/paths.hpp"
#include "core/units.hpp"

using namespace hq;
using namespace hq::cmd;

namespace {

// A job whose script creates `marker` (as this process's user).
BatchLaunch launch_touching(const std::string& spool, const std::string& marker) {
  BatchLaunch l;
  l.job.id = JobId{7};
  l.job.spec.script = std::string("#!/bin/sh\n: > '" + marker + "'\n");
  l.job.spec.workdir = spool;
  l.job.spec.output = spool + "/out.txt";
  l.job.spec.uid = getuid();
  l.job.spec.gid = getgid();
  l.node_name = "n1";
  l.spool_dir = spool;
  return l;
}

bool exists(const std::string& path) { return std::filesystem::exists(path); }

}  // namespace

TEST_CASE("launcher: the script starts only after the launch is recorded, and runs once it is") {
  test::TempDir dir;
  std::string marker = dir.path() + "/ran";
  bool ran_before_record = true;
  LaunchedJob seen;
  auto launched = launch_batch(launch_touching(dir.path(), marker), [&](const LaunchedJob& pids) {
    seen = pids;
    ran_before_record = exists(marker);
    return Status::ok();
  });
  REQUIRE(launched.is_ok());
  CHECK(seen.shim == launched->shim);
  CHECK(seen.script == launched->script);
  CHECK(seen.script > 0);
  CHECK_FALSE(ran_before_record);
  int status = 0;
  REQUIRE(waitpid(launched->shim, &status, 0) == launched->shim);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(exists(marker));
  CHECK(trim(read_small_file(exit_file(dir.path(), 7))) == "0");
}

TEST_CASE("launcher: a launch whose record fails never starts its script and leaves no pid record") {
  test::TempDir dir;
  std::string marker = dir.path() + "/ran";
  std::string pids = pids_file(dir.path(), 7);
  auto launched = launch_batch(launch_touching(dir.path(), marker), [&](const LaunchedJob&) {
    std::ofstream(pids) << "shim=1 script=2 start=3\n";  // as if the agent died right after writing it
    return io_error("disk full");
  });
  REQUIRE_FALSE(launched.is_ok());
  CHECK(launched.status().message().find("disk full") != std::string::npos);
  // launch_batch has reaped the shim, which killed the script before its exec.
  CHECK_FALSE(exists(marker));
  CHECK_FALSE(exists(pids));
  CHECK(read_small_file(exit_file(dir.path(), 7)).empty());
}
