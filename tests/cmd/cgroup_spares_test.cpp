// Spare job groups on cgroup v1 (Cgroups::recycle, and create taking one), and a job's
// spare step groups (JobCgroup::release, and child taking one): on fake hierarchies, which
// groups are kept and how the next job's or step's limits and counters are put right; on
// the host's own v1 hierarchies where there are some (root), that the kernel takes the
// renames and the limits in the order written, and the counters start again.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../skip.hpp"
#include "../temp_dir.hpp"
#include "cmd/agent/cgroup.hpp"
#include "fake_cgroups.hpp"

using namespace hq;
using namespace hq::cmd;
using hq::test::fake_v1;
using hq::test::get;
using hq::test::put;
namespace fs = std::filesystem;

namespace {
const char* const kKept[] = {"memory", "cpuset", "pids", "freezer", "cpuacct"};  // devices: never a spare

// A fake v1 host under `root` with its cgroups opened for node n1.
Cgroups open_fake_v1(const std::string& root) {
  fake_v1(root, "0-7", "0");
  auto cg = Cgroups::open(root, "auto", "n1");
  REQUIRE(cg.is_ok());
  REQUIRE(cg->mode() == CgroupMode::kV1);
  return std::move(cg).value();
}

CgroupLimits limits(std::vector<int32_t> cpus, int64_t mem, int64_t pids, bool devices = false) {
  CgroupLimits l{std::move(cpus), mem, pids, {}};
  l.devices_group = devices;
  return l;
}

// What the kernel would show of a finished job's memory group.
void charged(const std::string& root, uint64_t job, int64_t bytes) {
  put(root + "/memory/hq/n1/job_" + std::to_string(job) + "/memory.usage_in_bytes", std::to_string(bytes) + "\n");
}

bool group_exists(const std::string& root, const std::string& ctl, const std::string& leaf) {
  return fs::exists(root + "/" + ctl + "/hq/n1/" + leaf);
}
}  // namespace

TEST_CASE("cgroup v1 spares: a finished job's groups are renamed for the next job - counters reset, only changed limits written") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  Cgroups cg = open_fake_v1(root);
  put(root + "/pids/hq/n1/job_5/pids.max", "max\n");  // as the kernel would provide
  auto first = cg.create(5, limits({2, 3}, 1 << 30, 100));
  REQUIRE(first.is_ok());
  CHECK(get(root + "/pids/hq/n1/job_5/pids.max") == "100");
  charged(root, 5, 300 << 10);
  put(root + "/cpuacct/hq/n1/job_5/cpuacct.usage", "5000000\n");
  cg.recycle(*first, true, 0);
  CHECK(cg.spare_count() == 1);
  for (const char* ctl : kKept) {
    CHECK_FALSE(group_exists(root, ctl, "job_5"));
    CHECK(group_exists(root, ctl, "spare_0"));
  }
  // Marks in the files the next job's limits leave as they are.
  put(root + "/cpuset/hq/n1/spare_0/cpuset.cpus", "unchanged");
  put(root + "/cpuset/hq/n1/spare_0/cpuset.mems", "unchanged");

  SUBCASE("the same CPUs and process limit, more memory") {
    put(root + "/pids/hq/n1/spare_0/pids.max", "unchanged");
    auto next = cg.create(6, limits({2, 3}, 2LL << 30, 100));
    REQUIRE(next.is_ok());
    CHECK(cg.spare_count() == 0);
    CHECK_FALSE(group_exists(root, "memory", "spare_0"));
    CHECK(next->dirs().front() == root + "/memory/hq/n1/job_6");
    CHECK(get(root + "/cpuset/hq/n1/job_6/cpuset.cpus") == "2-3");  // always: a CPU once offline left it
    CHECK(get(root + "/cpuset/hq/n1/job_6/cpuset.mems") == "unchanged");
    CHECK(get(root + "/pids/hq/n1/job_6/pids.max") == "unchanged");
    CHECK(get(root + "/memory/hq/n1/job_6/memory.limit_in_bytes") == std::to_string(2LL << 30));
    CHECK(get(root + "/memory/hq/n1/job_6/memory.max_usage_in_bytes") == "0");  // the peak starts again
    CHECK(get(root + "/cpuacct/hq/n1/job_6/cpuacct.usage") == "0");
    REQUIRE(next->settings());
    CHECK(*next->settings() == GroupSettings{"2-3", 2LL << 30, 100});
  }
  SUBCASE("no process limit any more") {
    auto next = cg.create(6, limits({2, 3}, 1 << 30, 0));
    REQUIRE(next.is_ok());
    CHECK(get(root + "/pids/hq/n1/job_6/pids.max") == "max");
    CHECK(get(root + "/memory/hq/n1/job_6/memory.limit_in_bytes") == std::to_string(1 << 30));  // as it was
  }
  SUBCASE("other CPUs, no memory limit") {
    auto next = cg.create(6, limits({7}, 0, 100));
    REQUIRE(next.is_ok());
    CHECK(get(root + "/cpuset/hq/n1/job_6/cpuset.cpus") == "7");
    CHECK(get(root + "/memory/hq/n1/job_6/memory.limit_in_bytes") == "-1");
    CHECK(get(root + "/pids/hq/n1/job_6/pids.max") == "100");
  }
  SUBCASE("a job with a devices group gets a fresh one, with its rules") {
    CgroupLimits gpu = limits({2, 3}, 1 << 30, 100, true);
    gpu.deny_devices = {{195, 1}};
    auto next = cg.create(6, gpu);
    REQUIRE(next.is_ok());
    CHECK(next->dirs().size() == 6);
    CHECK(get(root + "/devices/hq/n1/job_6/devices.deny") == "c 195:1 rwm");
    charged(root, 6, 0);
    cg.recycle(*next, true, 0);  // kept, but not its devices group (removed: not renamed)
    CHECK(cg.spare_count() == 1);
    CHECK_FALSE(group_exists(root, "devices", "spare_1"));
    CHECK(group_exists(root, "memory", "spare_1"));
  }
}

TEST_CASE("cgroup v1 spares: removed instead when not clean - processes left, an OOM kill, a step's group, page cache, adopted, v2") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  Cgroups cg = open_fake_v1(root);
  auto job = cg.create(5, limits({2}, 1 << 30, 0));
  REQUIRE(job.is_ok());
  charged(root, 5, 300 << 10);
  bool emptied = true;
  int64_t ooms = 0;
  SUBCASE("processes survived") { emptied = false; }
  SUBCASE("an OOM kill (v1 cannot reset its count)") { ooms = 1; }
  SUBCASE("a step's group still below it") { REQUIRE(job->child("step_0", limits({2}, 0, 0)).is_ok()); }
  SUBCASE("more than 1 MiB still charged") { charged(root, 5, 2 << 20); }
  SUBCASE("its charge unknown") { fs::remove(root + "/memory/hq/n1/job_5/memory.usage_in_bytes"); }
  SUBCASE("a killed process not yet reaped still counted") { put(root + "/pids/hq/n1/job_5/pids.current", "1\n"); }
  SUBCASE("adopted from an earlier agent: what it holds is not known") { job = cg.existing(5); }
  cg.recycle(*job, emptied, ooms);
  CHECK(cg.spare_count() == 0);
  for (const char* ctl : kKept) CHECK_FALSE(group_exists(root, ctl, "spare_0"));
  CHECK(group_exists(root, "memory", "job_5"));  // not renamed (a fake holding files cannot be removed)
}

TEST_CASE("cgroup v1 spares: with swap accounted, what is charged to swap counts too") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  put(root + "/memory/memory.memsw.limit_in_bytes", "9223372036854771712\n");  // the host accounts swap
  Cgroups cg = open_fake_v1(root);
  for (int64_t swapped : {int64_t{0}, int64_t{4} << 20}) {
    CAPTURE(swapped);
    auto job = cg.create(5, limits({2}, 0, 0));
    REQUIRE(job.is_ok());
    charged(root, 5, 300 << 10);
    put(root + "/memory/hq/n1/job_5/memory.memsw.usage_in_bytes", std::to_string((300 << 10) + swapped) + "\n");
    size_t before = cg.spare_count();
    cg.recycle(*job, true, 0);
    CHECK(cg.spare_count() == before + (swapped == 0 ? 1 : 0));
  }
}

namespace {
std::string step_dir(const std::string& root, const std::string& ctl, const std::string& leaf) {
  return root + "/" + ctl + "/hq/n1/job_5/" + leaf;
}
}  // namespace

TEST_CASE("cgroup v1 step spares: a step's groups are renamed for the job's next step - counters reset, CPUs and memory written") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  Cgroups cg = open_fake_v1(root);
  auto job = cg.create(5, limits({0, 1, 2, 3}, 1 << 30, 0));
  REQUIRE(job.is_ok());
  auto step = job->child("step_0", limits({0, 1}, 0, 0));
  REQUIRE(step.is_ok());
  put(step_dir(root, "memory", "step_0/memory.usage_in_bytes"), "4096\n");
  put(step_dir(root, "cpuacct", "step_0/cpuacct.usage"), "123456\n");
  step->release(true, 0);
  CHECK(job->step_spare_count() == 1);
  for (const char* ctl : kKept) {
    CHECK_FALSE(fs::exists(step_dir(root, ctl, "step_0")));
    CHECK(fs::exists(step_dir(root, ctl, "step_spare_0")));
  }
  put(step_dir(root, "cpuset", "step_spare_0/cpuset.mems"), "unchanged");  // kept as it is

  auto next = job->child("step_1", limits({2}, 256 << 20, 0));
  REQUIRE(next.is_ok());
  CHECK(job->step_spare_count() == 0);
  CHECK_FALSE(fs::exists(step_dir(root, "memory", "step_spare_0")));
  CHECK(next->dirs().front() == step_dir(root, "memory", "step_1"));
  CHECK(get(step_dir(root, "cpuset", "step_1/cpuset.cpus")) == "2");
  CHECK(get(step_dir(root, "cpuset", "step_1/cpuset.mems")) == "unchanged");
  CHECK(get(step_dir(root, "memory", "step_1/memory.limit_in_bytes")) == std::to_string(256 << 20));
  CHECK(get(step_dir(root, "memory", "step_1/memory.max_usage_in_bytes")) == "0");  // its peak starts again
  CHECK(get(step_dir(root, "cpuacct", "step_1/cpuacct.usage")) == "0");

  SUBCASE("a step's group with the job's CPUs: the job's written, not none") {
    put(step_dir(root, "memory", "step_1/memory.usage_in_bytes"), "0\n");
    next->release(true, 0);
    put(root + "/cpuset/hq/n1/job_5/cpuset.cpus", "0-3\n");
    auto whole = job->child("step_2", limits({}, 0, 0));
    REQUIRE(whole.is_ok());
    CHECK(get(step_dir(root, "cpuset", "step_2/cpuset.cpus")) == "0-3");
    CHECK(get(step_dir(root, "memory", "step_2/memory.limit_in_bytes")) == "-1");  // no limit of its own
  }
  SUBCASE("the job's end lets go of the kept steps' groups before its own are kept or removed") {
    put(step_dir(root, "memory", "step_1/memory.usage_in_bytes"), "0\n");
    next->release(true, 0);
    REQUIRE(job->step_spare_count() == 1);
    cg.recycle(*job, true, 0);
    CHECK(job->step_spare_count() == 0);
  }
}

TEST_CASE("cgroup v1 step spares: removed instead when not clean - processes left, an OOM kill, a group below, charge, too many, adopted") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  Cgroups cg = open_fake_v1(root);
  auto job = cg.create(5, limits({0, 1}, 0, 0));
  REQUIRE(job.is_ok());
  auto step = job->child("step_0", limits({0}, 0, 0));
  REQUIRE(step.is_ok());
  put(step_dir(root, "memory", "step_0/memory.usage_in_bytes"), "4096\n");
  bool emptied = true;
  int64_t ooms = 0;
  SUBCASE("processes survived") { emptied = false; }
  SUBCASE("an OOM kill") { ooms = 1; }
  SUBCASE("a group below it") { fs::create_directories(step_dir(root, "pids", "step_0/made_by_the_job")); }
  SUBCASE("more than 1 MiB still charged") { put(step_dir(root, "memory", "step_0/memory.usage_in_bytes"), "2097152\n"); }
  SUBCASE("a killed process not yet reaped still counted") { put(step_dir(root, "pids", "step_0/pids.current"), "1\n"); }
  SUBCASE("a step of an adopted job: what its groups hold is not known") {
    step = cg.existing(5).child("step_0", limits({0}, 0, 0));
    REQUIRE(step.is_ok());
  }
  step->release(emptied, ooms);
  CHECK(job->step_spare_count() == 0);
  for (const char* ctl : kKept) CHECK_FALSE(fs::exists(step_dir(root, ctl, "step_spare_0")));
}

TEST_CASE("cgroup v1 step spares: at most 8 kept for a job - its devices group never (made afresh, its rules only add up)") {
  hq::test::TempDir dir;
  std::string root = dir.path();
  Cgroups cg = open_fake_v1(root);
  CgroupLimits gpu = limits({0, 1}, 0, 0, true);
  auto job = cg.create(5, gpu);
  REQUIRE(job.is_ok());
  std::vector<JobCgroup> steps;
  for (int i = 0; i < 9; ++i) {
    CgroupLimits l = limits({0}, 0, 0, true);
    l.deny_devices = {{195, 1}};
    auto s = job->child("step_" + std::to_string(i), l);
    REQUIRE(s.is_ok());
    CHECK(get(step_dir(root, "devices", "step_" + std::to_string(i) + "/devices.deny")) == "c 195:1 rwm");
    put(step_dir(root, "memory", "step_" + std::to_string(i) + "/memory.usage_in_bytes"), "0\n");
    steps.push_back(std::move(s).value());
  }
  for (const auto& s : steps) s.release(true, 0);
  CHECK(job->step_spare_count() == 8);
  CHECK(fs::exists(step_dir(root, "memory", "step_spare_7")));
  CHECK_FALSE(fs::exists(step_dir(root, "memory", "step_spare_8")));
  CHECK_FALSE(fs::exists(step_dir(root, "devices", "step_spare_0")));
  CgroupLimits l = limits({1}, 0, 0, true);
  l.deny_devices = {{195, 0}};
  auto next = job->child("step_9", l);  // the last kept, with a devices group of its own
  REQUIRE(next.is_ok());
  CHECK(job->step_spare_count() == 7);
  CHECK_FALSE(fs::exists(step_dir(root, "memory", "step_spare_7")));
  CHECK(get(step_dir(root, "devices", "step_9/devices.deny")) == "c 195:0 rwm");
}

TEST_CASE("cgroup v2: a job's group is removed at its end, never kept (v2 cannot rename a group)") {
  hq::test::TempDir dir;
  Cgroups cg = hq::test::fake_v2(dir.path());
  auto job = cg.create(3, limits({1}, 0, 0));
  REQUIRE(job.is_ok());
  REQUIRE(fs::exists(dir.path() + "/hq/n1/job_3"));
  cg.recycle(*job, true, 0);
  CHECK(cg.spare_count() == 0);
  CHECK(fs::exists(dir.path() + "/hq/n1/job_3"));  // not renamed (a fake cannot be removed)
  CHECK_FALSE(fs::exists(dir.path() + "/hq/n1/spare_0"));
}

namespace {
// Runs a child in `group` that touches `bytes` of memory and spins a little; its exit status.
int run_in(const JobCgroup& group, size_t bytes) {
  std::vector<std::string> files = group.procs_files();
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& f : files)
      if (!join_cgroup_file(f)) _exit(3);
    std::vector<char> touched(bytes, 1);
    volatile uint64_t sum = 0;
    for (int round = 0; round < 20; ++round)
      for (char c : touched) sum = sum + static_cast<uint64_t>(c);
    _exit(sum > 0 ? 0 : 4);
  }
  int status = -1;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Removes what a test on the real kernel left under the node's directory of each v1
// hierarchy, whatever assertion stopped it (its groups are empty: their children exited).
struct NodeGroupsRemoved {
  std::string node;
  ~NodeGroupsRemoved() {
    for (const char* ctl : {"memory", "cpuset", "pids", "freezer", "devices", "cpuacct"})
      remove_tree(std::string("/sys/fs/cgroup/") + ctl + "/hq/" + node);
  }
  static void remove_tree(const std::string& dir) {  // groups below first (a job's steps')
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory(ec)) remove_tree(e.path().string());
    ::rmdir(dir.c_str());
  }
};

// Why the host's own v1 hierarchies cannot be used here, or "".
std::string why_no_host_v1() {
  if (::geteuid() != 0) return "needs root: makes groups in the host's v1 hierarchies";
  if (!fs::exists("/sys/fs/cgroup/memory/tasks") || fs::exists("/sys/fs/cgroup/cgroup.controllers"))
    return "no cgroup v1 hierarchies at /sys/fs/cgroup";
  return "";
}

// The host's v1 hierarchies opened for `node` (a test's own, removed by NodeGroupsRemoved).
Cgroups open_host_v1(const std::string& node) {
  auto opened = Cgroups::open("/sys/fs/cgroup", "v1", node);
  REQUIRE(opened.is_ok());
  return std::move(opened).value();
}

// A directory's inode number, which a rename keeps (0: none): a fresh group has another.
ino_t inode_of(const std::string& dir) {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 ? st.st_ino : 0;
}
}  // namespace

TEST_CASE("cgroup v1 spares on the real kernel: renamed, the memory limits raised and lowered, the counters started again") {
  if (std::string why = why_no_host_v1(); !why.empty()) HQ_SKIP(why);
  std::string node = "hq_spares_test_" + std::to_string(getpid());
  NodeGroupsRemoved cleanup{node};
  Cgroups cg = open_host_v1(node);
  std::string memory = "/sys/fs/cgroup/memory/hq/" + node, cpuacct = "/sys/fs/cgroup/cpuacct/hq/" + node;
  auto first = cg.create(1, limits({0}, 64 << 20, 50));
  REQUIRE(first.is_ok());
  CHECK(run_in(*first, 8 << 20) == 0);
  CgroupUsage used = first->usage();
  CHECK(used.peak_mem_bytes >= (8 << 20));
  bool kernel_counts_cpu = fs::exists(cpuacct);
  if (kernel_counts_cpu) CHECK(used.cpu_time_usec > 0);
  REQUIRE(first->kill_all(1000));
  cg.recycle(*first, true, used.oom_kills);
  REQUIRE(cg.spare_count() == 1);
  ino_t spare = inode_of(memory + "/spare_0");
  CHECK(spare != 0);

  auto raised = cg.create(2, limits({0}, 128 << 20, 0));  // memsw raised before the limit
  REQUIRE(raised.is_ok());
  CHECK(cg.spare_count() == 0);
  CHECK(inode_of(memory + "/job_2") == spare);  // the spare itself, not a fresh group made when it failed
  CHECK(get(memory + "/job_2/memory.limit_in_bytes") == std::to_string(128 << 20) + "\n");
  if (fs::exists(memory + "/job_2/memory.memsw.limit_in_bytes"))
    CHECK(get(memory + "/job_2/memory.memsw.limit_in_bytes") == std::to_string(128 << 20) + "\n");
  CHECK(get("/sys/fs/cgroup/pids/hq/" + node + "/job_2/pids.max") == "max\n");
  if (get("/sys/fs/cgroup/cpuset/cpuset.sched_load_balance") == "1\n")  // then a change of CPUs rebuilds no domains
    CHECK(get("/sys/fs/cgroup/cpuset/hq/" + node + "/job_2/cpuset.sched_load_balance") == "0\n");
  CgroupUsage fresh = raised->usage();
  CHECK(fresh.peak_mem_bytes <= (1 << 20));  // no more than the charge the last job left
  if (kernel_counts_cpu) CHECK(fresh.cpu_time_usec == 0);
  REQUIRE(raised->kill_all(1000));
  cg.recycle(*raised, true, 0);
  REQUIRE(cg.spare_count() == 1);

  auto lowered = cg.create(3, limits({0}, 32 << 20, 10));  // the limit lowered before memsw
  REQUIRE(lowered.is_ok());
  CHECK(inode_of(memory + "/job_3") == spare);
  CHECK(get(memory + "/job_3/memory.limit_in_bytes") == std::to_string(32 << 20) + "\n");
  if (fs::exists(memory + "/job_3/memory.memsw.limit_in_bytes"))
    CHECK(get(memory + "/job_3/memory.memsw.limit_in_bytes") == std::to_string(32 << 20) + "\n");
  CHECK(run_in(*lowered, 4 << 20) == 0);
  REQUIRE(lowered->kill_all(1000));
  cg.recycle(*lowered, true, 0);
  REQUIRE(cg.spare_count() == 1);
  CHECK(fs::exists(memory + "/spare_2"));

  SUBCASE("a stopping agent removes its spares, then its own directories") {
    cg.release();
    CHECK(cg.spare_count() == 0);
    CHECK_FALSE(fs::exists(memory));
  }
  SUBCASE("an agent started after a killed one sweeps its spares, counting only jobs' groups") {
    auto running = cg.create(4, limits({0}, 0, 0));  // takes spare_2
    REQUIRE(running.is_ok());
    cg.recycle(*cg.create(5, limits({0}, 0, 0)), true, 0);  // a fresh group, then a spare
    REQUIRE(cg.spare_count() == 1);
    auto successor = Cgroups::open("/sys/fs/cgroup", "v1", node);
    REQUIRE(successor.is_ok());
    CHECK(successor->sweep_stale({}) == 1);
    CHECK_FALSE(fs::exists(memory + "/job_4"));
    CHECK_FALSE(fs::exists(memory + "/spare_3"));
    successor->release();
    CHECK_FALSE(fs::exists(memory));
  }
}

TEST_CASE("cgroup v1 step spares on the real kernel: a step's groups renamed for the next step, its peak and CPU time started again, dropped at the job's end") {
  if (std::string why = why_no_host_v1(); !why.empty()) HQ_SKIP(why);
  std::string node = "hq_step_spares_test_" + std::to_string(getpid());
  NodeGroupsRemoved cleanup{node};
  Cgroups cg = open_host_v1(node);
  std::string job_memory = "/sys/fs/cgroup/memory/hq/" + node + "/job_1";
  auto job = cg.create(1, limits({0}, 64 << 20, 0));
  REQUIRE(job.is_ok());
  auto first = job->child("step_0", limits({0}, 0, 0));
  REQUIRE(first.is_ok());
  ino_t group = inode_of(job_memory + "/step_0");
  CHECK(run_in(*first, 8 << 20) == 0);
  CHECK(first->usage().peak_mem_bytes >= (8 << 20));
  REQUIRE(first->kill_all(1000));
  first->release(true, 0);
  REQUIRE(job->step_spare_count() == 1);
  CHECK(inode_of(job_memory + "/step_spare_0") == group);

  auto second = job->child("step_1", limits({0}, 16 << 20, 0));
  REQUIRE(second.is_ok());
  CHECK(inode_of(job_memory + "/step_1") == group);  // the spare itself, not a fresh group
  CHECK(get(job_memory + "/step_1/memory.limit_in_bytes") == std::to_string(16 << 20) + "\n");
  CgroupUsage fresh = second->usage();
  CHECK(fresh.peak_mem_bytes <= (1 << 20));  // no more than the charge the last step left
  if (fs::exists("/sys/fs/cgroup/cpuacct/hq/" + node)) CHECK(fresh.cpu_time_usec == 0);
  CHECK(run_in(*second, 4 << 20) == 0);
  REQUIRE(second->kill_all(1000));
  second->release(true, 0);
  REQUIRE(job->step_spare_count() == 1);

  // A spare whose CPUs the kernel refuses: an error, and nothing of it or of the step left.
  auto refused = job->child("step_2", limits({1}, 0, 0));  // not among the job's CPUs (0)
  CHECK_FALSE(refused.is_ok());
  CHECK(job->step_spare_count() == 0);
  for (const char* ctl : {"memory", "cpuset", "pids", "freezer", "cpuacct"}) {
    std::string job_dir = std::string("/sys/fs/cgroup/") + ctl + "/hq/" + node + "/job_1";
    CHECK_FALSE(fs::exists(job_dir + "/step_spare_0"));
    CHECK_FALSE(fs::exists(job_dir + "/step_2"));
  }
  auto third = job->child("step_3", limits({0}, 0, 0));  // a fresh group, kept at its end
  REQUIRE(third.is_ok());
  third->release(true, 0);
  REQUIRE(job->step_spare_count() == 1);

  REQUIRE(job->kill_all(1000));
  // What the steps left charged (their groups' charges move up to the job's as they are
  // removed) decides whether the job's own group may be kept: pages of the test binary a
  // step read first stay charged, more than a spare may hold in some runs.
  int64_t charged = std::stoll(get(job_memory + "/memory.usage_in_bytes"));
  cg.recycle(*job, true, 0);  // its steps' spare dropped, then the job's own group kept where clean
  CHECK(job->step_spare_count() == 0);
  CHECK_FALSE(fs::exists(job_memory));
  CHECK_FALSE(fs::exists("/sys/fs/cgroup/memory/hq/" + node + "/spare_0/step_spare_1"));  // step_3's
  if (charged <= (1 << 20)) {
    CHECK(cg.spare_count() == 1);
    CHECK(fs::exists("/sys/fs/cgroup/memory/hq/" + node + "/spare_0"));
  }
  cg.release();
}
