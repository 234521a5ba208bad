#include "cmd/agent/cgroup.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "cmd/agent/bpf_devices.hpp"
#include "cmd/agent/cgroup_files.hpp"
#include "cmd/paths.hpp"
#include "core/hardware.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace fs = std::filesystem;

namespace cgroup_files {

// The v1 controllers hq uses; memory first: usage() reads it from dirs_[0].
const char* const kV1Controllers[] = {"memory", "cpuset", "pids", "freezer", "devices", "cpuacct"};

bool exists(const std::string& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// O_CREAT changes nothing on cgroupfs (control files exist or cannot be made) and lets
// tests use a plain directory as a fake hierarchy.
Status write_file(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot open " + path + ": " + std::strerror(errno));
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return io_error("cannot write '" + value + "' to " + path + ": " + std::strerror(err));
  return Status::ok();
}

Status make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status::ok();
  return io_error("cannot create " + path + ": " + std::strerror(errno));
}

int64_t read_int(const std::string& path) {
  auto v = parse_int(trim(read_small_file(path)), 0, INT64_MAX);
  return v ? *v : -1;
}

// "key value" lines (cpu.stat, memory.events, memory.oom_control): the value of `key`, or -1.
int64_t read_keyed(const std::string& path, std::string_view key) {
  std::string text = read_small_file(path);
  for (std::string_view line : split(text, '\n')) {
    auto f = split(trim(line), ' ');
    if (f.size() == 2 && f[0] == key) {
      auto v = parse_int(f[1], 0, INT64_MAX);
      return v ? *v : -1;
    }
  }
  return -1;
}

}  // namespace cgroup_files
using namespace cgroup_files;

std::string_view cgroup_mode_name(CgroupMode m) {
  switch (m) {
    case CgroupMode::kV1: return "v1";
    case CgroupMode::kV2: return "v2";
    case CgroupMode::kNone: break;
  }
  return "none";
}

Result<Cgroups> Cgroups::open(const std::string& root, const std::string& want, const std::string& node) {
  if (want != "auto" && want != "v1" && want != "v2" && want != "none")
    return invalid("cgroup mode must be auto, v1, v2 or none (got '" + want + "')");
  Cgroups c;
  c.root_ = root;
  c.node_ = node;
  if (want == "none") return c;
  std::string controllers = read_small_file(root + "/cgroup.controllers");
  bool v2 = controllers.find("memory") != std::string::npos;
  bool v1 = !v2 && exists(root + "/memory/cgroup.procs") && !exists(root + "/memory/cgroup.controllers");
  if (want == "v2" && !v2) return unavailable(root + " is not a cgroup v2 hierarchy with the memory controller");
  if (want == "v1" && !v1) return unavailable(root + " has no cgroup v1 memory controller");
  if (!v1 && !v2) return c;
  c.mode_ = v2 ? CgroupMode::kV2 : CgroupMode::kV1;
  if (v1)
    for (const char* ctl : kV1Controllers)
      if (exists(root + "/" + ctl + "/cgroup.procs")) c.v1_controllers_.push_back(ctl);
  if (Status s = c.prepare(); !s) {
    if (want != "auto") return s;
    c.mode_ = CgroupMode::kNone;  // e.g. a read-only hierarchy in a container
    c.v1_controllers_.clear();
  }
  if (c.mode_ == CgroupMode::kV2) c.device_filters_ = device_filters_work(c.bases().front());
  return c;
}

std::vector<std::string> Cgroups::bases() const {
  std::vector<std::string> out;
  if (mode_ == CgroupMode::kV2) out.push_back(root_ + "/hq/" + node_);
  if (mode_ == CgroupMode::kV1)
    for (const auto& ctl : v1_controllers_) out.push_back(root_ + "/" + ctl + "/hq/" + node_);
  return out;
}

// Creates hq/<node> in each hierarchy; v2 enables the controllers for the levels below,
// v1's cpuset copies its parent's CPUs and memory nodes (a cpuset starts empty).
Status Cgroups::prepare() {
  if (mode_ == CgroupMode::kV2) {
    for (const std::string& dir : {root_, root_ + "/hq", root_ + "/hq/" + node_}) {
      if (Status s = make_dir(dir); !s) return s;
      // All at once; one by one when some controller is not available here.
      if (!write_file(dir + "/cgroup.subtree_control", "+cpuset +memory +pids +cpu"))
        for (const char* ctl : {"+cpuset", "+memory", "+pids", "+cpu"}) (void)write_file(dir + "/cgroup.subtree_control", ctl);
    }
    std::string enabled = read_small_file(root_ + "/hq/" + node_ + "/cgroup.subtree_control");
    if (enabled.find("memory") == std::string::npos)
      return unavailable("cannot enable the memory controller under " + root_ + "/hq/" + node_);
    return Status::ok();
  }
  memsw_ = exists(root_ + "/memory/memory.memsw.limit_in_bytes");
  for (const auto& ctl : v1_controllers_) {
    std::string top = root_ + "/" + ctl;
    // The kernel balances load over every CPU when the root cpuset asks it to, whatever the
    // cpusets below say; but a change to the CPUs of a cpuset that asks too (the default),
    // or its removal, rebuilds the scheduler's domains (7 us a write on this 2-CPU VM, an
    // IPI to every CPU on a large host). hq's cpusets then ask not to, each job's and step's
    // as its parent (write_limits). Where the root does not balance (CPUs shielded or
    // partitioned since), they ask again, as the kernel's default, so that each job's CPUs
    // stay balanced among themselves.
    std::string root_balance(trim(read_small_file(top + "/cpuset.sched_load_balance")));
    for (const std::string& dir : {top + "/hq", top + "/hq/" + node_}) {
      if (Status s = make_dir(dir); !s) return s;
      if (ctl != "cpuset") continue;
      if (!root_balance.empty()) (void)write_file(dir + "/cpuset.sched_load_balance", root_balance == "1" ? "0" : "1");
      std::string parent = fs::path(dir).parent_path().string();
      for (const char* f : {"cpuset.cpus", "cpuset.mems"})
        if (trim(read_small_file(dir + "/" + f)).empty())
          if (Status s = write_file(dir + "/" + f, std::string(trim(read_small_file(parent + "/" + f)))); !s) return s;
    }
  }
  return Status::ok();
}

std::string Cgroups::describe() const {
  if (mode_ == CgroupMode::kNone) return "no cgroups (process groups only)";
  std::string out = "cgroup " + std::string(cgroup_mode_name(mode_)) + " under " + root_;
  if (mode_ == CgroupMode::kV1) {
    out += " (";
    for (size_t i = 0; i < v1_controllers_.size(); ++i) out += (i ? "," : "") + v1_controllers_[i];
    out += ")";
  }
  if (mode_ == CgroupMode::kV2) out += device_filters_ ? " (devices: BPF filters)" : " (devices not confined: no BPF device filters)";
  return out;
}

namespace cgroup_files {

// Writes `limits` into freshly made group directories `dirs` (v1: `controllers` names
// each one's controller). CPUs and memory nodes of a v1 cpuset come from its parent
// when not given (a v1 cpuset starts empty).
Status write_limits(CgroupMode mode, const std::vector<std::string>& dirs, const std::vector<std::string>& controllers,
                    const CgroupLimits& limits, bool device_filters) {
  std::string cpus = format_cpulist(limits.cpus);
  for (size_t i = 0; i < dirs.size(); ++i) {
    const std::string& d = dirs[i];
    std::string ctl = mode == CgroupMode::kV2 || i >= controllers.size() ? "" : controllers[i];
    auto want = [&](const char* name) { return mode == CgroupMode::kV2 || ctl == name; };
    Status s;
    if (want("cpuset")) {
      std::string parent = fs::path(d).parent_path().string();
      if (mode == CgroupMode::kV1 && trim(read_small_file(parent + "/cpuset.sched_load_balance")) == "0")
        (void)write_file(d + "/cpuset.sched_load_balance", "0");  // see Cgroups::prepare
      if (!cpus.empty()) s = write_file(d + "/cpuset.cpus", cpus);
      else if (mode == CgroupMode::kV1) s = write_file(d + "/cpuset.cpus", std::string(trim(read_small_file(parent + "/cpuset.cpus"))));
      if (s && mode == CgroupMode::kV1) s = write_file(d + "/cpuset.mems", std::string(trim(read_small_file(parent + "/cpuset.mems"))));
    }
    if (s && want("memory") && limits.mem_bytes > 0) {
      std::string bytes = std::to_string(limits.mem_bytes);
      if (mode == CgroupMode::kV2) {
        s = write_file(d + "/memory.max", bytes);
        if (s && exists(d + "/memory.swap.max")) s = write_file(d + "/memory.swap.max", "0");
      } else {
        s = write_file(d + "/memory.limit_in_bytes", bytes);
        if (s && exists(d + "/memory.memsw.limit_in_bytes")) s = write_file(d + "/memory.memsw.limit_in_bytes", bytes);
      }
    }
    if (s && want("pids") && limits.pids_max > 0 && exists(d + "/pids.max")) s = write_file(d + "/pids.max", std::to_string(limits.pids_max));
    if (s && ctl == "devices")
      for (const DeviceId& dev : limits.deny_devices)
        if (s) s = write_file(d + "/devices.deny", "c " + std::to_string(dev.major) + ":" + std::to_string(dev.minor) + " rwm");
    if (s && mode == CgroupMode::kV2 && device_filters) s = attach_device_filter(d, limits.deny_devices);
    if (!s) return s;
  }
  return Status::ok();
}

}  // namespace cgroup_files

namespace {

// v2: the controllers a job's step groups need, enabled in the job's group (before any
// process joins it); one by one when some is not available.
void enable_below(const std::string& dir) {
  if (!write_file(dir + "/cgroup.subtree_control", "+cpuset +memory +pids"))
    for (const char* ctl : {"+cpuset", "+memory", "+pids"}) (void)write_file(dir + "/cgroup.subtree_control", ctl);
}

constexpr char kBatchLeaf[] = "step_batch";

}  // namespace

void Cgroups::job_dirs(const std::string& leaf, const CgroupLimits& limits, std::vector<std::string>& dirs,
                       std::vector<std::string>& controllers) const {
  std::vector<std::string> all = bases();
  for (size_t i = 0; i < all.size(); ++i) {
    if (mode_ == CgroupMode::kV1 && v1_controllers_[i] == "devices" && !limits.devices_group) continue;
    dirs.push_back(all[i] + "/" + leaf);
    if (mode_ == CgroupMode::kV1) controllers.push_back(v1_controllers_[i]);
  }
}

GroupSettings Cgroups::settings_for(const CgroupLimits& limits) const {
  GroupSettings s{format_cpulist(limits.cpus), limits.mem_bytes, limits.pids_max};
  if (s.cpus.empty()) s.cpus = trim(read_small_file(root_ + "/cpuset/hq/" + node_ + "/cpuset.cpus"));  // as write_limits
  return s;
}

Result<JobCgroup> Cgroups::create(uint64_t job_id, const CgroupLimits& limits) {
  if (mode_ == CgroupMode::kNone) return JobCgroup{};
  std::vector<std::string> dirs, controllers;
  job_dirs("job_" + std::to_string(job_id), limits, dirs, controllers);
  JobCgroup group(mode_, dirs, controllers, device_filters_);
  if (exists(dirs.front())) {  // left over by an agent that died: nothing may stay in it
    group.kill_all();
    group.remove();
  }
  if (!take_spare(group, limits)) {
    auto made = make_fresh(job_id, std::move(group), limits);
    if (!made) return made;
    group = std::move(made).value();
  }
  if (mode_ == CgroupMode::kV1) group.keep_step_spares(memsw_);
  return group;
}

Result<JobCgroup> Cgroups::make_fresh(uint64_t job_id, JobCgroup group, const CgroupLimits& limits) const {
  const std::vector<std::string>& dirs = group.dirs();
  const std::vector<std::string>& controllers = group.controllers();
  auto fail = [&](const Status& s) -> Result<JobCgroup> {
    group.remove();
    return s.with_context("job " + std::to_string(job_id) + " cgroup");
  };
  for (const auto& d : dirs)
    if (Status s = make_dir(d); !s) return fail(s);
  if (Status s = write_limits(mode_, dirs, controllers, limits, device_filters_); !s) return fail(s);
  if (mode_ == CgroupMode::kV2) enable_below(dirs.front());
  if (mode_ == CgroupMode::kV1) group.set_settings(settings_for(limits));
  return group;
}

JobCgroup Cgroups::existing(uint64_t job_id) const {
  std::vector<std::string> dirs, controllers;
  std::vector<std::string> all = bases();
  for (size_t i = 0; i < all.size(); ++i)
    if (exists(all[i] + "/job_" + std::to_string(job_id))) {
      dirs.push_back(all[i] + "/job_" + std::to_string(job_id));
      if (mode_ == CgroupMode::kV1) controllers.push_back(v1_controllers_[i]);
    }
  return dirs.empty() ? JobCgroup{} : JobCgroup(mode_, dirs, controllers, device_filters_);
}

int Cgroups::sweep_stale(const std::set<uint64_t>& keep) const {
  int found = 0;
  std::set<std::string> leaves;
  for (uint64_t id : keep) leaves.insert("keep:job_" + std::to_string(id));
  for (const auto& base : bases()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
      std::string name = e.path().filename().string();
      if (e.is_directory() && (name.rfind("job_", 0) == 0 || name.rfind("spare_", 0) == 0)) leaves.insert(name);
    }
  }
  for (const auto& leaf : leaves) {
    if (leaf.rfind("keep:", 0) == 0 || leaves.count("keep:" + leaf)) continue;
    std::vector<std::string> dirs;
    for (const auto& base : bases())
      if (exists(base + "/" + leaf)) dirs.push_back(base + "/" + leaf);
    JobCgroup g(mode_, dirs);  // killing and removing need no controller names
    g.kill_all();
    g.remove();
    found += leaf.rfind("job_", 0) == 0;
  }
  return found;
}

void Cgroups::release() {
  for (const Spare& spare : spares_) remove_spare_dirs(spare.number);
  spares_.clear();
  for (const auto& base : bases()) ::rmdir(base.c_str());
}

std::vector<std::string> JobCgroup::procs_files() const {
  std::vector<std::string> out;
  for (const auto& d : dirs_) out.push_back(d + (mode_ == CgroupMode::kV1 ? "/tasks" : "/cgroup.procs"));
  return out;
}

bool join_cgroup_file(const std::string& file) { return join_cgroup_file(file.c_str()); }

bool join_cgroup_file(const char* file) {
  char text[24] = "0";
  size_t size = strlen(file);
  bool tasks = size >= 6 && memcmp(file + size - 6, "/tasks", 6) == 0;
  int len = tasks ? 1 : snprintf(text, sizeof text, "%d", static_cast<int>(getpid()));
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text, static_cast<size_t>(len)) == len;
  close(fd);
  return ok;
}

int open_v2_group_dir(const std::vector<std::string>& procs_files) {
  constexpr std::string_view kProcs = "/cgroup.procs";
  if (procs_files.size() != 1 || !procs_files[0].ends_with(kProcs)) return -1;
  std::string dir = procs_files[0].substr(0, procs_files[0].size() - kProcs.size());
  return open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

std::vector<std::string> JobCgroup::batch_procs_files() const {
  if (mode_ != CgroupMode::kV2 || dirs_.empty()) return procs_files();
  std::string leaf = dirs_.front() + "/" + kBatchLeaf;
  bool controlled = !trim(read_small_file(dirs_.front() + "/cgroup.subtree_control")).empty();
  if (!controlled || !make_dir(leaf)) return procs_files();
  return {leaf + "/cgroup.procs"};
}

bool JobCgroup::measures_memory() const {
  if (!active()) return false;
  if (mode_ == CgroupMode::kV1) return !controllers_.empty() && controllers_.front() == "memory";
  return ::access((dirs_.front() + "/memory.peak").c_str(), F_OK) == 0;
}

bool JobCgroup::confines_devices() const {
  if (mode_ == CgroupMode::kV2) return active() && device_filters_;
  return active() && mode_ == CgroupMode::kV1 &&
         std::find(controllers_.begin(), controllers_.end(), "devices") != controllers_.end();
}

bool JobCgroup::may_hold_processes() const {
  if (mode_ != CgroupMode::kV2 || dirs_.empty()) return true;
  return trim(read_small_file(dirs_.front() + "/cgroup.subtree_control")).empty();
}

Result<JobCgroup> JobCgroup::child(const std::string& name, const CgroupLimits& limits) const {
  if (!active()) return JobCgroup{};
  std::vector<std::string> dirs;
  for (const auto& d : dirs_) dirs.push_back(d + "/" + name);
  JobCgroup group(mode_, dirs, controllers_, device_filters_);
  group.step_spares_ = step_spares_;
  group.step_ = true;
  if (exists(dirs.front())) {  // a step id used before an agent restart
    group.kill_all();
    group.remove();
  }
  if (take_step_spare(group, limits)) return group;
  Status s;
  for (const auto& d : dirs)
    if (s) s = make_dir(d);
  if (s) s = write_limits(mode_, dirs, controllers_, limits, device_filters_);
  if (!s) {
    group.remove();
    return s.with_context(name + " cgroup");
  }
  if (mode_ == CgroupMode::kV1 && step_spares_) group.settings_ = step_settings(limits);
  return group;
}

// Every process in the group and in the groups below it. One hierarchy tells: every
// process hq starts joins the group in each (v1's memory one comes first).
std::vector<int> JobCgroup::pids() const {
  std::set<int> out;
  auto read = [&](const std::string& dir) {
    std::string text = read_small_file(dir + "/cgroup.procs");  // split() returns views into it
    for (std::string_view line : split(text, '\n'))
      if (auto v = parse_int(trim(line), 1, INT32_MAX)) out.insert(static_cast<int>(*v));
  };
  if (dirs_.empty()) return {};
  read(dirs_.front());
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dirs_.front(), ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_directory(ec)) read(it->path().string());
  return {out.begin(), out.end()};
}

// The group of v1's controller `name`, or "" (a group made without the controllers' names
// is searched for the file `probe`).
std::string JobCgroup::v1_dir(std::string_view name, const std::string& probe) const {
  if (controllers_.size() == dirs_.size()) {
    for (size_t i = 0; i < dirs_.size(); ++i)
      if (controllers_[i] == name) return dirs_[i];
    return "";
  }
  for (const auto& d : dirs_)
    if (exists(d + "/" + probe)) return d;
  return "";
}

// v2 says in one line whether any process is left in the group or below it; so does v1's
// pids controller (pids.current counts the groups below too); else v1 is asked by listing
// them (the group's processes and those of every group below).
bool JobCgroup::empty() const {
  if (mode_ == CgroupMode::kV2) {
    int64_t populated = read_keyed(dirs_.front() + "/cgroup.events", "populated");
    if (populated >= 0) return populated == 0;
  } else if (std::string d = v1_dir("pids", "pids.current"); !d.empty()) {
    if (read_int(d + "/pids.current") == 0) return true;  // else (a zombie counts there) listed
  }
  return pids().empty();
}

bool JobCgroup::kill_all(int wait_ms) const {
  if (!active()) return true;
  if (empty()) return true;  // the common case (a step's tasks were all reaped): no freezing
  std::string freezer;
  for (const auto& d : dirs_)
    if (exists(d + "/freezer.state")) freezer = d + "/freezer.state";
  // Frozen processes cannot fork while they are being killed; SIGKILL still lands on thaw.
  if (!freezer.empty()) (void)write_file(freezer, "FROZEN");
  if (mode_ == CgroupMode::kV2 && exists(dirs_.front() + "/cgroup.kill")) (void)write_file(dirs_.front() + "/cgroup.kill", "1");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (true) {
    auto left = pids();
    for (int pid : left) ::kill(pid, SIGKILL);
    if (!freezer.empty()) (void)write_file(freezer, "THAWED");
    if (left.empty()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

CgroupUsage JobCgroup::usage() const {
  CgroupUsage u;
  if (!active()) return u;
  const std::string& d = dirs_.front();
  if (mode_ == CgroupMode::kV2) {
    u.peak_mem_bytes = read_int(d + "/memory.peak");
    int64_t usec = read_keyed(d + "/cpu.stat", "usage_usec");
    u.cpu_time_usec = usec;
    u.oom_kills = std::max<int64_t>(0, read_keyed(d + "/memory.events", "oom_kill"));
    return u;
  }
  u.peak_mem_bytes = read_int(d + "/memory.max_usage_in_bytes");
  u.oom_kills = std::max<int64_t>(0, read_keyed(d + "/memory.oom_control", "oom_kill"));
  if (std::string dir = v1_dir("cpuacct", "cpuacct.usage"); !dir.empty()) {
    int64_t ns = read_int(dir + "/cpuacct.usage");
    u.cpu_time_usec = ns < 0 ? -1 : ns / 1000;
  }
  return u;
}

int64_t oom_kills_of(const std::string& procs_file) {
  std::string dir = fs::path(procs_file).parent_path().string();
  bool v1 = procs_file.ends_with("/tasks");  // v1's memory group has no memory.events
  int64_t n = v1 ? -1 : read_keyed(dir + "/memory.events", "oom_kill");
  if (n < 0) n = read_keyed(dir + "/memory.oom_control", "oom_kill");
  return std::max<int64_t>(0, n);
}

namespace cgroup_files {
void remove_dir(const std::string& d) {
  if (::rmdir(d.c_str()) == 0 || errno == ENOENT) return;  // the common case: no children
  std::error_code ec;
  std::vector<std::string> below;
  for (const auto& e : fs::directory_iterator(d, ec))
    if (e.is_directory(ec)) below.push_back(e.path().string());
  for (const auto& b : below) remove_dir(b);
  for (int attempt = 0; attempt < 50 && ::rmdir(d.c_str()) != 0 && errno == EBUSY; ++attempt)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}
}  // namespace cgroup_files

void JobCgroup::remove() const {
  for (const auto& d : dirs_) remove_dir(d);
}

}  // namespace hq::cmd
