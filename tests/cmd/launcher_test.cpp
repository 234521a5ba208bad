// launch_batch (cmd/agent/launcher): the job's script starts only after the agent has
// recorded the launch, so an agent killed between fork and record leaves no job running
// that a restarted agent could not find (the controller runs it again elsewhere).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <thread>
#include <fstream>
#include <cstddef>
#include <linux/filter.h>
#include <linux/kcmp.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fcntl.h>
#include <sys/inotify.h>
#include "../cgroup2_mount.hpp"
#include "../forked_child.hpp"
#include "../skip.hpp"
#include "../temp_dir.hpp"
#include "cmd/agent/launcher.hpp"
#include "cmd/agent/vfork_into.hpp"
#include "cmd/paths.hpp"
#include "core/units.hpp"

using namespace hq;
using namespace hq::cmd;

namespace {

// A job whose script writes its pid to `marker` (as this process's user); `share`: its
// shim shares this process's memory (cmd/agent/shim_memory.hpp) instead of a fork.
BatchLaunch launch_touching(const std::string& spool, const std::string& marker, bool share = false) {
  BatchLaunch l;
  l.share_agent_memory = share;
  l.job.id = JobId{7};
  l.job.spec.script = std::string("#!/bin/sh\necho $$ > '" + marker + "'\n");
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
  bool share = false;
  SUBCASE("a forked shim") { share = false; }
  SUBCASE("a shim sharing the agent's memory") { share = true; }
  test::TempDir dir;
  std::string marker = dir.path() + "/ran";
  bool ran_before_record = true;
  LaunchedJob seen;
  auto launched = launch_batch(launch_touching(dir.path(), marker, share), [&](const LaunchedJob& pids) {
    seen.shim = pids.shim;
    seen.script = pids.script;
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
  CHECK(trim(read_small_file(marker)) == std::to_string(seen.script));  // the pid recorded is the script's
  CHECK(trim(read_small_file(exit_file(dir.path(), 7))) == "0");
  CHECK(launched->shared_memory == share);
  launched->area.free_after_reap();
}

TEST_CASE("launcher: a launch whose record fails never starts its script and leaves no pid record") {
  bool share = false;
  SUBCASE("a forked shim") { share = false; }
  SUBCASE("a shim sharing the agent's memory") { share = true; }
  test::TempDir dir;
  std::string marker = dir.path() + "/ran";
  std::string pids = pids_file(dir.path(), 7);
  auto launched = launch_batch(launch_touching(dir.path(), marker, share), [&](const LaunchedJob&) {
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

TEST_CASE("launcher: the agent's line goes only into a regular file the job's user owns - never through a link, a FIFO or a device") {
  hq::test::TempDir dir;
  std::string file = dir.path() + "/job.err";
  std::ofstream(file) << "started\n";
  CHECK(append_job_line(file, getuid(), "*** JOB 1 ***\n"));
  CHECK(read_small_file(file) == "started\n*** JOB 1 ***\n");
  CHECK_FALSE(append_job_line(file, getuid() + 1, "other's\n"));  // not the job's user's
  std::string link = dir.path() + "/link.err";
  std::filesystem::create_symlink(file, link);
  CHECK_FALSE(append_job_line(link, getuid(), "through a link\n"));
  std::string fifo = dir.path() + "/fifo.err";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(append_job_line(fifo, getuid(), "into a FIFO\n"));  // returns at once: nothing opened
  CHECK_FALSE(append_job_line("/dev/null", 0, "into a device\n"));
  CHECK_FALSE(append_job_line(dir.path() + "/missing.err", getuid(), "nowhere\n"));
  CHECK(read_small_file(file) == "started\n*** JOB 1 ***\n");
}

// The agent forks its shim without its heap (cmd/agent/fork_memory); an agent with a second
// thread and a log file open (a FILE in its heap, which glibc's fork() walks in the child)
// must still start jobs. With fork() instead of _Fork() the shim died of SIGSEGV here.
TEST_CASE("launcher: a threaded agent with a FILE open in its heap still starts the job") {
  test::TempDir dir;
  std::thread([] {}).join();  // glibc now takes the process as multi-threaded for good
  FILE* log = std::fopen((dir.path() + "/agent.log").c_str(), "w");  // malloc'd, on the main heap
  REQUIRE(log != nullptr);
  std::fputs("open\n", log);
  std::string marker = dir.path() + "/ran";
  bool share = false;
  SUBCASE("a forked shim") { share = false; }
  SUBCASE("a shim sharing the agent's memory") { share = true; }
  auto launched = launch_batch(launch_touching(dir.path(), marker, share), [](const LaunchedJob&) { return Status::ok(); });
  std::fclose(log);
  REQUIRE_MESSAGE(launched.is_ok(), launched.status().message());
  int status = 0;
  REQUIRE(waitpid(launched->shim, &status, 0) == launched->shim);
  CHECK_FALSE(WIFSIGNALED(status));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(exists(marker));
}

namespace {
// Makes clone3 fail with ENOSYS in this process and its children (a seccomp filter, as an
// older kernel or a container's profile would); false when it could not be installed.
bool refuse_clone3() {
#if defined(__x86_64__)
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 435 /* clone3 */, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0;
#else
  return false;
#endif
}
}  // namespace

// Where clone3 is refused, the shim starts the script with a plain fork, and the launch
// keeps its order: pid reported, recorded, then the script runs.
// A shim that would share the agent's memory is forked instead there.
TEST_CASE("launcher: without clone3 (a seccomp filter refuses it) the job still starts, after its record") {
  bool share = false;
  SUBCASE("a forked shim") { share = false; }
  SUBCASE("a shim sharing the agent's memory") { share = true; }
  test::TempDir dir;
  std::string marker = dir.path() + "/ran";
  int code = test::exit_code_in_child([&] {
    if (!refuse_clone3()) return 3;
    bool ran_before_record = true;
    pid_t recorded = 0;
    auto launched = launch_batch(launch_touching(dir.path(), marker, share), [&](const LaunchedJob& pids) {
      recorded = pids.script;
      ran_before_record = exists(marker);
      return Status::ok();
    });
    if (!launched.is_ok()) return 4;
    int status = 0;
    if (waitpid(launched->shim, &status, 0) != launched->shim || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 5;
    if (ran_before_record) return 6;
    if (launched->shared_memory) return 8;  // refused: forked
    return trim(read_small_file(marker)) == std::to_string(recorded) ? 0 : 7;
  });
  if (code == 3) HQ_SKIP("no seccomp filter could be installed here");
  CHECK(code == 0);
}

namespace {
// Whether processes `a` and `b` share their memory: kcmp's answer, or -1 where it cannot
// tell (a kernel without it, no right to look).
int same_memory(pid_t a, pid_t b) {
  long r = syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0);
  return r < 0 ? -1 : r == 0 ? 1 : 0;
}
}  // namespace

// The shim shares the agent's memory only when asked to (where the job's cgroup measures
// its memory): kcmp says whether two processes have one memory.
TEST_CASE("launcher: a shim asked to share the agent's memory does, and else is a fork") {
  for (bool share : {false, true}) {
    CAPTURE(share);
    test::TempDir dir;
    std::string marker = dir.path() + "/ran";
    int shared = -2;
    auto launched = launch_batch(launch_touching(dir.path(), marker, share), [&](const LaunchedJob& pids) {
      shared = same_memory(getpid(), pids.shim);  // the shim waits for our go meanwhile
      return Status::ok();
    });
    REQUIRE(launched.is_ok());
    int status = 0;
    REQUIRE(waitpid(launched->shim, &status, 0) == launched->shim);
    if (shared == -1) HQ_SKIP("kcmp cannot compare processes here");
    CHECK(shared == (share ? 1 : 0));
    size_t pooled = ShimArea::pooled();
    launched->area.free_after_reap();
    CHECK(ShimArea::pooled() == std::min<size_t>(pooled + 1, 64));  // the next shim's
    CHECK(WIFEXITED(status));
  }
}

// A forked shim joins the job's cgroup itself (so it leaves the agent's, as a v2 unit or
// systemd want); a shim sharing the agent's memory stays out and the script's process
// joins. Stand-in "cgroup.procs" files record the pid that joined.
TEST_CASE("launcher: the shim joins the job's cgroup when forked, the script's process when the shim shares memory") {
  for (bool share : {false, true}) {
    CAPTURE(share);
    test::TempDir dir;
    std::string procs = dir.path() + "/cgroup.procs";
    std::ofstream(procs).flush();
    BatchLaunch l = launch_touching(dir.path(), dir.path() + "/ran", share);
    l.cgroup_procs = {procs};
    auto launched = launch_batch(l, [](const LaunchedJob&) { return Status::ok(); });
    REQUIRE_MESSAGE(launched.is_ok(), launched.status().message());
    int status = 0;
    REQUIRE(waitpid(launched->shim, &status, 0) == launched->shim);
    CHECK(launched->shared_memory == share);
    pid_t joined = share ? launched->script : launched->shim;
    CHECK(trim(read_small_file(procs)) == std::to_string(joined));
    launched->area.free_after_reap();
  }
}

// On cgroup v2 a forked shim is started inside the job's group (clone3's CLONE_INTO_CGROUP)
// instead of moving itself there: a write to cgroup.procs takes the kernel's threadgroup
// lock for writing. inotify sees any open or write of the group's cgroup.procs.
TEST_CASE("launcher: on cgroup v2 a forked shim is born in the job's group and opens nothing to join it (the real kernel)") {
  test::TempDir dir;
  test::Cgroup2Mount cgroup2(dir.path());
  if (cgroup2.path().empty()) HQ_SKIP(cgroup2.why_not());
  std::string name = "hq_launcher_test_" + std::to_string(getpid());
  std::string group = cgroup2.path() + "/" + name;
  REQUIRE(mkdir(group.c_str(), 0755) == 0);
  {  // where the kernel refuses clone3 or the flag, the shim forks and joins: nothing to see
    int dir_fd = open(group.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    pid_t probe = hq::cmd::fork_into_cgroup(dir_fd, [](void*) { _exit(0); }, nullptr);
    close(dir_fd);
    if (probe > 0) waitpid(probe, nullptr, 0);
    if (probe < 0) rmdir(group.c_str());
    if (cmd::clone3_refused(probe))
      HQ_SKIP("clone3 or CLONE_INTO_CGROUP is refused here");
    REQUIRE(probe > 0);
  }
  int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  REQUIRE(watch >= 0);
  REQUIRE(inotify_add_watch(watch, (group + "/cgroup.procs").c_str(), IN_OPEN | IN_MODIFY) >= 0);
  std::string marker = dir.path() + "/ran";
  BatchLaunch l = launch_touching(dir.path(), marker, false);
  l.cgroup_procs = {group + "/cgroup.procs"};
  std::string shim_group;
  auto launched = launch_batch(l, [&](const LaunchedJob& pids) {
    shim_group = read_small_file("/proc/" + std::to_string(pids.shim) + "/cgroup");
    return Status::ok();
  });
  REQUIRE_MESSAGE(launched.is_ok(), launched.status().message());
  int status = 0;
  REQUIRE(waitpid(launched->shim, &status, 0) == launched->shim);
  CHECK(WIFEXITED(status));
  CHECK_FALSE(launched->shared_memory);
  CHECK(shim_group.find("0::/" + name + "\n") != std::string::npos);
  CHECK(exists(marker));  // the script ran
  char events[4096];
  ssize_t n = read(watch, events, sizeof events);
  CHECK(n < 0);  // nothing opened the group's cgroup.procs: no event to read
  close(watch);
  launched->area.free_after_reap();
  CHECK(rmdir(group.c_str()) == 0);
}
