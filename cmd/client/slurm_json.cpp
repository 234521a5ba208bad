#include "cmd/client/slurm_json.hpp"

#include <google/protobuf/struct.pb.h>

#include <set>

#include "cmd/client/output.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/client/sinfo_rows.hpp"
#include "cmd/client/slurm_yaml.hpp"
#include "cmd/commands.hpp"
#include "cmd/users.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;


// "gres:gpu[:TYPE]:N", Slurm 22.05's form of a GPU count in tres_per_* ("" for none).
std::string gpu_tres(const pb::JobSpec& s, int64_t n) {
  if (n <= 0) return "";
  return "gres:gpu:" + (s.gpu_type().empty() ? "" : s.gpu_type() + ":") + std::to_string(n);
}

}  // namespace

std::string tres_requested(const pb::Job& job) {
  const pb::JobSpec& s = job.spec();
  int64_t cpus = job_cpu_count(job), nodes = job_node_count(job);
  int64_t mem = s.mem_per_node_mib() > 0 ? s.mem_per_node_mib() * nodes : s.mem_per_cpu_mib() * cpus;
  int64_t gpus = s.gpus() > 0 ? s.gpus() : s.gpus_per_node() * nodes + s.gpus_per_task() * std::max(1, s.ntasks());
  std::string out = "cpu=" + std::to_string(cpus);
  if (mem > 0) out += ",mem=" + std::to_string(mem) + "M";
  out += ",node=" + std::to_string(nodes) + ",billing=" + std::to_string(cpus);
  return gpus > 0 ? out + ",gres/gpu=" + std::to_string(gpus) : out;
}

std::string tres_allocated(const pb::Job& job) {
  if (job.alloc_size() == 0) return "";
  int64_t cpus = 0, mem = 0, gpus = 0;
  for (const auto& a : job.alloc()) cpus += a.cpus(), mem += a.mem_mib(), gpus += a.gpus_size();
  std::string out = "cpu=" + std::to_string(cpus);
  if (mem > 0) out += ",mem=" + std::to_string(mem) + "M";
  out += ",node=" + std::to_string(job.alloc_size()) + ",billing=" + std::to_string(cpus);
  return gpus > 0 ? out + ",gres/gpu=" + std::to_string(gpus) : out;
}

namespace {

// The job's bit flags hq knows, in Slurm's order (dump_job_info's "flags").
void job_flags(google::protobuf::ListValue* flags, const pb::Job& job) {
  const pb::JobSpec& s = job.spec();
  auto add = [&](const char* f) { flags->add_values()->set_string_value(f); };
  if (s.kill_on_invalid_dep()) add("KILL_INV_DEP");
  if (s.cpus_per_task_set()) add("JOB_CPUS_SET");
  if (job.start_time() > 0) add("JOB_WAS_RUNNING");
  if (s.mem_per_node_mib() > 0 || s.mem_per_cpu_mib() > 0 || s.mem_all()) add("JOB_MEM_SET");
}

// The keys hq has no value for: Slurm's value when they are not set (data_parser 0.0.38).
void unset_job_keys(Obj j) {
  for (const char* k : {"batch_features", "burst_buffer", "burst_buffer_state", "cluster_features", "container",
                        "federation_origin", "federation_siblings_active", "federation_siblings_viable",
                        "het_job_id_set", "licenses", "mcs_label", "prefer", "system_comment", "tres_bind", "tres_freq",
                        "tres_per_socket"})
    j.str(k, "");
  for (const char* k : {"association_id", "delay_boot", "derived_exit_code", "het_job_id", "het_job_offset",
                        "last_sched_evaluation", "max_cpus", "minimum_tmp_disk_per_node", "preempt_time", "resize_time",
                        "sockets_per_board", "tasks_per_board"})
    j.num(k, 0);
  for (const char* k : {"core_spec", "thread_spec", "cores_per_socket", "cpu_frequency_governor", "cpu_frequency_maximum",
                        "cpu_frequency_minimum", "profile", "sockets_per_node", "tasks_per_core", "tasks_per_socket"})
    j.null(k);
  j.flag("contiguous", false).flag("reboot", false);
  j.list("gres_detail");
}

// The keys of Slurm's job record hq has values for beyond the common ones: shapes, TRES, flags.
void resource_job_keys(Obj j, const pb::Job& job) {
  const pb::JobSpec& s = job.spec();
  if (job.alloc_size() > 0) j.num("billable_tres", static_cast<double>(job_cpu_count(job)));
  else j.null("billable_tres");
  j.str("cpus_per_tres", s.cpus_per_gpu() > 0 ? "gres:gpu:" + std::to_string(s.cpus_per_gpu()) : "");
  j.str("memory_per_tres", s.mem_per_gpu_mib() > 0 ? "gres:gpu:" + std::to_string(s.mem_per_gpu_mib()) : "");
  j.num("max_nodes", s.nodes_max()).num("tasks_per_node", s.ntasks_per_node());
  j.num("minimum_cpus_per_node", std::max(1, s.cpus_per_task()) * std::max(1, s.ntasks_per_node()));
  j.num("pre_sus_time", static_cast<double>(job.pre_suspend_secs()));
  if (s.exclusive()) j.str("shared", "none");
  else j.null("shared");
  if (s.nomultithread()) j.num("threads_per_core", 1);
  else j.null("threads_per_core");
  j.str("tres_per_job", gpu_tres(s, s.gpus())).str("tres_per_node", gpu_tres(s, s.gpus_per_node()));
  j.str("tres_per_task", gpu_tres(s, s.gpus_per_task()));
  j.str("tres_req_str", tres_requested(job)).str("tres_alloc_str", tres_allocated(job));
  job_flags(j.list("flags"), job);
  auto* shown = j.list("show_flags");  // what squeue asks slurmctld for
  for (const char* f : {"SHOW_ALL", "SHOW_DETAIL", "SHOW_LOCAL"}) shown->add_values()->set_string_value(f);
}

// One job of squeue --json; `tasks`: the array's pending tasks it stands for ("" for one job).
void add_job(Obj j, const pb::Job& job, const std::string& cluster, const std::string& tasks) {
  const pb::JobSpec& s = job.spec();
  bool ended = job.state() != "PENDING" && job.state() != "RUNNING";
  unset_job_keys(j);
  resource_job_keys(j, job);
  j.str("account", s.account()).num("accrue_time", static_cast<double>(job.eligible_time())).str("admin_comment", "");
  j.num("array_job_id", static_cast<double>(job.array_job_id()));
  if (job.array_job_id() && tasks.empty()) j.num("array_task_id", job.array_task_id());
  else j.null("array_task_id");
  j.num("array_max_tasks", job.array_throttle()).str("array_task_string", tasks);
  j.flag("batch_flag", s.alloc_kind() == 0).str("batch_host", job.alloc_size() ? job.alloc(0).node() : "");
  j.str("cluster", cluster).str("command", "").str("comment", s.comment());
  j.num("cpus_per_task", std::max(1, s.cpus_per_task())).num("deadline", static_cast<double>(s.deadline()));
  j.str("dependency", s.dependency()).num("eligible_time", static_cast<double>(job.eligible_time()));
  j.num("end_time", static_cast<double>(job.end_time())).str("excluded_nodes", s.exclude());
  j.num("exit_code", ended ? job.exit_code() * 256 + job.exit_signal() : 0).str("features", s.constraint());
  j.num("group_id", s.gid()).str("group_name", group_name(s.gid()));
  j.num("job_id", static_cast<double>(job.job_id())).str("job_state", job_state(job));
  j.str("name", s.name()).str("nodes", job.nodelist()).num("nice", s.nice());
  j.num("cpus", static_cast<double>(job_cpu_count(job))).num("node_count", job_node_count(job));
  j.num("tasks", std::max(1, s.ntasks())).str("partition", job.partition());
  if (s.mem_per_node_mib() > 0) j.num("memory_per_node", static_cast<double>(s.mem_per_node_mib()));
  else j.null("memory_per_node");
  if (s.mem_per_cpu_mib() > 0) j.num("memory_per_cpu", static_cast<double>(s.mem_per_cpu_mib()));
  else j.null("memory_per_cpu");
  j.num("priority", static_cast<double>(job_priority(job))).str("qos", s.qos()).str("required_nodes", s.nodelist());
  j.flag("requeue", s.requeue() != 0).num("restart_cnt", job.restart_count()).str("resv_name", s.reservation());
  j.num("start_time", static_cast<double>(job.start_time())).str("state_description", job.state_desc());
  j.str("state_reason", job.reason().empty() ? "None" : job.reason());
  j.str("standard_error", job_stdio(job, 'e')).str("standard_input", job_stdio(job, 'i'));
  j.str("standard_output", job_stdio(job, 'o')).num("submit_time", static_cast<double>(job.submit_time()));
  j.num("suspend_time", static_cast<double>(job.suspend_time()));
  if (job.time_limit() > 0) j.num("time_limit", static_cast<double>(job.time_limit() / 60));
  else j.null("time_limit");
  j.num("time_minimum", static_cast<double>(s.time_min() / 60));
  j.num("user_id", s.uid()).str("user_name", s.user()).str("wckey", s.wckey());
  j.str("current_working_directory", s.workdir());
  Obj own = j.obj("hq");
  own.str("partitions", comma_joined(job.partitions())).str("sched_nodes", job.sched_nodes());
  own.num("expected_start", static_cast<double>(job.expected_start()));
  own.num("exit_code", job.exit_code()).num("exit_signal", job.exit_signal());
  if (job.array_job_id()) own.num("array_task_count", job.array_task_count());
}

}  // namespace

std::string node_tres(int64_t cpus, int64_t mem, int64_t gpus, bool billing) {
  std::string out = "cpu=" + std::to_string(cpus);
  if (mem > 0) out += ",mem=" + std::to_string(mem) + "M";
  if (billing) out += ",billing=" + std::to_string(cpus);
  return gpus > 0 ? out + ",gres/gpu=" + std::to_string(gpus) : out;
}

namespace {

// The node keys hq has no value for: Slurm's value when they are not set.
void unset_node_keys(Obj n) {
  for (const char* k : {"burstbuffer_network_address", "extra", "mcs_label", "operating_system"}) n.str(k, "");
  for (const char* k : {"cpu_binding", "cpu_load", "free_memory", "last_busy", "port", "slurmd_start_time"}) n.num(k, 0);
  n.str("gres_drained", "N/A").str("next_state_after_reboot", "invalid").null("owner");
  n.list("next_state_after_reboot_flags");
}

void add_node(Obj n, const pb::Node& node) {
  SinfoNodeState st = sinfo_state_of(node);
  unset_node_keys(n);
  n.str("tres", node_tres(node.cpus(), node.mem_mib(), node.gpus(), true));
  if (node.alloc_cpus() > 0) n.str("tres_used", node_tres(node.alloc_cpus(), node.alloc_mem_mib(), node.alloc_gpus(), false));
  else n.null("tres_used");
  n.num("tres_weighted", node.alloc_cpus());
  static const char* kBase[] = {"unknown", "down", "idle", "allocated", "error", "mixed"};
  n.str("architecture", "").num("boards", 1).num("boot_time", static_cast<double>(node.boot_time()));
  n.str("comment", "").num("cores", 1).num("cpus", node.cpus()).str("features", comma_joined(node.features()));
  n.str("active_features", comma_joined(node.features())).str("gres", node.gres()).str("gres_used", node.gres_used());
  n.str("name", node.name()).str("address", node.name()).str("hostname", node.name());
  n.str("state", kBase[static_cast<int>(st.base)]);
  auto* flags = n.list("state_flags");
  if (st.drain) flags->add_values()->set_string_value("DRAIN");
  if (st.maint) flags->add_values()->set_string_value("MAINTENANCE");
  if (st.reserved) flags->add_values()->set_string_value("RESERVED");
  if (st.no_respond) flags->add_values()->set_string_value("NOT_RESPONDING");
  if (st.planned) flags->add_values()->set_string_value("PLANNED");
  if (st.blocked) flags->add_values()->set_string_value("BLOCKED");
  auto* parts = n.list("partitions");
  for (const auto& p : node.partitions()) parts->add_values()->set_string_value(p);
  n.num("real_memory", static_cast<double>(node.mem_mib())).str("reason", node.reason());
  n.num("reason_changed_at", static_cast<double>(node.reason_time()));
  if (node.has_reason_uid()) n.str("reason_set_by_user", user_name(node.reason_uid()));
  else n.null("reason_set_by_user");
  n.num("sockets", node.cpus()).num("threads", 1).num("temporary_disk", 0).num("weight", node.weight());
  n.str("slurmd_version", kHqVersion).num("alloc_memory", static_cast<double>(node.alloc_mem_mib()));
  n.num("alloc_cpus", node.alloc_cpus()).num("idle_cpus", std::max(0, node.cpus() - node.alloc_cpus()));
  Obj own = n.obj("hq");
  own.num("gpus", node.gpus()).num("alloc_gpus", node.alloc_gpus()).flag("dynamic", node.dynamic());
  own.str("block", node.block()).str("switch", node.switch_name()).num("last_heard", static_cast<double>(node.last_heard()));
}

Struct squeue_tree(const pb::QueueReply& q, const std::string& cluster) {
  Struct root;
  Obj top(&root);
  slurm_meta(top, "openapi/v0.0.38", "Slurm OpenAPI v0.0.38");
  auto* jobs = top.list("jobs");
  for (const QueueRow& row : queue_rows(q, false))  // an array's pending tasks as one record, as Slurm's
    add_job(Obj::item(jobs), *row.job, cluster, row.tasks);
  return root;
}

Struct sinfo_tree(const pb::NodesReply& r) {
  Struct root;
  Obj top(&root);
  slurm_meta(top, "openapi/v0.0.38", "Slurm OpenAPI v0.0.38");
  auto* nodes = top.list("nodes");
  for (const auto& node : r.nodes()) add_node(Obj::item(nodes), node);
  return root;
}

// The numbers Slurm 22.05's data_parser writes as floats (the rest are integers).
const std::set<std::string> kFloatKeys = {"billable_tres", "tres_weighted"};

// The order Slurm 22.05 writes each record's keys in (seen on the slurm-bench; hq's own "hq"
// keys come after them).
const KeyOrder& slurm_key_order() {
  static const KeyOrder order{{
      {"", {"meta", "errors", "jobs", "nodes"}},
      {"meta", {"plugin", "Slurm"}},
      {"plugin", {"type", "name"}},
      {"Slurm", {"version", "release"}},
      {"version", {"major", "micro", "minor"}},
      {"jobs",
       {"account", "accrue_time", "admin_comment", "array_job_id", "array_task_id", "array_max_tasks",
        "array_task_string", "association_id", "batch_features", "batch_flag", "batch_host", "flags", "burst_buffer",
        "burst_buffer_state", "cluster", "cluster_features", "command", "comment", "container", "contiguous",
        "core_spec", "thread_spec", "cores_per_socket", "billable_tres", "cpus_per_task", "cpu_frequency_minimum",
        "cpu_frequency_maximum", "cpu_frequency_governor", "cpus_per_tres", "deadline", "delay_boot", "dependency",
        "derived_exit_code", "eligible_time", "end_time", "excluded_nodes", "exit_code", "features",
        "federation_origin", "federation_siblings_active", "federation_siblings_viable", "gres_detail", "group_id",
        "group_name", "job_id", "job_resources", "job_state", "last_sched_evaluation", "licenses", "max_cpus",
        "max_nodes", "mcs_label", "memory_per_tres", "name", "nodes", "nice", "tasks_per_core", "tasks_per_node",
        "tasks_per_socket", "tasks_per_board", "cpus", "node_count", "tasks", "het_job_id", "het_job_id_set",
        "het_job_offset", "partition", "prefer", "memory_per_node", "memory_per_cpu", "minimum_cpus_per_node",
        "minimum_tmp_disk_per_node", "preempt_time", "pre_sus_time", "priority", "profile", "qos", "reboot",
        "required_nodes", "requeue", "resize_time", "restart_cnt", "resv_name", "shared", "show_flags",
        "sockets_per_board", "sockets_per_node", "start_time", "state_description", "state_reason", "standard_error",
        "standard_input", "standard_output", "submit_time", "suspend_time", "system_comment", "time_limit",
        "time_minimum", "threads_per_core", "tres_bind", "tres_freq", "tres_per_job", "tres_per_node",
        "tres_per_socket", "tres_per_task", "tres_req_str", "tres_alloc_str", "user_id", "user_name", "wckey",
        "current_working_directory"}},
      {"nodes",
       {"architecture", "burstbuffer_network_address", "boards", "boot_time", "comment", "cores", "cpu_binding",
        "cpu_load", "extra", "free_memory", "cpus", "last_busy", "features", "active_features", "gres", "gres_drained",
        "gres_used", "mcs_label", "name", "next_state_after_reboot", "address", "hostname", "state", "state_flags",
        "next_state_after_reboot_flags", "operating_system", "owner", "partitions", "port", "real_memory", "reason",
        "reason_changed_at", "reason_set_by_user", "slurmd_start_time", "sockets", "threads", "temporary_disk",
        "weight", "tres", "slurmd_version", "alloc_memory", "alloc_cpus", "idle_cpus", "tres_used", "tres_weighted"}},
  }};
  return order;
}

}  // namespace

std::string squeue_slurm_json(const pb::QueueReply& q, const std::string& cluster) {
  return slurm_json_text(squeue_tree(q, cluster), slurm_key_order(), kFloatKeys);
}
std::string squeue_slurm_yaml(const pb::QueueReply& q, const std::string& cluster) {
  return slurm_yaml(squeue_tree(q, cluster), kFloatKeys, slurm_key_order());
}
std::string sinfo_slurm_json(const pb::NodesReply& r) { return slurm_json_text(sinfo_tree(r), slurm_key_order(), kFloatKeys); }
std::string sinfo_slurm_yaml(const pb::NodesReply& r) { return slurm_yaml(sinfo_tree(r), kFloatKeys, slurm_key_order()); }

}  // namespace hq::cmd
