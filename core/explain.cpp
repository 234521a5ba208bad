#include "core/explain.hpp"

#include <algorithm>
#include <map>

#include "core/constraint.hpp"
#include "core/gpu_select.hpp"
#include "core/hostlist.hpp"
#include "core/job_shape.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

std::string node_verdict(const Node& n, const Job& job, const JobShape& sh, const Constraint& c,
                         const std::vector<std::string>& required, const std::vector<std::string>& excluded) {
  if (std::find(excluded.begin(), excluded.end(), n.name) != excluded.end()) return "excluded by --exclude";
  if (!required.empty() && std::find(required.begin(), required.end(), n.name) == required.end())
    return "not in --nodelist";
  if (!node_schedulable(n)) return std::string(node_state_name(n)) + (n.reason.empty() ? "" : " (" + n.reason + ")");
  if (!c.empty() && std::none_of(c.alternatives.begin(), c.alternatives.end(),
                                 [&](const ConstraintAlternative& a) { return node_matches(a, n.features); }))
    return "lacks the features '" + job.spec.constraint + "'";
  int32_t free_cpus = n.cpus - n.alloc_cpus;
  int64_t free_mem = n.mem_mib - n.alloc_mem_mib;
  int32_t cpus = sh.need.whole_node ? n.cpus : sh.need.cpus;
  int64_t mem = sh.need.whole_node ? n.mem_mib : sh.need.node_mem + sh.need.mem;
  if (cpus > n.cpus || mem > n.mem_mib)
    return "too small: has " + std::to_string(n.cpus) + " CPUs and " + std::to_string(n.mem_mib) + " MiB, needs " +
           std::to_string(cpus) + " CPUs and " + std::to_string(mem) + " MiB per node";
  int32_t gpus = sh.need.whole_node ? 0 : sh.need.node_gpus + sh.need.gpus;
  if (gpus > 0) {
    std::string what = job.spec.gpu_type.empty() ? "GPUs" : job.spec.gpu_type + " GPUs";
    int32_t have = 0, idle = free_gpus_of_type(n.gpus, n.gpu_used, job.spec.gpu_type);
    for (const NodeGpu& g : n.gpus) have += job.spec.gpu_type.empty() || g.type == job.spec.gpu_type;
    if (have < gpus) return "too few GPUs: has " + std::to_string(have) + " " + what + ", needs " + std::to_string(gpus);
    if (idle < gpus) return "GPUs busy: " + std::to_string(idle) + " of " + std::to_string(have) + " " + what + " free, needs " + std::to_string(gpus);
  } else if (n.restricted_cpus_per_gpu > 0) {
    int32_t kept = n.restricted_cpus_per_gpu * free_gpus_of_type(n.gpus, n.gpu_used, "");
    if (free_cpus - kept < cpus)
      return "busy: " + std::to_string(free_cpus) + " CPUs free, " + std::to_string(kept) +
             " of them kept for GPU jobs (restricted_cores_per_gpu), needs " + std::to_string(cpus);
  }
  if (free_cpus < cpus || free_mem < mem)
    return "busy: " + std::to_string(free_cpus) + " of " + std::to_string(n.cpus) + " CPUs and " +
           std::to_string(free_mem) + " MiB free, needs " + std::to_string(cpus) + " CPUs and " + std::to_string(mem) +
           " MiB" + (sh.need.whole_node ? " (whole node)" : "");
  return "";
}

void explain_partition(const ClusterState& s, const Job& job, const PartitionConfig& p, size_t max_lines,
                       std::vector<std::string>& out) {
  std::string head = "partition " + p.name + ": ";
  if (p.state == PartitionState::kDown || p.state == PartitionState::kInactive) {
    out.push_back(head + "state " + std::string(partition_state_name(p.state)) + ", nothing starts here");
    return;
  }
  if (p.max_time != kUnlimited && (job.time_limit == kUnlimited || job.time_limit > p.max_time)) {
    out.push_back(head + "time limit " + format_limit(job.time_limit) + " is over the partition's " + format_limit(p.max_time));
    return;
  }
  if ((p.max_nodes && job.spec.nodes_min > p.max_nodes) || job.spec.nodes_min < p.min_nodes) {
    out.push_back(head + std::to_string(job.spec.nodes_min) + " nodes is outside the partition's node limits");
    return;
  }
  auto c = parse_constraint(job.spec.constraint);
  if (!c) {
    out.push_back(head + c.status().message());
    return;
  }
  std::vector<std::string> required, excluded;
  if (!job.spec.nodelist.empty()) if (auto r = expand_hostlist(job.spec.nodelist)) required = *r;
  if (!job.spec.exclude.empty()) if (auto r = expand_hostlist(job.spec.exclude)) excluded = *r;
  JobShape sh = job_shape(job.spec, p, 1);
  std::map<std::string, std::vector<std::string>> by_cause;
  std::vector<std::string> fit;
  for (const auto& name : p.nodes) {
    auto it = s.nodes.find(name);
    if (it == s.nodes.end()) continue;
    std::string why = node_verdict(it->second, job, sh, *c, required, excluded);
    if (why.empty()) fit.push_back(name);
    else by_cause[why.substr(0, why.find(':'))].push_back(name + ": " + why);
  }
  out.push_back(head + std::to_string(fit.size()) + " of " + std::to_string(p.nodes.size()) + " nodes could take " +
                (sh.spread ? "some of its " + std::to_string(sh.units) + " tasks" : "one of its " + std::to_string(sh.units) + " nodes") +
                " now" + (fit.empty() ? "" : " (" + compress_hostlist(fit) + ")"));
  size_t shown = 0;
  for (const auto& [cause, lines] : by_cause) {
    for (const auto& line : lines) {
      if (shown++ < max_lines) out.push_back("  " + line);
    }
  }
  if (shown > max_lines) out.push_back("  ... and " + std::to_string(shown - max_lines) + " more nodes");
}

}  // namespace

std::vector<std::string> explain_job(const ClusterState& s, const Job& job, Time now, size_t max_node_lines) {
  std::vector<std::string> out;
  if (job.held()) out.push_back(std::string("held (") + (job.hold == HoldKind::kAdmin ? "by an administrator" : "by its user") + "): release it to run");
  if (job.dep_state == DepState::kWaiting) out.push_back("waiting for its dependency '" + job.spec.dependency + "'");
  if (job.dep_state == DepState::kNever) out.push_back("its dependency '" + job.spec.dependency + "' can never be satisfied");
  if (job.spec.begin_time > now) out.push_back("may not start before " + format_timestamp(job.spec.begin_time) + " (--begin)");
  for_each_partition(job, [&](const std::string& name) {
    const PartitionConfig* p = find_partition(s.partitions, name);
    if (!p) out.push_back("partition " + name + ": no longer configured");
    else explain_partition(s, job, *p, max_node_lines, out);
  });
  return out;
}

}  // namespace hq
