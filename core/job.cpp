#include "core/job.hpp"

#include <array>
#include <utility>

#include "core/cpu_bind.hpp"
#include "core/hostlist.hpp"

namespace hq {
namespace {
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kNames{{
    {"PENDING", "PD"}, {"RUNNING", "R"}, {"COMPLETED", "CD"}, {"CANCELLED", "CA"},
    {"FAILED", "F"}, {"TIMEOUT", "TO"}, {"NODE_FAIL", "NF"}, {"OUT_OF_MEMORY", "OOM"},
    {"PREEMPTED", "PR"}, {"DEADLINE", "DL"},
}};
}  // namespace

std::string_view job_state_name(JobState s) { return kNames[static_cast<size_t>(s)].first; }
std::string_view job_state_code(JobState s) { return kNames[static_cast<size_t>(s)].second; }

bool parse_job_state(std::string_view name, JobState& out) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i].first == name || kNames[i].second == name) {
      out = static_cast<JobState>(i);
      return true;
    }
  }
  return false;
}

bool is_preemption(StopIntent intent) {
  return intent == StopIntent::kPreemptRequeue || intent == StopIntent::kPreemptCancel;
}

std::string display_id(const Job& job) {
  if (job.array_job_id == 0) return std::to_string(job.id.value);
  return std::to_string(job.array_job_id) + "_" + std::to_string(job.array_task_id);
}

Duration run_time(const Job& job, Time now) {
  if (job.start_time == 0) return 0;
  Time until = is_terminal(job.state) ? job.end_time : now;
  Duration suspended = job.suspended_secs + (job.suspended ? std::max<Duration>(0, until - job.suspend_time) : 0);
  return std::max<Duration>(0, until - job.start_time - suspended);
}

bool is_terminal(JobState s) { return s != JobState::kPending && s != JobState::kRunning; }

bool misses_deadline(const Job& job, Time now) {
  Time deadline = job.spec.extra->deadline;
  if (deadline <= 0) return false;
  if (job.spec.extra->time_min > 0) return now + job.spec.extra->time_min > deadline;  // Slurm's deadline_ok
  if (job.time_limit == kUnlimited || job.time_limit < 0) return now > deadline;
  return now + job.time_limit > deadline;
}

Duration deadline_cap(const Job& job, Time now) {
  Time deadline = job.spec.extra->deadline;
  if (deadline <= 0 || job.spec.extra->time_min <= 0) return 0;
  if (job.time_limit != kUnlimited && job.time_limit >= 0 && now + job.time_limit <= deadline) return 0;
  return std::max<Duration>(1, deadline - now);
}

namespace {

Status validate_gpu_request(const JobSpec& s) {
  auto in = [](int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; };
  if (!in(s.gpus, 0, 1 << 20) || !in(s.gpus_per_node, 0, 255) || !in(s.gpus_per_task, 0, 255))
    return invalid("GPU counts must be 0-255 per node or task (and at most 1048576 in all)");
  if ((s.gpus > 0) + (s.gpus_per_node > 0) + (s.gpus_per_task > 0) > 1)
    return invalid("give one of --gpus, --gpus-per-node (--gres) and --gpus-per-task");
  if (int64_t{s.gpus_per_task} * s.ntasks > (1 << 20)) return invalid("gpus-per-task x ntasks is too large");
  if (!in(s.cpus_per_gpu, 0, 1 << 20) || !in(s.mem_per_gpu_mib, 0, int64_t{1} << 40))
    return invalid("--cpus-per-gpu and --mem-per-gpu must be between 0 and their limits");
  if (auto bind = parse_cpu_bind(s.cpu_bind); !bind) return bind.status();
  if (s.gpu_type.size() > 128 || s.gpu_type.find_first_of(":,= \t\n") != std::string::npos)
    return invalid("bad GPU type name '" + s.gpu_type + "'");
  bool gpus = s.gpus > 0 || s.gpus_per_node > 0 || s.gpus_per_task > 0;
  if (!gpus && (!s.gpu_type.empty() || s.cpus_per_gpu > 0 || s.mem_per_gpu_mib > 0))
    return invalid("a GPU type, --cpus-per-gpu or --mem-per-gpu needs a GPU count (--gpus, --gres=gpu:N, ...)");
  if (s.mem_per_gpu_mib > 0 && (s.mem_per_node_mib > 0 || s.mem_per_cpu_mib > 0))
    return invalid("--mem, --mem-per-cpu and --mem-per-gpu are mutually exclusive");
  return Status::ok();
}

}  // namespace

Status validate_spec(const JobSpec& s) {
  constexpr int64_t kMaxCount = 1 << 20, kMaxCpusPerNode = 1 << 20, kMaxMemMib = int64_t{1} << 40;
  auto in = [](int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; };
  if (!in(s.nodes_min, 1, 65536) || !in(s.nodes_max, 0, 65536) || (s.nodes_max && s.nodes_max < s.nodes_min))
    return invalid("node count must be 1-65536 (and max >= min)");
  if (!in(s.ntasks, 1, kMaxCount) || !in(s.ntasks_per_node, 0, kMaxCount) || !in(s.cpus_per_task, 1, kMaxCpusPerNode))
    return invalid("task and CPU counts must be between 1 and " + std::to_string(kMaxCount));
  if (int64_t{s.ntasks} * s.cpus_per_task > kMaxCount * 64)
    return invalid("ntasks x cpus-per-task is too large");
  if (!in(s.mem_per_node_mib, 0, kMaxMemMib) || !in(s.mem_per_cpu_mib, 0, kMaxMemMib))
    return invalid("memory must be between 0 and 1 EiB");
  if (Status g = validate_gpu_request(s); !g) return g;
  if (!in(s.segment, 0, 65535)) return invalid("Invalid --segment specification");
  // Slurm's sbatch checks the most nodes asked for; its placement, the fewest (as here): both.
  for (int32_t nodes : {s.nodes_max, s.nodes_min})
    if (s.segment > 0 && s.nodes_set && nodes > s.segment && nodes % s.segment)
      return invalid("--segment=" + std::to_string(s.segment) + " does not fit the job size (" + std::to_string(nodes) +
                     "): node count must be evenly divisible by segment size");
  if (s.time_limit < kTimeUnset) return invalid("bad time limit");
  if (!in(s.nice, -2147483645, 2147483645)) return invalid("nice must be within +-2147483645");
  if (s.begin_time < 0) return invalid("bad begin time");
  if (!in(s.signal, 0, 64) || !in(s.signal_time, 0, 65535)) return invalid("--signal must be a signal 1-64 and 0-65535 seconds");
  if (!in(s.requeue, -1, 1)) return invalid("bad requeue flag");
  for (const Text* f : {&s.constraint, &s.nodelist, &s.exclude, &s.dependency, &s.array, &s.partition, &s.account})
    if (f->size() > 65536) return invalid("an option value is longer than 64 KiB");
  const JobExtras& e = *s.extra;
  for (const std::string* f : {&e.comment, &e.qos, &e.wckey, &e.reservation, &e.mail_type, &e.mail_user, &e.input})
    if (f->size() > 65536) return invalid("an option value is longer than 64 KiB");
  if (!in(e.open_mode, 0, 2)) return invalid("bad --open-mode");
  if (e.time_min < 0 || e.deadline < 0 || e.priority < 0) return invalid("bad --time-min, --deadline or --priority");
  if (s.is_batch() && s.script->empty()) return invalid("empty batch script");
  return Status::ok();
}

std::string alloc_hostlist(const std::vector<NodeAlloc>& alloc) {
  std::vector<std::string> names;
  names.reserve(alloc.size());
  for (const auto& a : alloc) names.push_back(a.node);
  return compress_hostlist(names);
}

}  // namespace hq
