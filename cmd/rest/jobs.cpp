// GET /slurm/v0.0.43/jobs/ and /job/{id}: hq's jobs as v0.0.43 job_info records (Slurm
// 24.11's field names and types: "no_val" numbers, state and flag lists, job_resources with
// each node's CPUs and memory, which Slinky's exporter adds up). One thread.
#include <algorithm>
#include <map>

#include "cmd/client/queue_format.hpp"
#include "cmd/client/slurm_json.hpp"
#include "cmd/rest/body.hpp"
#include "cmd/rest/envelope.hpp"
#include "cmd/users.hpp"
#include "core/signal_names.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

using rest::no_val;
using rest::no_val_time;

// Group names, read once per listing (group_name reads /etc/group each time).
using GroupNames = std::map<uint32_t, std::string>;
const std::string& group_of(GroupNames& names, uint32_t gid) {
  auto [it, fresh] = names.try_emplace(gid);
  if (fresh) it->second = group_name(gid);
  return it->second;
}

bool ended(const pb::Job& job) { return job.state() != "PENDING" && job.state() != "RUNNING"; }

// process_exit_code_verbose: {"status": [...], "return_code", "signal": {"id", "name"}}.
void exit_code(JsonStream& j, std::string_view key, const pb::Job& job) {
  j.object(key).array("status");
  if (!ended(job)) j.item("PENDING");
  else if (job.exit_signal() > 0) j.item("SIGNALED");
  else j.item(job.exit_code() == 0 ? "SUCCESS" : "ERROR");
  j.end();
  no_val(j, "return_code", job.exit_code(), ended(job));
  j.object("signal");
  no_val(j, "id", job.exit_signal(), job.exit_signal() > 0);
  j.str("name", signal_name(job.exit_signal())).end();
  j.end();
}

// "gres/gpu[:TYPE]:N", Slurm 24.11's form of a GPU count in tres_per_* ("" none).
std::string gpu_tres(const pb::JobSpec& s, int64_t n) {
  if (n <= 0) return "";
  return "gres/gpu:" + (s.gpu_type().empty() ? "" : s.gpu_type() + ":") + std::to_string(n);
}

// job_resources: the allocation node by node (a started job's; absent before).
void job_resources(JsonStream& j, const pb::Job& job) {
  if (job.alloc_size() == 0) return;
  int64_t cpus = 0;
  for (const auto& a : job.alloc()) cpus += a.cpus();
  j.object("job_resources");
  rest::strings(j, "select_type", {"CPU", "MEMORY"});
  j.object("nodes").integer("count", job.alloc_size());
  rest::strings(j, "select_type", {"AVAILABLE"});
  j.str("list", job.nodelist()).boolean("whole", job.spec().exclusive()).array("allocation");
  for (int i = 0; i < job.alloc_size(); ++i) {
    const pb::NodeAlloc& a = job.alloc(i);
    j.object().integer("index", i).str("name", a.node());
    j.object("cpus").integer("count", a.cpus()).integer("used", a.cpus()).end();
    j.object("memory").integer("used", 0).integer("allocated", a.mem_mib()).end();
    j.array("sockets").end().end();
  }
  j.end().end();
  j.integer("cpus", cpus);
  no_val(j, "threads_per_core", 1, job.spec().nomultithread());
  j.end();
}

// Each node's GPUs as Slurm's gres_detail lists them ("gpu:TYPE:N(IDX:0-1)").
void gres_detail(JsonStream& j, const pb::Job& job) {
  j.array("gres_detail");
  for (const auto& a : job.alloc()) {
    if (a.gpus_size() == 0) continue;
    std::string idx;
    for (int g : a.gpus()) idx += (idx.empty() ? "" : ",") + std::to_string(g);
    const std::string& type = job.spec().gpu_type();
    j.item("gpu:" + (type.empty() ? "" : type + ":") + std::to_string(a.gpus_size()) + "(IDX:" + idx + ")");
  }
  j.end();
}

void job_flags(JsonStream& j, const pb::Job& job) {
  const pb::JobSpec& s = job.spec();
  j.array("flags");
  if (s.kill_on_invalid_dep()) j.item("KILL_INVALID_DEPENDENCY");
  if (job.start_time() > 0) j.item("JOB_WAS_RUNNING");
  if (s.mem_per_node_mib() > 0 || s.mem_per_cpu_mib() > 0 || s.mem_all()) j.item("EXACT_MEMORY_REQUESTED");
  if (s.partition().empty()) j.item("USING_DEFAULT_PARTITION");
  j.end();
}

// The keys hq keeps no value for, as Slurm writes them when they are not set.
void unset_keys(JsonStream& j) {
  for (const char* k : {"admin_comment", "array_task_string", "batch_features", "burst_buffer", "burst_buffer_state",
                        "cluster_features", "container", "container_id", "cron", "extra", "failed_node",
                        "federation_origin", "federation_siblings_active", "federation_siblings_viable",
                        "het_job_id_set", "licenses", "licenses_allocated", "mcs_label", "network", "prefer",
                        "selinux_context", "system_comment", "tres_bind", "tres_freq", "tres_per_socket"})
    j.str(k, "");
  for (const char* k : {"cores_per_socket", "cpu_frequency_minimum", "cpu_frequency_maximum", "cpu_frequency_governor",
                        "delay_boot", "het_job_id", "het_job_offset", "last_sched_evaluation", "max_cpus",
                        "minimum_tmp_disk_per_node", "preempt_time", "preemptable_time", "resize_time",
                        "sockets_per_node", "tasks_per_core", "tasks_per_tres", "tasks_per_socket", "tasks_per_board"})
    no_val(j, k, 0, false);
  j.integer("association_id", 0).boolean("contiguous", false).integer("core_spec", 0).integer("thread_spec", 0);
  j.object("power").array("flags").end().end();
  j.array("priority_by_partition").end().array("profile").end().array("job_size_str").end();
  j.boolean("reboot", false).integer("sockets_per_board", 0);
}

// What the job is, who owns it, where it runs and its output goes.
void identity_keys(JsonStream& j, const pb::Job& job, const std::string& cluster, GroupNames& groups) {
  const pb::JobSpec& s = job.spec();
  j.str("account", s.account()).str("allocating_node", s.submit_host());
  no_val(j, "array_job_id", static_cast<int64_t>(job.array_job_id()));
  no_val(j, "array_task_id", job.array_task_id(), job.array_job_id() != 0);
  no_val(j, "array_max_tasks", job.array_throttle(), job.array_throttle() > 0);
  j.boolean("batch_flag", s.alloc_kind() == 0).str("batch_host", job.alloc_size() ? job.alloc(0).node() : "");
  j.str("cluster", cluster).str("command", s.command()).str("comment", s.comment());
  j.str("dependency", s.dependency()).str("excluded_nodes", s.exclude()).str("features", s.constraint());
  j.integer("group_id", s.gid()).str("group_name", group_of(groups, s.gid()));
  j.integer("job_id", static_cast<int64_t>(job.job_id()));
  j.str("mail_user", s.mail_user());
  std::vector<std::string> mail = split_list(s.mail_type());
  for (auto& m : mail) m = rest::mail_type_to_rest(m);
  rest::strings(j, "mail_type", mail);
  j.str("name", s.name()).str("nodes", job.nodelist()).integer("nice", s.nice());
  j.str("partition", job.partition()).str("qos", s.qos()).str("required_nodes", s.nodelist());
  j.str("resv_name", s.reservation()).str("scheduled_nodes", job.sched_nodes());
  std::string in = job_stdio(job, 'i'), out = job_stdio(job, 'o'), err = job_stdio(job, 'e');
  j.str("standard_input", in).str("standard_output", out).str("standard_error", err);
  j.str("stdin_expanded", in).str("stdout_expanded", out).str("stderr_expanded", err);
  j.integer("user_id", s.uid()).str("user_name", s.user()).str("wckey", s.wckey());
  j.str("current_working_directory", s.workdir());
}

// Its state, why, and its times.
void state_keys(JsonStream& j, const pb::Job& job, int64_t now) {
  const pb::JobSpec& s = job.spec();
  rest::strings(j, "job_state", {job_state(job)});
  j.str("state_description", job.state_desc()).str("state_reason", job.reason().empty() ? "None" : job.reason());
  j.boolean("hold", job.hold() != 0 || job.held());
  no_val(j, "priority", job_priority(job));
  j.boolean("requeue", s.requeue() != 0).integer("restart_cnt", job.restart_count());
  no_val_time(j, "accrue_time", job.eligible_time());
  no_val_time(j, "eligible_time", job.eligible_time());
  no_val_time(j, "submit_time", job.submit_time());
  no_val_time(j, "start_time", job_start_time(job, now));
  no_val_time(j, "end_time", job_end_time(job));
  no_val_time(j, "suspend_time", job.suspend_time());
  no_val_time(j, "deadline", s.deadline());
  no_val(j, "pre_sus_time", job.pre_suspend_secs());
  rest::no_val_limit(j, "time_limit", job.time_limit() / 60, job.time_limit() <= 0);
  no_val(j, "time_minimum", s.time_min() / 60, s.time_min() > 0);
  exit_code(j, "exit_code", job);
  exit_code(j, "derived_exit_code", job);
}

// What it asks for and holds: counts, memory, GPUs, TRES.
void resource_keys(JsonStream& j, const pb::Job& job) {
  const pb::JobSpec& s = job.spec();
  int64_t cpus = job_cpu_count(job);
  j.object("billable_tres").boolean("set", job.alloc_size() > 0).boolean("infinite", false);
  j.real("number", job.alloc_size() > 0 ? static_cast<double>(cpus) : 0.0).end();
  no_val(j, "cpus_per_task", std::max(1, s.cpus_per_task()));
  no_val(j, "cpus", cpus);
  no_val(j, "node_count", job_node_count(job));
  no_val(j, "tasks", std::max(1, s.ntasks()));
  no_val(j, "max_nodes", s.nodes_max(), s.nodes_max() > 0);
  no_val(j, "tasks_per_node", s.ntasks_per_node(), s.ntasks_per_node() > 0);
  no_val(j, "memory_per_cpu", s.mem_per_cpu_mib(), s.mem_per_cpu_mib() > 0);
  no_val(j, "memory_per_node", s.mem_per_node_mib(), s.mem_per_node_mib() > 0);
  no_val(j, "minimum_cpus_per_node", int64_t{std::max(1, s.cpus_per_task())} * std::max(1, s.ntasks_per_node()));
  no_val(j, "threads_per_core", 1, s.nomultithread());
  j.str("cpus_per_tres", s.cpus_per_gpu() > 0 ? "gres/gpu:" + std::to_string(s.cpus_per_gpu()) : "");
  j.str("memory_per_tres", s.mem_per_gpu_mib() > 0 ? "gres/gpu:" + std::to_string(s.mem_per_gpu_mib()) : "");
  j.str("tres_per_job", gpu_tres(s, s.gpus())).str("tres_per_node", gpu_tres(s, s.gpus_per_node()));
  j.str("tres_per_task", gpu_tres(s, s.gpus_per_task()));
  j.str("tres_req_str", tres_requested(job)).str("tres_alloc_str", tres_allocated(job));
  j.array("shared");
  if (s.exclusive()) j.item("none");
  if (s.exclusive_topo()) j.item("topo");
  j.end();
  j.integer("required_switches", s.switches()).integer("maximum_switch_wait_time", std::max<int64_t>(0, s.switch_wait()));
  j.integer("segment_size", s.segment());
  job_flags(j, job);
  gres_detail(j, job);
  job_resources(j, job);
}

}  // namespace

std::string rest_jobs_json(const pb::QueueReply& q, int64_t last_backfill, const RestMeta& meta) {
  JsonStream j(true);
  j.reserve(4096 + static_cast<size_t>(q.jobs_size()) * 5 * 1024);  // about 4.6 KiB a job
  j.object().array("jobs");
  GroupNames groups;
  for (const pb::Job& job : q.jobs()) {
    j.object();
    identity_keys(j, job, meta.cluster, groups);
    state_keys(j, job, q.now());
    resource_keys(j, job);
    unset_keys(j);
    j.end();
  }
  j.end();
  rest::no_val_time(j, "last_backfill", last_backfill);
  rest::no_val_time(j, "last_update", q.now());
  rest::finish(j, meta);
  return j.take();
}

}  // namespace hq::cmd
