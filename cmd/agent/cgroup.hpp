// Job confinement through Linux cgroups: one group per job under
// <root>/hq/<node>/job_<id> (cgroup v2), or under each v1 controller's mount
// (cpuset, memory, pids, devices, freezer, cpuacct), and one group per job step
// inside it (job_<id>/step_<s>; on v2 the batch script goes in job_<id>/step_batch,
// since v2 keeps processes out of a group whose children have controllers). It limits the job's CPUs
// (cpuset.cpus), memory (memory.max / memory.limit_in_bytes, swap included where the
// host accounts it), process count and device access to its own GPUs (v1's devices
// controller; on v2 a BPF device filter, cmd/agent/bpf_devices). At the
// end it kills every process in the group (daemonized ones too), reads peak memory,
// CPU time and OOM kills, and removes the group, or on v1 keeps it as a spare for the next
// job (cmd/agent/cgroup_spares.cpp). Without a usable hierarchy the mode is kNone and
// callers fall back to process groups.
// Used on the agent's event-loop thread only; the launched child joins its group by
// writing to the files named in JobCgroup::procs_files between fork and exec
// (join_cgroup_file), or on v2 is started inside it (cmd/agent/vfork_into.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/device_filter.hpp"
#include "core/status.hpp"

namespace hq::cmd {

enum class CgroupMode { kNone, kV1, kV2 };

std::string_view cgroup_mode_name(CgroupMode m);  // "none", "v1", "v2"

// Moves the calling process, single-threaded (a child between fork and exec), into the
// group of `file`, one of JobCgroup::procs_files: "0" into v1's `tasks` moves the calling
// thread, which recent kernels do without their threadgroup lock (this VM's 6.18 does), and so
// without the RCU grace period that taking it costs after an idle spell (5-12 ms on a v1
// host: the largest part of a short job's start); its pid into v2's `cgroup.procs`. Only
// syscalls: safe after fork in a threaded process. False when the write failed.
bool join_cgroup_file(const std::string& file);
bool join_cgroup_file(const char* file);  // the same, allocating nothing (a child without a heap)
// The directory of the one v2 group whose `cgroup.procs` is `procs_files` (a job's or a
// task's), open for clone3's CLONE_INTO_CGROUP (cmd/agent/vfork_into); -1 where they are
// not one such file (v1's `tasks` files: joined by join_cgroup_file without a lock).
int open_v2_group_dir(const std::vector<std::string>& procs_files);

struct CgroupLimits {
  std::vector<int32_t> cpus;          // empty: no cpuset
  int64_t mem_bytes = 0;              // 0: no memory limit
  int64_t pids_max = 0;               // 0: no limit
  std::vector<DeviceId> deny_devices; // other jobs' GPUs (where confines_devices())
  // v1: a group in the devices hierarchy too. A node without GPUs has nothing to deny, to
  // the job or to its steps: its jobs go without one (a mkdir, a join and an rmdir less).
  bool devices_group = true;
};

// The limits a v1 job group holds as written: a spare group (Cgroups::recycle) keeps
// them, and the next job given it writes its CPUs and only the other limits that differ.
struct GroupSettings {
  std::string cpus;       // cpuset.cpus as written
  int64_t mem_bytes = 0;  // memory.limit_in_bytes (and memsw's); 0: unlimited
  int64_t pids_max = 0;   // pids.max; 0: "max"
  bool operator==(const GroupSettings&) const = default;
};

// v1: a job's step groups kept for its next steps, emptied and renamed step_spare_<n> in
// each hierarchy but devices' (JobCgroup::child takes the last one kept, JobCgroup::release
// gives one back). A step's group then costs two renames per controller instead of a
// mkdir and an rmdir (15-65 us each, under the one lock every cgroup change takes), and
// keeps its cpuset's memory nodes and load balancing. Shared by the copies of a job's
// JobCgroup and its steps' groups (cmd/agent/cgroup_spares.cpp).
struct StepSpares {
  struct Spare {
    uint64_t number;
    GroupSettings settings;
  };
  std::vector<Spare> kept;  // last in, first out
  uint64_t next = 0;
  bool memsw = false;  // the memory controller limits swap too
};

// What a job used, read before its group is removed.
struct CgroupUsage {
  int64_t peak_mem_bytes = -1;        // -1: unknown
  int64_t cpu_time_usec = -1;
  int64_t oom_kills = 0;
};

class JobCgroup {
 public:
  JobCgroup() = default;
  // `controllers`: v1's controller of each of `dirs` (same order); empty on v2.
  // `device_filters`: v2 confines devices with BPF filters (device_filters_work).
  JobCgroup(CgroupMode mode, std::vector<std::string> dirs, std::vector<std::string> controllers = {},
            bool device_filters = false)
      : mode_(mode), dirs_(std::move(dirs)), controllers_(std::move(controllers)), device_filters_(device_filters) {}
  bool active() const { return mode_ != CgroupMode::kNone && !dirs_.empty(); }
  // Whether CgroupLimits::deny_devices takes effect here: v1 with its devices controller,
  // v2 where the kernel takes BPF device filters (else hq leaves devices open there).
  bool confines_devices() const;
  // Whether usage() gives the job's peak memory (a memory controller in its groups).
  bool measures_memory() const;
  // The files a freshly forked (single-threaded) process writes to in order to join: v1's
  // `tasks` of every controller's group, v2's `cgroup.procs` (join_cgroup_file).
  std::vector<std::string> procs_files() const;
  // Where the batch script joins: the group itself on v1, its step_batch child on v2
  // (made here when missing; a job adopted from an agent before step groups has none
  // and keeps its script in the job's group).
  std::vector<std::string> batch_procs_files() const;
  // Whether processes may join this group itself: always on v1; on v2 only while no
  // controller is enabled for its children.
  bool may_hold_processes() const;
  // A child group given no CPUs runs on this group's (v2: an empty cpuset.cpus means the
  // parent's); v1 cpusets start empty and must be given theirs.
  bool inherits_cpus() const { return mode_ == CgroupMode::kV2; }
  // A child group `name` (a job step's) with its own limits: CPUs (empty: the parent's),
  // memory (0: the parent's), devices denied. An error leaves nothing behind; on v2 it
  // needs the controllers enabled below this group (Cgroups::create does that).
  Result<JobCgroup> child(const std::string& name, const CgroupLimits& limits) const;
  // SIGKILL to every process in the group and its children until they are empty
  // (bounded wait); true when empty.
  bool kill_all(int wait_ms = 2000) const;
  CgroupUsage usage() const;
  // Removes the (empty) group directories, children first.
  void remove() const;
  // A step's group (made by child) at the step's end, once `emptied` (kill_all said so):
  // on v1 kept as a spare for the job's next step where it is clean (no group below it,
  // no process left or awaiting its reaping, no OOM kill counted, at most 1 MiB still
  // charged), else removed.
  void release(bool emptied, int64_t oom_kills) const;
  // v1: this job's steps keep their groups for the next ones (Cgroups::create).
  void keep_step_spares(bool memsw) { step_spares_ = std::make_shared<StepSpares>(StepSpares{{}, 0, memsw}); }
  // Removes the step groups kept for this job (its end: Cgroups::recycle).
  void drop_step_spares() const;
  size_t step_spare_count() const { return step_spares_ ? step_spares_->kept.size() : 0; }
  const std::vector<std::string>& dirs() const { return dirs_; }
  const std::vector<std::string>& controllers() const { return controllers_; }
  // v1 groups Cgroups::create and child made: what they were given (none for adopted
  // groups: those are never kept as spares).
  const std::optional<GroupSettings>& settings() const { return settings_; }
  void set_settings(GroupSettings s) { settings_ = std::move(s); }

 private:
  std::vector<int> pids() const;
  bool empty() const;  // no process in the group or below it
  std::string v1_dir(std::string_view name, const std::string& probe) const;  // v1: a controller's group
  // Step spares (cmd/agent/cgroup_spares.cpp): `group`, a step's (its directories not
  // there yet), made of the last spare kept; false, with nothing of that spare left, when
  // there is none or it did not take. keep_step_spare: this step group renamed to a spare.
  bool take_step_spare(JobCgroup& group, const CgroupLimits& limits) const;
  bool keep_step_spare(int64_t oom_kills) const;
  GroupSettings step_settings(const CgroupLimits& limits) const;  // what a v1 step group is given
  CgroupMode mode_ = CgroupMode::kNone;
  std::vector<std::string> dirs_;  // v2: one; v1: one per controller (memory first)
  std::vector<std::string> controllers_;
  bool device_filters_ = false;
  std::optional<GroupSettings> settings_;
  std::shared_ptr<StepSpares> step_spares_;  // v1 jobs made by Cgroups::create, and their steps
  bool step_ = false;                        // made by child()
};

// The OOM kills counted so far in the group that `procs_file` belongs to (one of
// JobCgroup::procs_files: v2's cgroup.procs, or v1's memory controller's `tasks`, which
// comes first: v1's memory.oom_control is read for a `tasks` file, memory.events else,
// then memory.oom_control); 0 when the group counts none or the count cannot be read.
int64_t oom_kills_of(const std::string& procs_file);

class Cgroups {
 public:
  // Looks at `root` (normally /sys/fs/cgroup): pure v2 when it is a cgroup2 mount with
  // controllers, else v1 when a memory controller is mounted under it, else none.
  // `want` "auto", "v1", "v2" or "none"; `node` names this agent's subtree.
  static Result<Cgroups> open(const std::string& root, const std::string& want, const std::string& node);

  CgroupMode mode() const { return mode_; }
  // Creates the job's group with its limits; an error leaves nothing behind. On v1 a
  // spare group (recycle) is taken first where there is one: renamed to the job's, its
  // CPU time and memory peak counters reset, its CPUs and the other limits that differ written.
  Result<JobCgroup> create(uint64_t job_id, const CgroupLimits& limits);
  // The end of a job's group, once its processes are gone (`emptied`: kill_all said so).
  // On v1 it becomes a spare for a later job (its directories renamed spare_<n>), which
  // saves the kernel making and tearing down each controller's group (a mkdir and an
  // rmdir cost 15-65 us each here, under the one lock every cgroup change takes); it is
  // removed instead when it cannot be reused cleanly: not emptied (or a killed process not
  // yet reaped), an OOM kill counted (v1 cannot reset that count), a step's group still
  // below it, more than 1 MiB still charged to it, swap included (the last job's page
  // cache or shared memory: the next job's peak and limit would count it), or enough
  // spares kept already. Elsewhere (v2 cannot rename a group) it is removed.
  void recycle(const JobCgroup& group, bool emptied, int64_t oom_kills);
  // Groups of jobs a previous agent left (it was killed): their processes are killed
  // and the groups removed, and its spare groups with them. Returns how many jobs' groups
  // were found.
  int sweep_stale(const std::set<uint64_t>& keep = {}) const;
  // The group a job already has (an adopted job's), with the directories that exist.
  JobCgroup existing(uint64_t job_id) const;
  // Removes this agent's (empty) directories, spares first: a stopping agent leaves
  // nothing behind.
  void release();
  size_t spare_count() const { return spares_.size(); }
  std::string describe() const;

 private:
  struct Spare {
    uint64_t number;  // its directories are spare_<number> in each hierarchy but devices'
    GroupSettings settings;
  };
  Status prepare();
  std::vector<std::string> bases() const;  // this node's directory under each hierarchy
  // The directories `leaf` names (a job's) in each hierarchy the limits need, with their v1 controllers.
  void job_dirs(const std::string& leaf, const CgroupLimits& limits, std::vector<std::string>& dirs,
                std::vector<std::string>& controllers) const;
  // `group` (its directories not there yet) made and given `limits`.
  Result<JobCgroup> make_fresh(uint64_t job_id, JobCgroup group, const CgroupLimits& limits) const;
  // `group` made of a spare (renamed, counters reset, limits updated); false, with nothing
  // of the spare left, when there is none or it did not take.
  bool take_spare(JobCgroup& group, const CgroupLimits& limits);
  bool keep_as_spare(const JobCgroup& group);
  void remove_spare_dirs(uint64_t number) const;  // spare_<number> in every hierarchy, where there
  GroupSettings settings_for(const CgroupLimits& limits) const;
  CgroupMode mode_ = CgroupMode::kNone;
  std::string root_, node_;
  std::vector<std::string> v1_controllers_;  // mounted ones among those hq uses
  bool device_filters_ = false;              // v2: BPF device filters work here
  bool memsw_ = false;                       // v1: the memory controller limits swap too
  std::vector<Spare> spares_;                // v1: groups kept for the next jobs (last in, first out)
  uint64_t next_spare_ = 0;
};

}  // namespace hq::cmd
