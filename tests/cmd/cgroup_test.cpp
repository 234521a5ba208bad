// The cgroup layer against fake hierarchies (plain directories): what a v2 and a v1
// host get written for a job's limits, mode selection, and stale-group sweeping.
// The real kernel paths (OOM, killing daemonized children) are in tests/e2e; v2's BPF
// device filters and kill_all are checked here on the host's cgroup2 tree (a private mount of
// it where the host mounts v1) where the host allows it.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cgroup2_mount.hpp"
#include "../skip.hpp"
#include "../temp_dir.hpp"
#include "fake_cgroups.hpp"
#include "cmd/agent/bpf_devices.hpp"
#include "cmd/agent/cgroup.hpp"
#include "cmd/paths.hpp"
#include "core/cpu_bind.hpp"
#include "core/units.hpp"

using namespace hq;
using namespace hq::cmd;
namespace fs = std::filesystem;

using hq::test::fake_v1;
using hq::test::fake_v2;
using hq::test::get;
using hq::test::put;

TEST_CASE("cgroup v2: controllers enabled down the tree - cpuset, memory and swap limits per job") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  Cgroups cg = fake_v2(root);
  CHECK(cg.mode() == CgroupMode::kV2);
  put(root + "/hq/n1/job_7/memory.swap.max", "max\n");  // files the kernel would provide
  put(root + "/hq/n1/job_7/pids.max", "max\n");
  auto job = cg.create(7, CgroupLimits{{0, 1, 2, 5}, 64 << 20, 100, {}});
  REQUIRE(job.is_ok());
  CHECK(job->procs_files() == std::vector<std::string>{root + "/hq/n1/job_7/cgroup.procs"});
  CHECK(get(root + "/hq/n1/job_7/cpuset.cpus") == "0-2,5");
  CHECK(get(root + "/hq/n1/job_7/memory.max") == std::to_string(64 << 20));
  CHECK(get(root + "/hq/n1/job_7/memory.swap.max") == "0");
  CHECK(get(root + "/hq/n1/job_7/pids.max") == "100");
  put(root + "/hq/n1/job_7/memory.peak", "1048576\n");
  put(root + "/hq/n1/job_7/cpu.stat", "usage_usec 2500000\nuser_usec 2000000\n");
  put(root + "/hq/n1/job_7/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  CgroupUsage u = job->usage();
  CHECK(u.peak_mem_bytes == 1048576);
  CHECK(u.cpu_time_usec == 2500000);
  CHECK(u.oom_kills == 1);
}

TEST_CASE("cgroup v1: a group per controller - cpuset copies the parent's mems - devices denied") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  fake_v1(root, "0-63", "0-1");
  put(root + "/memory/hq/n1/job_3/memory.memsw.limit_in_bytes", "");
  auto cg = Cgroups::open(root, "auto", "n1");
  REQUIRE(cg.is_ok());
  CHECK(cg->mode() == CgroupMode::kV1);
  CHECK(cg->describe().find("memory,cpuset,pids,freezer,devices,cpuacct") != std::string::npos);
  CHECK(get(root + "/cpuset/hq/n1/cpuset.mems") == "0-1");
  auto job = cg->create(3, CgroupLimits{{4, 5}, 1 << 30, 0, {{195, 1}, {195, 2}}});
  REQUIRE(job.is_ok());
  CHECK(job->procs_files().size() == 6);
  CHECK(get(root + "/cpuset/hq/n1/job_3/cpuset.cpus") == "4-5");
  CHECK(get(root + "/cpuset/hq/n1/job_3/cpuset.mems") == "0-1");
  CHECK(get(root + "/memory/hq/n1/job_3/memory.limit_in_bytes") == std::to_string(1 << 30));
  CHECK(get(root + "/memory/hq/n1/job_3/memory.memsw.limit_in_bytes") == std::to_string(1 << 30));
  CHECK(get(root + "/devices/hq/n1/job_3/devices.deny") == "c 195:2 rwm");  // the last write (a real file keeps rules)
  CHECK(job->confines_devices());
  CHECK_FALSE(fake_v2(root + "/v2").create(4, {})->confines_devices());  // v2: no devices controller hq writes
  // A step's group denies the job's GPUs that are not the step's, in its own devices group.
  auto step = job->child("step_0", CgroupLimits{{4}, 0, 0, {{195, 0}}});
  REQUIRE(step.is_ok());
  CHECK(get(root + "/devices/hq/n1/job_3/step_0/devices.deny") == "c 195:0 rwm");
  CHECK(get(root + "/cpuset/hq/n1/job_3/step_0/cpuset.cpus") == "4");
  step->remove();
  put(root + "/memory/hq/n1/job_3/memory.max_usage_in_bytes", "4096\n");
  put(root + "/memory/hq/n1/job_3/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  put(root + "/cpuacct/hq/n1/job_3/cpuacct.usage", "3000000000\n");
  CgroupUsage u = job->usage();
  CHECK(u.peak_mem_bytes == 4096);
  CHECK(u.oom_kills == 2);
  CHECK(u.cpu_time_usec == 3000000);
}

TEST_CASE("cgroup v1: a job on a node without GPUs has no devices group - its steps neither - the rest as usual") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  fake_v1(root, "0-7", "0");
  auto cg = Cgroups::open(root, "auto", "n1");
  REQUIRE(cg.is_ok());
  CgroupLimits limits{{2, 3}, 0, 0, {}};
  limits.devices_group = false;
  auto job = cg->create(5, limits);
  REQUIRE(job.is_ok());
  CHECK(job->procs_files().size() == 5);
  CHECK_FALSE(fs::exists(root + "/devices/hq/n1/job_5"));
  CHECK(fs::exists(root + "/freezer/hq/n1/job_5"));
  CHECK(get(root + "/cpuset/hq/n1/job_5/cpuset.cpus") == "2-3");
  CHECK(job->dirs().front() == root + "/memory/hq/n1/job_5");  // memory first: usage() reads it
  CHECK_FALSE(job->confines_devices());
  auto step = job->child("step_0", CgroupLimits{{2}, 0, 0, {}});
  REQUIRE(step.is_ok());
  CHECK_FALSE(fs::exists(root + "/devices/hq/n1/job_5/step_0"));
  CHECK(get(root + "/cpuset/hq/n1/job_5/step_0/cpuset.cpus") == "2");
  // An agent restarted finds the same groups.
  CHECK(cg->existing(5).dirs() == job->dirs());
}

TEST_CASE("cgroup modes: none by request or when nothing is mounted - an explicit mode must exist") {
  hq::test::TempDir dir;
  auto none = Cgroups::open(dir.path(), "auto", "n1");
  REQUIRE(none.is_ok());
  CHECK(none->mode() == CgroupMode::kNone);
  CHECK(none->create(1, {})->active() == false);
  CHECK(!Cgroups::open(dir.path(), "v2", "n1"));
  CHECK(!Cgroups::open(dir.path(), "v1", "n1"));
  CHECK(!Cgroups::open(dir.path(), "v3", "n1"));
  CHECK(Cgroups::open("/sys/fs/cgroup", "none", "n1")->mode() == CgroupMode::kNone);
}

TEST_CASE("cpu binding: least-used CPUs, GPU-local first - map_cpu within the allocation") {
  std::vector<int32_t> pool{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(choose_cpus(pool, {}, 2, {}) == std::vector<int32_t>{0, 1});
  CHECK(choose_cpus(pool, {}, 2, {4, 5, 6, 7}) == std::vector<int32_t>{4, 5});
  CHECK(choose_cpus(pool, {{4, 1}, {5, 1}}, 2, {4, 5, 6, 7}) == std::vector<int32_t>{6, 7});
  CHECK(choose_cpus({0, 1}, {}, 4, {}) == std::vector<int32_t>{0, 1});  // a smaller host: all of it
  CHECK(parse_cpu_bind("none")->kind == CpuBindKind::kNone);
  CHECK(parse_cpu_bind("map_cpu:1,3")->map == std::vector<int32_t>{1, 3});
  CHECK(!parse_cpu_bind("numa"));
  CHECK(!parse_cpu_bind("map_cpu:"));
  CHECK(affinity_for(*parse_cpu_bind(""), {2, 3}).value() == std::vector<int32_t>{2, 3});
  CHECK(affinity_for(*parse_cpu_bind("none"), {2, 3})->empty());
  CHECK(affinity_for(*parse_cpu_bind("map_cpu:3"), {2, 3}).value() == std::vector<int32_t>{3});
  auto outside = affinity_for(*parse_cpu_bind("map_cpu:9"), {2, 3});
  REQUIRE(!outside);
  CHECK(outside.status().message().find("CPU 9") != std::string::npos);
}

TEST_CASE("cgroup: a job group's OOM kills are read beside its procs file - v2 memory.events, v1 memory.oom_control") {
  hq::test::TempDir dir;
  put(dir.path() + "/v2/job_1/memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n");
  CHECK(oom_kills_of(dir.path() + "/v2/job_1/cgroup.procs") == 2);
  put(dir.path() + "/v1/job_1/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
  CHECK(oom_kills_of(dir.path() + "/v1/job_1/cgroup.procs") == 3);
  CHECK(oom_kills_of(dir.path() + "/none/cgroup.procs") == 0);
}

TEST_CASE("cgroup v1: a step's group inside its job's - its CPUs and memory, the parent's memory nodes, tasks files below") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  fake_v1(root, "0-7", "0");
  auto cg = Cgroups::open(root, "auto", "n1");
  REQUIRE(cg.is_ok());
  auto job = cg->create(3, CgroupLimits{{4, 5}, 1 << 30, 0, {}});
  REQUIRE(job.is_ok());
  CHECK(job->batch_procs_files() == job->procs_files());  // v1: the script stays in the job's group
  auto step = job->child("step_0", CgroupLimits{{5}, 64 << 20, 0, {}});
  REQUIRE(step.is_ok());
  CHECK(step->procs_files().front() == root + "/memory/hq/n1/job_3/step_0/tasks");  // joined by writing 0 (join_cgroup_file)
  CHECK(step->procs_files().size() == 6);
  CHECK(get(root + "/cpuset/hq/n1/job_3/step_0/cpuset.cpus") == "5");
  CHECK(get(root + "/cpuset/hq/n1/job_3/step_0/cpuset.mems") == "0");
  CHECK(get(root + "/memory/hq/n1/job_3/step_0/memory.limit_in_bytes") == std::to_string(64 << 20));
  auto whole = job->child("step_1", CgroupLimits{});  // no CPUs or memory of its own: the job's
  REQUIRE(whole.is_ok());
  CHECK(get(root + "/cpuset/hq/n1/job_3/step_1/cpuset.cpus") == "4-5");
  CHECK_FALSE(fs::exists(root + "/memory/hq/n1/job_3/step_1/memory.limit_in_bytes"));
  CHECK(step->kill_all(50));  // nothing in it
}

TEST_CASE("cgroup v2: a job's group enables controllers for its steps - the batch script goes in step_batch") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  Cgroups cg = fake_v2(root);
  auto job = cg.create(7, CgroupLimits{{0, 1}, 64 << 20, 0, {}});
  REQUIRE(job.is_ok());
  CHECK(get(root + "/hq/n1/job_7/cgroup.subtree_control") == "+cpuset +memory +pids");
  CHECK(job->batch_procs_files() == std::vector<std::string>{root + "/hq/n1/job_7/step_batch/cgroup.procs"});
  auto step = job->child("step_2", CgroupLimits{{1}, 16 << 20, 0, {}});
  REQUIRE(step.is_ok());
  CHECK(step->procs_files() == std::vector<std::string>{root + "/hq/n1/job_7/step_2/cgroup.procs"});
  CHECK(get(root + "/hq/n1/job_7/step_2/cpuset.cpus") == "1");
  CHECK(get(root + "/hq/n1/job_7/step_2/memory.max") == std::to_string(16 << 20));
  // A job group without controllers below it (made by an agent before step groups): the
  // script stays in the job's group.
  put(root + "/hq/n1/job_8/cgroup.procs", "");
  JobCgroup old = cg.existing(8);
  CHECK(old.batch_procs_files() == std::vector<std::string>{root + "/hq/n1/job_8/cgroup.procs"});
}

namespace {
// Whether a fresh process that joins the group of `procs` may open `device`: 0 yes,
// 1 refused (EPERM), 2 another failure. Only system calls between fork and _exit.
int open_in_group(const std::string& procs, const char* device) {
  pid_t pid = ::fork();
  if (pid == 0) {
    char text[16];
    int len = std::snprintf(text, sizeof(text), "%d", static_cast<int>(::getpid()));
    int fd = ::open(procs.c_str(), O_WRONLY);
    if (fd < 0 || ::write(fd, text, static_cast<size_t>(len)) != len) ::_exit(3);
    ::close(fd);
    int dev = ::open(device, O_RDONLY);
    ::_exit(dev >= 0 ? 0 : errno == EPERM ? 1 : 2);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}
}  // namespace

TEST_CASE("cgroup v2: BPF device filters refuse a job's and a step's devices (the real kernel, a private cgroup2 mount)") {
  hq::test::TempDir dir;
  hq::test::Cgroup2Mount cgroup2(dir.path());
  if (cgroup2.path().empty()) HQ_SKIP(cgroup2.why_not());
  const std::string& mnt = cgroup2.path();
  if (!device_filters_work(mnt)) HQ_SKIP("this kernel attaches no BPF device filter here (CONFIG_CGROUP_BPF)");
  CHECK_FALSE(fs::exists(mnt + "/hq_device_probe"));  // the probe's scratch group is gone
  CHECK_FALSE(device_filters_work(dir.path()));        // a plain directory is no cgroup2

  // The mount shows the host's one cgroup2 hierarchy: the groups made here go, whatever happens.
  std::string job_dir = mnt + "/hq_test_job_" + std::to_string(::getpid());
  REQUIRE(::mkdir(job_dir.c_str(), 0755) == 0);
  JobCgroup job(CgroupMode::kV2, {job_dir}, {}, true);
  struct RemoveGroups {
    const JobCgroup& g;
    ~RemoveGroups() { g.remove(); }
  } remove_groups{job};
  CHECK(job.confines_devices());
  CHECK_FALSE(JobCgroup(CgroupMode::kV2, {job_dir}, {}, false).confines_devices());
  REQUIRE(attach_device_filter(job_dir, {{1, 5}}).is_ok());  // the job: /dev/zero refused
  auto step = job.child("step_0", CgroupLimits{{}, 0, 0, {{1, 3}}});  // the step: /dev/null too
  REQUIRE(step.is_ok());
  CHECK(step->confines_devices());

  CHECK(open_in_group(job_dir + "/cgroup.procs", "/dev/null") == 0);
  CHECK(open_in_group(job_dir + "/cgroup.procs", "/dev/zero") == 1);
  CHECK(open_in_group(job_dir + "/step_0/cgroup.procs", "/dev/null") == 1);
  CHECK(open_in_group(job_dir + "/step_0/cgroup.procs", "/dev/zero") == 1);  // the job's filter holds below
  CHECK(open_in_group(job_dir + "/step_0/cgroup.procs", "/dev/urandom") == 0);
  auto other = job.child("step_1", CgroupLimits{});  // no devices of its own to refuse
  REQUIRE(other.is_ok());
  CHECK(open_in_group(job_dir + "/step_1/cgroup.procs", "/dev/null") == 0);
  job.remove();
  CHECK_FALSE(fs::exists(job_dir));
}

namespace {
// Forks a child that joins through `file` (join_cgroup_file) and waits; true when the
// child's pid is then in the group's cgroup.procs.
bool child_joins(const std::string& file) {
  int ready[2], done[2];
  if (pipe(ready) != 0 || pipe(done) != 0) return false;
  pid_t child = fork();
  if (child == 0) {
    char c = join_cgroup_file(file) ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    (void)!read(done[0], &c, 1);
    _exit(0);
  }
  char c = 0;
  bool joined = read(ready[0], &c, 1) == 1 && c == 'y';
  std::string procs = get(std::filesystem::path(file).parent_path().string() + "/cgroup.procs");
  bool listed = false;
  for (std::string_view line : hq::split(procs, '\n')) listed = listed || line == std::to_string(child);
  (void)!write(done[1], "x", 1);
  int status = 0;
  waitpid(child, &status, 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
  return joined && listed;
}
}  // namespace

TEST_CASE("cgroup v1: a forked child joins through tasks (0: itself, no threadgroup lock) and v2-style through cgroup.procs (its pid) - the real kernel") {
  if (::geteuid() != 0) HQ_SKIP("needs root: makes a group in the host's v1 memory hierarchy");
  std::string top = "/sys/fs/cgroup/memory";
  if (!std::filesystem::exists(top + "/tasks") || std::filesystem::exists(top + "/cgroup.controllers"))
    HQ_SKIP("no cgroup v1 memory hierarchy at " + top);
  std::string group = top + "/hq_join_test_" + std::to_string(getpid());
  REQUIRE(::mkdir(group.c_str(), 0755) == 0);
  CHECK(child_joins(group + "/tasks"));
  CHECK(child_joins(group + "/cgroup.procs"));
  CHECK_FALSE(child_joins(group + "/missing/tasks"));
  ::rmdir(group.c_str());
}

namespace {
// A child that joins the groups of `files` (procs or tasks files), says so on a pipe and
// waits to be killed; the pipe's read end ends when the child does.
struct JoinedChild {
  pid_t pid = -1;
  int ended_fd = -1;
  bool joined = false;
};

JoinedChild start_joined_child(const std::vector<std::string>& files) {
  int ready[2];
  REQUIRE(pipe(ready) == 0);
  pid_t child = fork();
  if (child == 0) {
    bool all = true;
    for (const auto& f : files) all = join_cgroup_file(f) && all;
    char c = all ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    for (;;) pause();
  }
  close(ready[1]);  // the child's copy is the last: the pipe ends when the child does
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  return {child, ready[0], c == 'y'};
}

// Whether the child died of SIGKILL (waited for 5 s at most), reaped either way.
bool killed(JoinedChild& child) {
  char c = 0;
  pollfd gone{child.ended_fd, POLLIN, 0};
  bool ended = poll(&gone, 1, 5000) == 1 && read(child.ended_fd, &c, 1) == 0;  // bounded: 5 s
  if (!ended) ::kill(child.pid, SIGKILL);
  int status = 0;
  bool reaped = waitpid(child.pid, &status, 0) == child.pid;
  close(child.ended_fd);
  return ended && reaped && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}
}  // namespace

TEST_CASE("cgroup v2: kill_all reads cgroup.events - an empty group at once, a live process killed (the real kernel)") {
  hq::test::TempDir dir;
  hq::test::Cgroup2Mount cgroup2(dir.path());
  if (cgroup2.path().empty()) HQ_SKIP(cgroup2.why_not());
  std::string group = cgroup2.path() + "/hq_kill_test_" + std::to_string(getpid());
  REQUIRE(::mkdir(group.c_str(), 0755) == 0);
  JobCgroup job(CgroupMode::kV2, {group});
  CHECK(job.kill_all(1000));  // nothing in it
  JoinedChild child = start_joined_child({group + "/cgroup.procs"});
  CHECK(child.joined);
  CHECK(get(group + "/cgroup.events").find("populated 1") != std::string::npos);
  CHECK(job.kill_all(2000));
  CHECK(killed(child));
  job.remove();
  CHECK_FALSE(fs::exists(group));
}

TEST_CASE("cgroup v1: kill_all - pids.current says an empty group at once, a process in a step's group below is killed (the real kernel)") {
  if (::geteuid() != 0) HQ_SKIP("needs root: makes groups in the host's v1 memory and pids hierarchies");
  std::string memory = "/sys/fs/cgroup/memory", pids = "/sys/fs/cgroup/pids";
  if (!fs::exists(memory + "/tasks") || !fs::exists(pids + "/tasks") || fs::exists(memory + "/cgroup.controllers"))
    HQ_SKIP("no cgroup v1 memory and pids hierarchies at /sys/fs/cgroup");
  std::string name = "/hq_kill_v1_test_" + std::to_string(getpid());
  for (const auto& top : {memory, pids}) {
    REQUIRE(::mkdir((top + name).c_str(), 0755) == 0);
    REQUIRE(::mkdir((top + name + "/step_0").c_str(), 0755) == 0);
  }
  JobCgroup job(CgroupMode::kV1, {memory + name, pids + name}, {"memory", "pids"});
  CHECK(job.kill_all(1000));  // nothing in it
  // Below the job's own groups, as a step's task is: the job's tasks files do not list it.
  JoinedChild child = start_joined_child({memory + name + "/step_0/tasks", pids + name + "/step_0/tasks"});
  CHECK(child.joined);
  CHECK(get(pids + name + "/pids.current").substr(0, 1) == "1");
  CHECK(job.kill_all(2000));
  CHECK(killed(child));
  job.remove();
  CHECK_FALSE(fs::exists(memory + name));
  CHECK_FALSE(fs::exists(pids + name));
}

TEST_CASE("cgroup v1: cpusets ask the kernel not to balance load where the root cpuset does it for all - to balance where it does not") {
  for (bool root_balances : {true, false}) {
    CAPTURE(root_balances);
    hq::test::TempDir dir;
    std::string root = dir.path();
    fake_v1(root, "0-7", "0");
    put(root + "/cpuset/cpuset.sched_load_balance", root_balances ? "1\n" : "0\n");
    auto cg = Cgroups::open(root, "auto", "n1");
    REQUIRE(cg.is_ok());
    auto job = cg->create(4, CgroupLimits{{1, 2}, 0, 0, {}});
    REQUIRE(job.is_ok());
    auto step = job->child("step_0", CgroupLimits{{2}, 0, 0, {}});
    REQUIRE(step.is_ok());
    for (std::string d : {"/hq", "/hq/n1"}) {  // the node's own: 1 again where an earlier agent wrote 0
      CAPTURE(d);
      CHECK(get(root + "/cpuset" + d + "/cpuset.sched_load_balance") == (root_balances ? "0" : "1"));
    }
    for (std::string d : {"/hq/n1/job_4", "/hq/n1/job_4/step_0"}) {
      CAPTURE(d);
      // The kernel's files would hold "1\n" already: here what hq wrote, or nothing.
      CHECK(get(root + "/cpuset" + d + "/cpuset.sched_load_balance") == (root_balances ? "0" : ""));
    }
  }
}
