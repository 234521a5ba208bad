// GET /slurm/v0.0.43/nodes/, /node/{name} and /partitions/: hq's nodes and partitions as
// v0.0.43 node and partition_info records (state lists with flags, CPU and memory totals,
// allocations and idle counts as Slinky's exporter reads them). One thread.
#include <algorithm>

#include "cmd/client/sinfo_rows.hpp"
#include "cmd/client/slurm_json.hpp"
#include "cmd/commands.hpp"
#include "cmd/rest/envelope.hpp"
#include "cmd/users.hpp"

namespace hq::cmd {
namespace {

using rest::no_val;

std::vector<std::string> listed(const google::protobuf::RepeatedPtrField<std::string>& items) {
  return {items.begin(), items.end()};
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// Slurm's node state list: the base state, then its flags.
std::vector<std::string> node_states(const pb::Node& node) {
  static const char* kBase[] = {"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED"};
  SinfoNodeState st = sinfo_state_of(node);
  std::vector<std::string> out{kBase[static_cast<int>(st.base)]};
  if (st.drain) out.push_back("DRAIN");
  if (st.maint) out.push_back("MAINTENANCE");
  if (st.reserved) out.push_back("RESERVED");
  if (st.no_respond) out.push_back("NOT_RESPONDING");
  if (st.planned) out.push_back("PLANNED");
  if (node.dynamic()) out.push_back("DYNAMIC_NORM");
  return out;
}

void node_unset_keys(JsonStream& j) {
  for (const char* k : {"architecture", "burstbuffer_network_address", "specialized_cpus", "extra", "gpu_spec",
                        "instance_id", "instance_type", "mcs_label", "operating_system", "owner", "comment"})
    j.str(k, "");
  for (const char* k : {"tls_cert_last_renewal", "last_busy", "resume_after"}) no_val(j, k, 0, false);
  for (const char* k : {"specialized_cores", "cpu_binding", "cpu_load", "port", "specialized_memory", "res_cores_per_gpu",
                        "temporary_disk"})
    j.integer(k, 0);
  j.array("cert_flags").end().array("next_state_after_reboot").end().object("power").end();
  j.object("energy").integer("average_watts", 0).integer("base_consumed_energy", 0).integer("consumed_energy", 0);
  no_val(j, "current_watts", 0, false);
  j.integer("previous_consumed_energy", 0).integer("last_collected", 0).end();
  j.object("external_sensors").end();
  j.str("gres_drained", "N/A");
}

void add_node(JsonStream& j, const pb::Node& node, const std::string& cluster) {
  j.object();
  j.str("name", node.name()).str("hostname", node.name()).str("address", node.name()).str("cluster_name", cluster);
  rest::strings(j, "state", node_states(node));
  j.str("reason", node.reason());
  rest::no_val_time(j, "reason_changed_at", node.reason_time());
  j.str("reason_set_by_user", node.has_reason_uid() ? user_name(node.reason_uid()) : "");
  rest::strings(j, "partitions", listed(node.partitions()));
  rest::strings(j, "features", listed(node.features()));
  rest::strings(j, "active_features", listed(node.features()));
  j.integer("boards", 1).integer("sockets", node.cpus()).integer("cores", 1).integer("threads", 1);
  j.integer("cpus", node.cpus()).integer("effective_cpus", node.cpus());
  j.integer("alloc_cpus", node.alloc_cpus()).integer("alloc_idle_cpus", std::max(0, node.cpus() - node.alloc_cpus()));
  j.integer("real_memory", node.mem_mib()).integer("alloc_memory", node.alloc_mem_mib());
  no_val(j, "free_mem", std::max<int64_t>(0, node.mem_mib() - node.alloc_mem_mib()));
  j.str("gres", node.gres()).str("gres_used", node.gres_used());
  j.str("tres", node_tres(node.cpus(), node.mem_mib(), node.gpus(), true));
  j.str("tres_used", node.alloc_cpus() > 0 ? node_tres(node.alloc_cpus(), node.alloc_mem_mib(), node.alloc_gpus(), false) : "");
  j.real("tres_weighted", node.alloc_cpus()).integer("weight", node.weight());
  j.str("reservation", node.reservation()).str("version", kHqVersion);
  std::string topo = node.block().empty() ? node.switch_name() : node.block();
  j.str("topology", topo);
  rest::no_val_time(j, "boot_time", node.boot_time());
  rest::no_val_time(j, "slurmd_start_time", node.boot_time());
  node_unset_keys(j);
  j.end();
}

void add_partition(JsonStream& j, const pb::Partition& p, const pb::NodesReply& r) {
  int64_t cpus = 0;
  for (const pb::Node& n : r.nodes())
    if (std::find(n.partitions().begin(), n.partitions().end(), p.name()) != n.partitions().end()) cpus += n.cpus();
  j.object().str("name", p.name()).str("cluster", r.cluster()).str("alternate", "").str("node_sets", "");
  j.object("nodes").str("allowed_allocation", "").str("configured", p.nodes()).integer("total", p.total_nodes()).end();
  j.object("accounts").str("allowed", joined(listed(p.allow_accounts()))).str("deny", "").end();
  j.object("groups").str("allowed", joined(listed(p.allow_groups()))).end();
  j.object("qos").str("allowed", "").str("deny", "").str("assigned", p.qos()).end();
  j.object("tres").str("billing_weights", "").str("configured", "cpu=" + std::to_string(cpus) + ",node=" +
                                                                    std::to_string(p.total_nodes())).end();
  rest::strings(j, "select_type", {"CORE", "MEMORY"});
  j.object("cpus").integer("task_binding", 0).integer("total", cpus).end();
  j.object("defaults").integer("memory_per_cpu", p.def_mem_per_cpu_mib());
  no_val(j, "partition_memory_per_cpu", p.def_mem_per_cpu_mib(), p.def_mem_per_cpu_mib() > 0);
  no_val(j, "partition_memory_per_node", 0, false);
  rest::no_val_limit(j, "time", p.default_time() / 60, p.default_time() <= 0);
  j.str("job", "").end();
  j.integer("grace_time", p.grace_time());
  j.object("maximums");
  no_val(j, "cpus_per_node", 0, false);
  no_val(j, "cpus_per_socket", 0, false);
  j.integer("memory_per_cpu", 0);
  no_val(j, "partition_memory_per_cpu", 0, false);
  no_val(j, "partition_memory_per_node", 0, false);
  rest::no_val_limit(j, "nodes", p.max_nodes(), p.max_nodes() <= 0);
  j.integer("shares", 1).object("oversubscribe").integer("jobs", p.exclusive() ? 0 : 1).array("flags").end().end();
  rest::no_val_limit(j, "time", p.max_time() / 60, p.max_time() <= 0);
  no_val(j, "over_time_limit", 0, false);
  j.end();
  j.object("minimums").integer("nodes", p.min_nodes()).end();
  j.object("priority").integer("job_factor", p.priority_job_factor()).integer("tier", p.priority_tier()).end();
  j.object("timeouts");
  no_val(j, "resume", 0, false);
  no_val(j, "suspend", 0, false);
  j.end().str("topology", p.topology());
  j.object("partition").array("state").item(p.state().empty() ? "UP" : p.state()).end().end();
  no_val(j, "suspend_time", 0, false);
  j.end();
}

}  // namespace

std::string rest_nodes_json(const pb::NodesReply& r, std::string_view only, const RestMeta& meta) {
  JsonStream j(true);
  j.object().array("nodes");
  for (const pb::Node& n : r.nodes())
    if (only.empty() || n.name() == only) add_node(j, n, r.cluster());
  j.end();
  rest::no_val_time(j, "last_update", r.now());
  rest::finish(j, meta);
  return j.take();
}

std::string rest_partitions_json(const pb::NodesReply& r, std::string_view only, const RestMeta& meta) {
  JsonStream j(true);
  j.object().array("partitions");
  for (const pb::Partition& p : r.partitions())
    if (only.empty() || p.name() == only) add_partition(j, p, r);
  j.end();
  rest::no_val_time(j, "last_update", r.now());
  rest::finish(j, meta);
  return j.take();
}

}  // namespace hq::cmd
