// Spare job groups on cgroup v1 (Cgroups::recycle and create's first choice): a finished
// job's groups renamed spare_<n> under the node's directory of each hierarchy, and given
// to a later job by renaming them to its name. A rename costs the kernel 3-6 us where
// making a group and tearing it down cost 15-65 us per controller, all under the one
// mutex every cgroup change takes (the shims joining their groups wait on it too).
// A spare is clean: no process (not even one awaiting its reaping), no group below it, no
// OOM kill counted, at most 1 MiB still charged (swap included); the job that takes it
// starts its CPU time and memory peak from there, its CPUs and limits written again.
// The devices group (nodes with GPUs) is always made fresh: its rules only add up.
// A job's steps keep theirs the same way below the job's group (StepSpares: step_spare_<n>,
// JobCgroup::child and release), until the job ends (Cgroups::recycle drops them first).
// Agent event-loop thread only, as the rest of the cgroup layer.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "cmd/agent/cgroup.hpp"
#include "cmd/agent/cgroup_files.hpp"
#include "cmd/paths.hpp"
#include "core/hardware.hpp"
#include "core/units.hpp"

namespace hq::cmd {
using namespace cgroup_files;

namespace {

constexpr size_t kMaxSpares = 64;            // as many as jobs run here at once, mostly
constexpr int64_t kMaxSpareCharge = 1 << 20;  // the kernel's charge batches leave 0.2-0.5 MiB
constexpr size_t kMaxStepSpares = 8;          // a job's steps that end at once, mostly
constexpr char kStepSpare[] = "/step_spare_";

std::string parent_of(const std::string& dir) { return dir.substr(0, dir.rfind('/')); }

std::string spare_dir(const std::string& job_dir, uint64_t number) {
  return parent_of(job_dir) + "/spare_" + std::to_string(number);
}

std::string step_spare_dir(const std::string& step_dir, uint64_t number) {
  return parent_of(step_dir) + kStepSpare + std::to_string(number);
}

// A spare's memory group as the next job wants it: its peak from now, the limits that
// differ, memsw's never below the plain one (raised first, lowered last). -1: unlimited.
Status update_memory(const std::string& dir, int64_t had, int64_t want, bool memsw) {
  Status s = write_file(dir + "/memory.max_usage_in_bytes", "0");  // resets to what is charged now
  if (s && memsw) s = write_file(dir + "/memory.memsw.max_usage_in_bytes", "0");
  if (!s || had == want) return s;
  std::string text = want > 0 ? std::to_string(want) : "-1";
  bool raising = want <= 0 || (had > 0 && want > had);
  if (memsw && raising) s = write_file(dir + "/memory.memsw.limit_in_bytes", text);
  if (s) s = write_file(dir + "/memory.limit_in_bytes", text);
  if (s && memsw && !raising) s = write_file(dir + "/memory.memsw.limit_in_bytes", text);
  return s;
}

// One controller's spare group given `want` where it held `had`.
Status update_spare(const std::string& dir, std::string_view ctl, const GroupSettings& had, const GroupSettings& want,
                    bool memsw) {
  if (ctl == "memory") return update_memory(dir, had.mem_bytes, want.mem_bytes, memsw);
  // Always written: a CPU taken offline leaves every cpuset that had it, and is not given
  // back when it returns (without rebuilding the scheduler's domains, see prepare: 2 us).
  if (ctl == "cpuset") return write_file(dir + "/cpuset.cpus", want.cpus);
  if (ctl == "pids" && had.pids_max != want.pids_max)
    return write_file(dir + "/pids.max", want.pids_max > 0 ? std::to_string(want.pids_max) : "max");
  if (ctl == "cpuacct") return write_file(dir + "/cpuacct.usage", "0");
  return Status::ok();
}

// Whether `dir` has no group below it (kernfs counts a directory's subdirectories in its
// link count, as ext4 and tmpfs do for the plain directories of tests).
bool has_no_children(const std::string& dir) {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && st.st_nlink == 2;
}

// Whether an emptied v1 group (`dirs`, memory's first) may be kept as a spare: no group
// below it, at most kMaxSpareCharge still charged to it, no process awaiting its reaping.
bool clean_to_keep(const std::vector<std::string>& dirs, const std::vector<std::string>& controllers, bool memsw) {
  if (dirs.empty() || controllers.size() != dirs.size() || controllers.front() != "memory") return false;
  for (const auto& d : dirs)
    if (!has_no_children(d)) return false;
  // Swapped out, what stays charged (a file in tmpfs, shared memory nobody removed)
  // counts only in memsw's usage.
  int64_t charged = read_int(dirs.front() + "/memory.usage_in_bytes");
  if (charged < 0 || charged > kMaxSpareCharge) return false;
  if (memsw && read_int(dirs.front() + "/memory.memsw.usage_in_bytes") > kMaxSpareCharge) return false;
  // A process killed but not yet reaped (the agent reaps what its jobs orphaned) still
  // counts against pids.max, though no longer listed in the group.
  for (size_t i = 0; i < dirs.size(); ++i)
    if (controllers[i] == "pids" && read_int(dirs[i] + "/pids.current") > 0) return false;
  return true;
}

// An emptied group's directories renamed to their spare names (`spare_of` each), but
// devices' (removed); false when a rename failed: the rest removed, the renamed ones left
// for the caller to remove.
template <typename SpareOf>
bool renamed_to_spare(const std::vector<std::string>& dirs, const std::vector<std::string>& controllers,
                      const SpareOf& spare_of) {
  bool renamed = true;
  for (size_t i = 0; i < dirs.size(); ++i) {
    if (controllers[i] == "devices" || !renamed) {
      remove_dir(dirs[i]);
      continue;
    }
    renamed = ::rename(dirs[i].c_str(), spare_of(dirs[i]).c_str()) == 0;
    if (!renamed) remove_dir(dirs[i]);
  }
  return renamed;
}

}  // namespace

bool Cgroups::take_spare(JobCgroup& group, const CgroupLimits& limits) {
  if (mode_ != CgroupMode::kV1 || spares_.empty()) return false;
  Spare spare = spares_.back();
  spares_.pop_back();
  const std::vector<std::string>& dirs = group.dirs();
  const std::vector<std::string>& controllers = group.controllers();
  GroupSettings want = settings_for(limits);
  Status s;
  for (size_t i = 0; i < dirs.size() && s; ++i) {
    if (controllers[i] == "devices") {
      s = make_dir(dirs[i]);
      if (s) s = write_limits(mode_, {dirs[i]}, {controllers[i]}, limits, device_filters_);
      continue;
    }
    std::string from = spare_dir(dirs[i], spare.number);
    if (::rename(from.c_str(), dirs[i].c_str()) != 0) {
      s = io_error("cannot rename " + from + " to " + dirs[i] + ": " + std::strerror(errno));
      break;
    }
    s = update_spare(dirs[i], controllers[i], spare.settings, want, memsw_);
  }
  if (!s) {  // a fresh group instead; nothing of this spare stays
    group.remove();
    remove_spare_dirs(spare.number);
    return false;
  }
  group.set_settings(std::move(want));
  return true;
}

bool Cgroups::keep_as_spare(const JobCgroup& group) {
  const auto& dirs = group.dirs();
  const auto& controllers = group.controllers();
  if (spares_.size() >= kMaxSpares || controllers.size() != dirs.size() || dirs.empty() || !group.settings())
    return false;
  if (!clean_to_keep(dirs, controllers, memsw_)) return false;
  uint64_t number = next_spare_++;
  if (renamed_to_spare(dirs, controllers, [&](const std::string& d) { return spare_dir(d, number); })) {
    spares_.push_back(Spare{number, *group.settings()});
  } else {  // half renamed: none of it is kept
    remove_spare_dirs(number);
  }
  return true;
}

void Cgroups::remove_spare_dirs(uint64_t number) const {
  for (const auto& base : bases()) ::rmdir((base + "/spare_" + std::to_string(number)).c_str());
}

void Cgroups::recycle(const JobCgroup& group, bool emptied, int64_t oom_kills) {
  if (!group.active()) return;
  group.drop_step_spares();
  if (mode_ == CgroupMode::kV1 && emptied && oom_kills == 0 && keep_as_spare(group)) return;
  group.remove();
}

GroupSettings JobCgroup::step_settings(const CgroupLimits& limits) const {
  GroupSettings s{format_cpulist(limits.cpus), limits.mem_bytes, limits.pids_max};
  if (s.cpus.empty())  // the job's own, as write_limits gives a step group without CPUs of its own
    if (std::string d = v1_dir("cpuset", "cpuset.cpus"); !d.empty()) s.cpus = std::string(trim(read_small_file(d + "/cpuset.cpus")));
  return s;
}

bool JobCgroup::take_step_spare(JobCgroup& group, const CgroupLimits& limits) const {
  if (mode_ != CgroupMode::kV1 || !step_spares_ || step_spares_->kept.empty() || controllers_.size() != dirs_.size())
    return false;
  StepSpares::Spare spare = step_spares_->kept.back();
  step_spares_->kept.pop_back();
  GroupSettings want = step_settings(limits);
  Status s;
  for (size_t i = 0; i < group.dirs_.size() && s; ++i) {
    const std::string& d = group.dirs_[i];
    if (controllers_[i] == "devices") {  // its rules only add up: made afresh
      s = make_dir(d);
      if (s) s = write_limits(mode_, {d}, {controllers_[i]}, limits, device_filters_);
      continue;
    }
    std::string from = step_spare_dir(d, spare.number);
    if (::rename(from.c_str(), d.c_str()) != 0) {
      s = io_error("cannot rename " + from + " to " + d + ": " + std::strerror(errno));
      break;
    }
    s = update_spare(d, controllers_[i], spare.settings, want, step_spares_->memsw);
  }
  if (!s) {  // a fresh group instead; nothing of this spare stays
    group.remove();
    for (const auto& d : group.dirs_) ::rmdir(step_spare_dir(d, spare.number).c_str());
    return false;
  }
  group.settings_ = std::move(want);
  return true;
}

bool JobCgroup::keep_step_spare(int64_t oom_kills) const {
  if (mode_ != CgroupMode::kV1 || !step_ || !step_spares_ || !settings_ || oom_kills > 0 ||
      step_spares_->kept.size() >= kMaxStepSpares || !clean_to_keep(dirs_, controllers_, step_spares_->memsw))
    return false;
  uint64_t number = step_spares_->next++;
  if (renamed_to_spare(dirs_, controllers_, [&](const std::string& d) { return step_spare_dir(d, number); })) {
    step_spares_->kept.push_back(StepSpares::Spare{number, *settings_});
  } else {  // half renamed: none of it is kept
    for (const auto& d : dirs_) ::rmdir(step_spare_dir(d, number).c_str());
  }
  return true;
}

void JobCgroup::release(bool emptied, int64_t oom_kills) const {
  if (!active()) return;
  if (emptied && keep_step_spare(oom_kills)) return;
  remove();
}

void JobCgroup::drop_step_spares() const {
  if (!step_spares_ || step_) return;
  for (const StepSpares::Spare& spare : step_spares_->kept)
    for (const auto& d : dirs_) ::rmdir((d + kStepSpare + std::to_string(spare.number)).c_str());
  step_spares_->kept.clear();
}

}  // namespace hq::cmd
