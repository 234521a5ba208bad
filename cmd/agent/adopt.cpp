// Restart survival: each launch leaves a record in the job's spool directory (the shim's
// and script's pids, the shim's start time, the job's CPUs on a line, then the LaunchJob),
// written before the script may start. An agent that starts reads them: a job whose shim still
// runs is adopted (signals go to its process group, its end is seen through a pidfd on the
// shim, its status read from the file the shim writes); a job that ended meanwhile is
// reported with that status; a job with neither (the host rebooted) is dropped here, and
// the controller requeues it. An end the controller has not acknowledged is kept there too
// (ended_file) until it has, so no restart loses it.
// These records are written whole (a new file renamed over the old) but not fsynced: they
// are for a restart of the agent, which the page cache survives; a host that loses power
// loses the job's processes with them, and the controller requeues its jobs as above. Four
// fsyncs less per job were a third of what a short job cost its agent.
// Agent event-loop thread only.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd/agent/agent.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/hardware.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// Field 22 of /proc/PID/stat (start time in clock ticks): a pid with another start time is
// another process. 0 when the process is gone, or has ended and waits to be reaped.
uint64_t start_time_of(pid_t pid) {
  auto fields = proc_stat(pid);
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") return 0;
  auto v = parse_int(fields[19], 0, INT64_MAX);  // field 22 counted from the state (field 3)
  return v ? static_cast<uint64_t>(*v) : 0;
}

// The wait status assumed when an adopted job's shim left no exit file: killed (SIGKILL).
constexpr int kLostStatus = SIGKILL;

struct Record {
  pb::LaunchJob launch;
  pid_t shim = 0, script = 0;
  uint64_t shim_start = 0;
  std::vector<int32_t> cpus;
};

Result<Record> read_record(const std::string& dir, const std::string& pids_path) {
  Record r;
  // The pid line, then the LaunchJob (one file, one inode a job); an agent before that kept
  // the LaunchJob in a file of its own, "launch".
  std::string text = read_small_file(pids_path);
  size_t line_end = text.find('\n');
  bool one_file = line_end != std::string::npos && line_end + 1 < text.size();
  std::string launch = one_file ? text.substr(line_end + 1) : read_small_file(dir + "/launch");
  if (one_file) text.resize(line_end);
  if (!r.launch.ParseFromString(launch)) return invalid("unreadable launch record");
  for (std::string_view kv : split(text, ' ')) {  // views into `text`
    kv = trim(kv);
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (key == "cpus") {
      if (auto c = parse_cpulist(value)) r.cpus = *c;
      continue;
    }
    auto n = parse_int(value, 0, INT64_MAX);
    if (!n) return invalid("bad pid record '" + std::string(kv) + "'");
    if (key == "shim") r.shim = static_cast<pid_t>(*n);
    else if (key == "script") r.script = static_cast<pid_t>(*n);
    else if (key == "start") r.shim_start = static_cast<uint64_t>(*n);
  }
  if (r.shim <= 0 || r.script <= 0) return invalid("incomplete pid record '" + std::string(trim(text)) + "'");
  return r;
}

}  // namespace

std::set<uint64_t> Agent::running_ids() const {
  std::set<uint64_t> ids;
  for (const auto& [id, rj] : running_) ids.insert(id);
  return ids;
}

Status Agent::write_record(uint64_t id, const pb::LaunchJob& l, const LaunchedJob& pids, const std::vector<int32_t>& cpus) {
  std::string text = "shim=" + std::to_string(pids.shim) + " script=" + std::to_string(pids.script) +
                     " start=" + std::to_string(start_time_of(pids.shim)) + " cpus=" + format_cpulist(cpus) + "\n";
  Status s = replace_spool_file(pids_file(opts_.spool_dir, id), text + l.SerializeAsString(), 0600);
  if (!s) return io_error("no restart record (" + s.message() + ")");
  return s;
}

// An end this agent reported and the controller had not acknowledged when it stopped:
// kept in the job's spool (ended_file) and reported again at registration. -1: none.
int32_t Agent::restore_end(uint64_t job_id) {
  std::string bytes = read_small_file(ended_file(opts_.spool_dir, job_id));
  pb::JobEnded ended;
  if (bytes.empty() || !ended.ParseFromString(bytes) || ended.job_id() != job_id) return -1;
  int32_t run = ended.restart_count();
  unacked_[job_id] = std::move(ended);
  return run;
}

void Agent::adopt_running() {
  // A directory for each job the node can run at once (one a CPU; at least 16: the
  // controller's view of the node may hold more CPUs than the host has), up to the bound.
  prepare_kept_dirs(opts_.spool_dir, static_cast<size_t>(std::max(host_.cpus, 16)));
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(opts_.spool_dir, ec)) {
    std::string name = entry.path().filename().string();
    auto id = name.rfind("job", 0) == 0 ? parse_int(std::string_view(name).substr(3), 1, INT64_MAX) : Result<int64_t>(invalid(""));
    if (!id || !entry.is_directory()) continue;
    uint64_t job_id = static_cast<uint64_t>(*id);
    int32_t ended_run = restore_end(job_id);
    if (ended_run >= 0) log::info("job " + std::to_string(job_id) + ": its end (run " + std::to_string(ended_run) + ") is reported again");
    adopt_run(job_id, ended_run);
  }
}

// The job's run recorded in its spool, if it is newer than `ended_run` (an end kept for the
// controller): adopted while its shim runs, reported when it ended meanwhile. A spool with no
// complete record never started its script (the shim waits for the record) and is dropped.
void Agent::adopt_run(uint64_t job_id, int32_t ended_run) {
  std::string dir = job_dir(opts_.spool_dir, job_id);
  auto drop = [&] { ended_run >= 0 ? clear_run(opts_.spool_dir, job_id) : cleanup_spool(opts_.spool_dir, job_id); };
  auto discard = [&] {  // whatever of the run is left in its cgroup, then its files
    JobCgroup group = cgroups_.existing(job_id);
    group.kill_all();
    group.remove();
    drop();
  };
  auto record = read_record(dir, pids_file(opts_.spool_dir, job_id));
  auto job = record ? net::from_pb(record->launch.job()) : Result<Job>(record.status());
  if (!job) {
    if (ended_run < 0) log::warn("spool " + dir + ": " + job.status().message() + "; removed");
    return discard();
  }
  if (job->restart_count <= ended_run) return drop();  // the run whose end is kept
  bool alive = record->shim_start != 0 && start_time_of(record->shim) == record->shim_start;
  bool ended = !read_small_file(exit_file(opts_.spool_dir, job_id)).empty();
  if (!alive && !ended) {  // gone without a trace (a reboot): the controller requeues it
    log::warn("job " + std::to_string(job_id) + " is gone (its shim " + std::to_string(record->shim) + " is not running)");
    return discard();
  }
  RunningJob& rj = running_[job_id];
  rj.job = std::move(job).value();
  rj.pid = record->script;
  rj.shim = record->shim;
  rj.cpus = record->cpus;
  rj.peers.assign(record->launch.peers().begin(), record->launch.peers().end());
  rj.topo = topology_addr(record->launch);
  rj.adopted = true;
  rj.cgroup = cgroups_.existing(job_id);
  rj.gpus_renumbered = rj.cgroup.confines_devices() && !job_limits(rj.job, rj.cpus).deny_devices.empty();
  if (!alive) {
    log::info("job " + std::to_string(job_id) + " ended while no agent ran; reporting it");
    return finish(job_id, kLostStatus, nullptr);  // the status comes from the shim's exit file
  }
  log::info("job " + std::to_string(job_id) + " adopted (script pid " + std::to_string(rj.pid) + ")");
  arm_limits(job_id);
  watch_adopted(job_id);
}

// The shim of an adopted job is not our child: its end shows as its pidfd turning
// readable (Linux 5.3+); without pidfds, a one-second poll.
void Agent::watch_adopted(uint64_t id) {
  RunningJob& rj = running_.at(id);
  int fd = static_cast<int>(syscall(SYS_pidfd_open, rj.shim, 0));
  auto ended = [this, id](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    auto it = running_.find(id);
    if (it == running_.end()) return;
    if (ec && kill(it->second.shim, 0) == 0) return watch_adopted(id);  // a poll: still running
    finish(id, kLostStatus, nullptr);  // the shim's exit file, when it wrote one, says how
  };
  if (fd >= 0) {
    rj.exit_watch = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
    rj.exit_watch->async_wait(asio::posix::stream_descriptor::wait_read, ended);
    return;
  }
  rj.poll_timer = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(1));
  rj.poll_timer->async_wait([ended](const asio::error_code& ec) { ended(ec ? ec : asio::error::try_again); });
}

}  // namespace hq::cmd
