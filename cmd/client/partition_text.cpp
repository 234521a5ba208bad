#include "cmd/client/partition_text.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::string all_or(const google::protobuf::RepeatedPtrField<std::string>& list) {
  std::string out;
  for (const auto& s : list) out += (out.empty() ? "" : ",") + s;
  return out.empty() ? "ALL" : out;
}

struct Totals {
  int64_t cpus = 0, mem_mib = 0, gpus = 0;
};

Totals totals(const pb::Partition& p, const pb::NodesReply& r) {
  Totals t;
  for (const auto& n : r.nodes())
    if (std::find(n.partitions().begin(), n.partitions().end(), p.name()) != n.partitions().end()) {
      t.cpus += n.cpus();
      t.mem_mib += n.mem_mib();
      t.gpus += n.gpus();
    }
  return t;
}

}  // namespace

std::string partition_text(const pb::Partition& p, const pb::NodesReply& r) {
  Totals t = totals(p, r);
  const std::string nl = "\n   ";
  std::string out = "PartitionName=" + p.name() + nl;
  out += "AllowGroups=" + all_or(p.allow_groups()) + " AllowAccounts=" + all_or(p.allow_accounts()) + " AllowQos=ALL" + nl;
  out += std::string("AllocNodes=ALL Default=") + (p.is_default() ? "YES" : "NO") + " QoS=" + (p.qos().empty() ? "N/A" : p.qos()) + nl;
  out += "DefaultTime=" + (p.default_time() < 0 ? std::string("NONE") : format_limit(p.default_time()));
  out += std::string(" DisableRootJobs=") + (p.disable_root_jobs() ? "YES" : "NO") + " ExclusiveUser=NO GraceTime=" +
         std::to_string(p.grace_time()) + " Hidden=NO" + nl;
  out += "MaxNodes=" + (p.max_nodes() > 0 ? std::to_string(p.max_nodes()) : std::string("UNLIMITED")) +
         " MaxTime=" + format_limit(p.max_time()) + " MinNodes=" + std::to_string(p.min_nodes()) +
         " LLN=NO MaxCPUsPerNode=UNLIMITED" + nl;
  out += "Nodes=" + (p.nodes().empty() ? std::string("(null)") : p.nodes()) + nl;
  out += "PriorityJobFactor=" + std::to_string(p.priority_job_factor()) + " PriorityTier=" +
         std::to_string(p.priority_tier()) + " RootOnly=NO ReqResv=NO OverSubscribe=" +
         (p.exclusive() ? "EXCLUSIVE" : "NO") + nl;
  out += "OverTimeLimit=NONE PreemptMode=" + (p.preempt_mode().empty() ? std::string("OFF") : p.preempt_mode()) + nl;
  if (!p.topology().empty()) out += "Topology=" + p.topology() + nl;  // Slurm 25.05
  out += "State=" + p.state() + " TotalCPUs=" + std::to_string(t.cpus) + " TotalNodes=" + std::to_string(p.total_nodes()) +
         " SelectTypeParameters=NONE" + nl;
  out += "JobDefaults=(null)" + nl;
  out += (p.def_mem_per_cpu_mib() > 0 ? "DefMemPerCPU=" + std::to_string(p.def_mem_per_cpu_mib())
                                      : std::string("DefMemPerNode=UNLIMITED")) +
         " MaxMemPerNode=UNLIMITED" + nl;
  out += "TRES=cpu=" + std::to_string(t.cpus);
  if (t.mem_mib > 0) out += ",mem=" + format_size_mib(t.mem_mib);
  out += ",node=" + std::to_string(p.total_nodes()) + ",billing=" + std::to_string(t.cpus);
  if (t.gpus > 0) out += ",gres/gpu=" + std::to_string(t.gpus);
  return out + "\n\n";
}

}  // namespace hq::cmd
