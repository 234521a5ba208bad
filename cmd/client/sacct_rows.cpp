// sacct's values for a job record (see sacct_rows.hpp).
#include "cmd/client/sacct_rows.hpp"

#include <functional>
#include <map>

#include "cmd/client/output.hpp"
#include "cmd/users.hpp"
#include "core/sacct_format.hpp"
#include "core/sluid.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

int64_t alloc_cpus(const pb::Job& j) {
  int64_t n = 0;
  for (const auto& a : j.alloc()) n += a.cpus();
  if (n == 0) n = static_cast<int64_t>(std::max(1, j.spec().ntasks())) * std::max(1, j.spec().cpus_per_task());
  return n;
}

int64_t alloc_nodes(const pb::Job& j) {
  return j.alloc_size() ? j.alloc_size() : std::max(1, j.spec().nodes_min());
}

int64_t alloc_gpus(const pb::Job& j) {
  int64_t n = 0;
  for (const auto& a : j.alloc()) n += a.gpus_size();
  return n;
}

int64_t req_mem_mib(const pb::Job& j) {
  const auto& s = j.spec();
  if (s.mem_per_node_mib() > 0) return s.mem_per_node_mib();
  if (s.mem_per_cpu_mib() > 0) return s.mem_per_cpu_mib() * std::max(1, s.cpus_per_task());
  int64_t sum = 0;
  for (const auto& a : j.alloc()) sum = std::max(sum, a.mem_mib());
  return sum;
}

bool started(const pb::Job& j) { return j.start_time() > 0; }

std::string when(int64_t t) { return t > 0 ? local_time(t) : "Unknown"; }

int64_t elapsed(const pb::Job& j, int64_t now) {
  if (!started(j)) return 0;
  int64_t end = j.end_time() > 0 ? j.end_time() : now;
  int64_t secs = end - j.start_time() - j.suspended_secs();
  return secs < 0 ? 0 : secs;
}

// Slurm's job states end with the job's own exit code, except where the controller ended
// it: a cancelled, timed-out or preempted job's line says 0:0 (its batch line the signal).
bool ended_by_controller(const std::string& state) {
  return state == "CANCELLED" || state == "TIMEOUT" || state == "PREEMPTED" || state == "DEADLINE" ||
         state == "NODE_FAIL" || state == "BOOT_FAIL";
}

std::string job_state(const pb::Job& j) {
  if (j.suspended()) return "SUSPENDED";
  if (j.state() == "CANCELLED" && j.has_cancel_uid()) return "CANCELLED by " + std::to_string(j.cancel_uid());
  return j.state();
}

std::string batch_state(const pb::Job& j) {
  if (j.suspended()) return "SUSPENDED";
  if (ended_by_controller(j.state()) && j.state() != "NODE_FAIL") return "CANCELLED";
  return j.state();
}

std::string tres(const pb::Job& j, bool requested) {
  int64_t cpus = alloc_cpus(j), nodes = alloc_nodes(j), gpus = alloc_gpus(j), mem = req_mem_mib(j);
  std::string out = "billing=" + std::to_string(cpus) + ",cpu=" + std::to_string(cpus);
  if (requested && mem > 0) out += ",mem=" + format_size_mib(mem);
  out += ",node=" + std::to_string(nodes);
  if (gpus > 0 || (requested && j.spec().gpus() > 0))
    out += ",gres/gpu=" + std::to_string(gpus > 0 ? gpus : j.spec().gpus());
  return out;
}

std::string job_id_text(const pb::Job& j) {
  if (j.array_job_id() != 0) return std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id());
  return std::to_string(j.job_id());
}

// The job line's JobID: an array's never-started tasks as Slurm's one record ("37_[9-20]",
// or "37_20" for one task).
std::string job_line_id(const SacctRow& r) {
  if (r.array_tasks.empty()) return job_id_text(r.job);
  bool several = r.array_tasks.find_first_of(",-") != std::string::npos;
  return std::to_string(r.job.array_job_id()) + "_" + (several ? "[" + r.array_tasks + "]" : r.array_tasks);
}

using Getter = std::function<std::string(const SacctRow&)>;

// Fields that read the same on both lines.
const std::map<std::string_view, Getter>& common_fields() {
  static const std::map<std::string_view, Getter> table = {
      {"Account", [](const SacctRow& r) { return r.job.spec().account(); }},
      {"AllocCPUS", [](const SacctRow& r) { return std::to_string(alloc_cpus(r.job)); }},
      {"NCPUS", [](const SacctRow& r) { return std::to_string(alloc_cpus(r.job)); }},
      {"AllocNodes", [](const SacctRow& r) { return started(r.job) ? std::to_string(alloc_nodes(r.job)) : "0"; }},
      {"NNodes", [](const SacctRow& r) { return std::to_string(alloc_nodes(r.job)); }},
      {"Cluster", [](const SacctRow& r) { return r.cluster; }},
      {"SLUID", [](const SacctRow& r) { return sluid_text(r.job.sluid()); }},
      {"OriginalSLUID", [](const SacctRow& r) { return sluid_text(r.job.original_sluid()); }},
      {"Elapsed", [](const SacctRow& r) { return sacct_duration(elapsed(r.job, r.now)); }},
      {"ElapsedRaw", [](const SacctRow& r) { return std::to_string(elapsed(r.job, r.now)); }},
      {"CPUTime", [](const SacctRow& r) { return sacct_duration(elapsed(r.job, r.now) * alloc_cpus(r.job)); }},
      {"CPUTimeRAW", [](const SacctRow& r) { return std::to_string(elapsed(r.job, r.now) * alloc_cpus(r.job)); }},
      {"End", [](const SacctRow& r) { return when(r.job.end_time()); }},
      {"NodeList", [](const SacctRow& r) { return r.job.nodelist().empty() ? "None assigned" : r.job.nodelist(); }},
      {"TotalCPU", [](const SacctRow& r) { return r.job.has_cpu_time_usec() ? sacct_cpu_time(r.job.cpu_time_usec()) : "00:00:00"; }},
      {"Suspended", [](const SacctRow& r) { return sacct_duration(r.job.suspended_secs()); }},
  };
  return table;
}

const std::map<std::string_view, Getter>& job_fields() {
  static const std::map<std::string_view, Getter> table = {
      {"JobID", [](const SacctRow& r) { return job_line_id(r); }},
      {"JobIDRaw", [](const SacctRow& r) {
         return std::to_string(r.array_tasks.empty() ? r.job.job_id() : r.job.array_job_id());
       }},
      {"JobName", [](const SacctRow& r) { return r.job.spec().name(); }},
      {"Partition", [](const SacctRow& r) { return r.job.partition(); }},
      {"State", [](const SacctRow& r) { return job_state(r.job); }},
      {"ExitCode", [](const SacctRow& r) {
         if (ended_by_controller(r.job.state())) return std::string("0:0");
         return sacct_exit_code(r.job.exit_code(), r.job.exit_signal());
       }},
      {"DerivedExitCode", [](const SacctRow& r) { return r.derived_exit_code; }},
      {"Submit", [](const SacctRow& r) { return when(r.job.submit_time()); }},
      {"Eligible", [](const SacctRow& r) { return when(r.job.eligible_time()); }},
      {"Start", [](const SacctRow& r) { return when(r.job.start_time()); }},
      {"Timelimit", [](const SacctRow& r) { return r.job.time_limit() > 0 ? format_limit(r.job.time_limit()) : "UNLIMITED"; }},
      {"TimelimitRaw", [](const SacctRow& r) {
         return r.job.time_limit() > 0 ? std::to_string(r.job.time_limit() / 60) : "UNLIMITED";
       }},
      {"User", [](const SacctRow& r) { return user_name(r.job.spec().uid()); }},
      {"UID", [](const SacctRow& r) { return std::to_string(r.job.spec().uid()); }},
      {"Group", [](const SacctRow& r) { return group_name(r.job.spec().gid()); }},
      {"GID", [](const SacctRow& r) { return std::to_string(r.job.spec().gid()); }},
      {"ReqMem", [](const SacctRow& r) { return format_size_mib(req_mem_mib(r.job)); }},
      {"ReqCPUS", [](const SacctRow& r) { return std::to_string(alloc_cpus(r.job)); }},
      {"ReqNodes", [](const SacctRow& r) { return std::to_string(std::max(1, r.job.spec().nodes_min())); }},
      {"AllocTRES", [](const SacctRow& r) { return started(r.job) ? tres(r.job, false) : ""; }},
      {"ReqTRES", [](const SacctRow& r) { return tres(r.job, true); }},
      {"QOS", [](const SacctRow& r) { return r.job.spec().qos().empty() ? "normal" : r.job.spec().qos(); }},
      {"Reason", [](const SacctRow& r) {  // an ended job's reason is None in Slurm's records
         return r.job.reason().empty() || r.job.end_time() > 0 ? "None" : r.job.reason();
       }},
      {"WorkDir", [](const SacctRow& r) { return r.job.spec().workdir(); }},
      {"Priority", [](const SacctRow& r) { return std::to_string(r.job.priority()); }},
      {"Comment", [](const SacctRow& r) { return r.job.spec().comment(); }},
      {"Constraints", [](const SacctRow& r) { return r.job.spec().constraint(); }},
      {"Reservation", [](const SacctRow& r) { return r.job.spec().reservation(); }},
      {"WCKey", [](const SacctRow& r) { return r.job.spec().wckey(); }},
  };
  return table;
}

const std::map<std::string_view, Getter>& batch_fields() {
  static const std::map<std::string_view, Getter> table = {
      {"JobID", [](const SacctRow& r) { return job_id_text(r.job) + ".batch"; }},
      {"JobIDRaw", [](const SacctRow& r) { return std::to_string(r.job.job_id()) + ".batch"; }},
      {"JobName", [](const SacctRow&) { return std::string("batch"); }},
      {"State", [](const SacctRow& r) { return batch_state(r.job); }},
      {"ExitCode", [](const SacctRow& r) {
         int32_t sig = r.job.exit_signal();
         if (sig == 0 && ended_by_controller(r.job.state()) && r.job.state() != "NODE_FAIL") sig = 15;  // slurmstepd's SIGTERM
         return sacct_exit_code(r.job.exit_code(), sig);
       }},
      {"Submit", [](const SacctRow& r) { return when(r.job.start_time()); }},
      {"Eligible", [](const SacctRow& r) { return when(r.job.start_time()); }},
      {"Start", [](const SacctRow& r) { return when(r.job.start_time()); }},
      {"NTasks", [](const SacctRow&) { return std::string("1"); }},
      {"NNodes", [](const SacctRow&) { return std::string("1"); }},
      {"NodeList", [](const SacctRow& r) { return r.job.alloc_size() ? r.job.alloc(0).node() : ""; }},
      {"AllocCPUS", [](const SacctRow& r) { return std::to_string(r.job.alloc_size() ? r.job.alloc(0).cpus() : 1); }},
      {"NCPUS", [](const SacctRow& r) { return std::to_string(r.job.alloc_size() ? r.job.alloc(0).cpus() : 1); }},
      {"AllocTRES", [](const SacctRow& r) {
         return "cpu=" + std::to_string(r.job.alloc_size() ? r.job.alloc(0).cpus() : 1) + ",mem=0,node=1";
       }},
      {"MaxRSS", [](const SacctRow& r) { return r.job.has_peak_mem_bytes() ? sacct_bytes(r.job.peak_mem_bytes()) : ""; }},
  };
  return table;
}

std::string step_state(const pb::StepRecord& st) { return st.state(); }

int64_t step_elapsed(const pb::StepRecord& st, int64_t now) {
  int64_t end = st.end_time() > 0 ? st.end_time() : now;
  return std::max<int64_t>(0, end - st.start_time());
}

// A step's line: its own values; the job's account and cluster (common_fields); nothing
// for the job's request (ReqMem, Timelimit, Partition, User...).
const std::map<std::string_view, Getter>& step_fields() {
  static const std::map<std::string_view, Getter> table = {
      {"JobID", [](const SacctRow& r) { return job_id_text(r.job) + "." + std::to_string(r.step->step_id()); }},
      {"JobIDRaw", [](const SacctRow& r) { return std::to_string(r.job.job_id()) + "." + std::to_string(r.step->step_id()); }},
      {"JobName", [](const SacctRow& r) { return r.step->name(); }},
      {"State", [](const SacctRow& r) { return step_state(*r.step); }},
      {"ExitCode", [](const SacctRow& r) { return sacct_exit_code(r.step->exit_code(), r.step->exit_signal()); }},
      {"Submit", [](const SacctRow& r) { return when(r.step->start_time()); }},
      {"Eligible", [](const SacctRow& r) { return when(r.step->start_time()); }},
      {"Start", [](const SacctRow& r) { return when(r.step->start_time()); }},
      {"End", [](const SacctRow& r) { return when(r.step->end_time()); }},
      {"Elapsed", [](const SacctRow& r) { return sacct_duration(step_elapsed(*r.step, r.now)); }},
      {"ElapsedRaw", [](const SacctRow& r) { return std::to_string(step_elapsed(*r.step, r.now)); }},
      {"CPUTime", [](const SacctRow& r) { return sacct_duration(step_elapsed(*r.step, r.now) * r.step->ncpus()); }},
      {"CPUTimeRAW", [](const SacctRow& r) { return std::to_string(step_elapsed(*r.step, r.now) * r.step->ncpus()); }},
      {"NTasks", [](const SacctRow& r) { return std::to_string(r.step->ntasks()); }},
      {"NNodes", [](const SacctRow& r) { return std::to_string(r.step->nnodes()); }},
      {"AllocNodes", [](const SacctRow& r) { return std::to_string(r.step->nnodes()); }},
      {"NodeList", [](const SacctRow& r) { return r.step->nodelist(); }},
      {"AllocCPUS", [](const SacctRow& r) { return std::to_string(r.step->ncpus()); }},
      {"NCPUS", [](const SacctRow& r) { return std::to_string(r.step->ncpus()); }},
      {"ReqCPUS", [](const SacctRow& r) { return std::to_string(r.step->ncpus()); }},
      {"AllocTRES", [](const SacctRow& r) {
         return "cpu=" + std::to_string(r.step->ncpus()) + ",mem=0,node=" + std::to_string(r.step->nnodes());
       }},
      {"MaxRSS", [](const SacctRow& r) { return r.step->has_max_rss_bytes() ? sacct_bytes(r.step->max_rss_bytes()) : ""; }},
      {"MaxRSSNode", [](const SacctRow& r) { return r.step->has_max_rss_bytes() ? r.step->max_rss_node() : ""; }},
      {"TotalCPU", [](const SacctRow& r) {
         return r.step->has_total_cpu_usec() ? sacct_cpu_time(r.step->total_cpu_usec()) : "00:00:00";
       }},
      {"Suspended", [](const SacctRow&) { return sacct_duration(0); }},
  };
  return table;
}

// Slurm's raw wait status of a step: the code in the high byte, a signal in the low.
int64_t wait_status(const pb::StepRecord& st) { return (int64_t{st.exit_code()} << 8) | st.exit_signal(); }

}  // namespace

std::string sacct_derived_exit(const std::vector<const pb::StepRecord*>& steps) {
  const pb::StepRecord* worst = nullptr;
  for (const pb::StepRecord* st : steps)
    if (!worst || wait_status(*st) > wait_status(*worst)) worst = st;
  return worst ? sacct_exit_code(worst->exit_code(), worst->exit_signal(), /*derived=*/true) : "0:0";
}

bool has_batch_line(const pb::Job& job) { return started(job) && job.spec().alloc_kind() == 0; }

std::string sacct_value(const SacctRow& row, std::string_view name) {
  const auto& own = row.step ? step_fields() : row.batch ? batch_fields() : job_fields();
  if (auto it = own.find(name); it != own.end()) return it->second(row);
  if (auto it = common_fields().find(name); it != common_fields().end()) return it->second(row);
  return "";
}

}  // namespace hq::cmd
