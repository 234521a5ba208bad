// vfork_into_cgroup: the clone3 child shares the caller's memory, the caller resumes only
// once the child has exited, and with a group the child is in that group from the start.
#include <cerrno>
#include <cstdint>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/agent/vfork_into.hpp"
#include "../cgroup2_mount.hpp"
#include "../skip.hpp"
#include "../temp_dir.hpp"

namespace {

struct VforkShared {
  int written = 0;
  char cgroup[512] = {};
};

// Runs in the child, on its own stack: system calls only.
void write_and_exit(void* arg) {
  auto* s = static_cast<VforkShared*>(arg);
  s->written = static_cast<int>(getpid());
  _exit(7);
}

void read_own_cgroup(void* arg) {
  auto* s = static_cast<VforkShared*>(arg);
  int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0) _exit(2);
  ssize_t n = read(fd, s->cgroup, sizeof s->cgroup - 1);
  _exit(n > 0 ? 0 : 3);
}

// A v2 group made for one test under `root` (the test removes it once empty), and its
// directory open for clone3 (fd -1 where either failed).
struct TestGroup {
  std::string name, path;
  int fd = -1;
  TestGroup(const std::string& root, const std::string& prefix)
      : name(prefix + std::to_string(getpid())), path(root + "/" + name) {
    if (mkdir(path.c_str(), 0755) == 0) fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
};

int exit_code_of(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("vfork_into_cgroup: the child shares memory, the caller waits for it, its exit code comes back") {
  VforkShared s;
  pid_t pid = hq::cmd::vfork_into_cgroup(-1, write_and_exit, &s);
  if (pid == -ENOSYS) HQ_SKIP("clone3 is not available on this kernel or processor");
  REQUIRE(pid > 0);
  CHECK(s.written == pid);  // written before the caller went on, into the caller's memory
  CHECK(exit_code_of(pid) == 7);
}

TEST_CASE("vfork_into_cgroup: a child started into a v2 group is in it from the start (the real kernel)") {
  hq::test::TempDir dir;
  hq::test::Cgroup2Mount cgroup2(dir.path());
  if (cgroup2.path().empty()) HQ_SKIP(cgroup2.why_not());
  TestGroup group(cgroup2.path(), "hq_vfork_into_test_");
  REQUIRE(group.fd >= 0);
  VforkShared s;
  pid_t pid = hq::cmd::vfork_into_cgroup(group.fd, read_own_cgroup, &s);
  close(group.fd);
  if (pid == -ENOSYS) {
    rmdir(group.path.c_str());
    HQ_SKIP("clone3 is not available on this kernel or processor");
  }
  REQUIRE(pid > 0);
  CHECK(exit_code_of(pid) == 0);
  std::string seen(s.cgroup);  // "0::/PATH" (and v1 lines on a hybrid host)
  CHECK(seen.find("0::/" + group.name + "\n") != std::string::npos);
  CHECK(rmdir(group.path.c_str()) == 0);
}

namespace {

struct ForkedReport {
  int pipe_write = -1;
  int written = 0;  // set by the child in its own copy: the caller's stays 0
};

// Whether this function's frame is on a 16-byte boundary, as the ABI wants of a call (the
// frame pointer, pushed at entry, lands on one only if the stack was aligned at the call).
__attribute__((noinline)) bool frame_aligned() {
  return (reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) & 15) == 0;
}

// Runs in the forked child, on its copy of the caller's stack: its group to the pipe (exit
// 4: called on a stack not aligned as a call wants).
void report_group(void* arg) {
  if (!frame_aligned()) _exit(4);
  auto* r = static_cast<ForkedReport*>(arg);
  r->written = 1;
  char text[512];
  int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read(fd, text, sizeof text) : -1;
  if (n <= 0 || write(r->pipe_write, text, static_cast<size_t>(n)) != n) _exit(3);
  _exit(0);
}

}  // namespace

TEST_CASE("fork_into_cgroup: a forked child is in a v2 group from the start, with memory of its own (the real kernel)") {
  hq::test::TempDir dir;
  hq::test::Cgroup2Mount cgroup2(dir.path());
  if (cgroup2.path().empty()) HQ_SKIP(cgroup2.why_not());
  TestGroup group(cgroup2.path(), "hq_fork_into_test_");
  REQUIRE(group.fd >= 0);
  int pipe_fds[2];
  REQUIRE(pipe2(pipe_fds, O_CLOEXEC) == 0);
  ForkedReport r;
  r.pipe_write = pipe_fds[1];
  pid_t pid = hq::cmd::fork_into_cgroup(group.fd, report_group, &r);
  close(group.fd);
  close(pipe_fds[1]);
  if (hq::cmd::clone3_refused(pid)) {
    close(pipe_fds[0]);
    rmdir(group.path.c_str());
    HQ_SKIP("clone3 or CLONE_INTO_CGROUP is not available on this kernel or processor");
  }
  REQUIRE(pid > 0);
  CHECK(exit_code_of(pid) == 0);
  char text[512] = {};
  ssize_t n = read(pipe_fds[0], text, sizeof text - 1);
  close(pipe_fds[0]);
  REQUIRE(n > 0);
  CHECK(std::string(text).find("0::/" + group.name + "\n") != std::string::npos);
  CHECK(r.written == 0);  // a fork's copy, not the caller's memory
  CHECK(rmdir(group.path.c_str()) == 0);
}

TEST_CASE("fork_into_cgroup: a directory that is no group is refused, and no child is made") {
  hq::test::TempDir dir;
  int fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  ForkedReport r;
  pid_t pid = hq::cmd::fork_into_cgroup(fd, report_group, &r);
  close(fd);
  if (hq::cmd::clone3_refused(pid)) HQ_SKIP("clone3 or CLONE_INTO_CGROUP is not available on this kernel or processor");
  CHECK(pid == -EBADF);
  CHECK(hq::cmd::fork_into_cgroup(-1, report_group, &r) == -EBADF);
}
