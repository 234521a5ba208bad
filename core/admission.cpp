// check_ever_runnable: the submit-time test that a job could run in at least one of
// its partitions on an otherwise idle cluster (DESIGN §4: never queue the impossible).
#include <algorithm>
#include <climits>

#include "core/constraint.hpp"
#include "core/hostlist.hpp"
#include "core/job_shape.hpp"
#include "core/scheduler.hpp"

namespace hq {
namespace {

struct NodeSize {
  const Node* node;
  int64_t cpus, mem;  // an unknown size (no agent yet) cannot rule a job out
};

// Units a node offers on its own GPUs of the job's type (a node without GPUs in the
// config and no agent yet may still find some: unknown, so no limit).
int64_t units_by_gpus(const Node& n, const JobSpec& spec, const UnitNeed& need) {
  if (need.gpus == 0 && need.node_gpus == 0) return INT64_MAX;
  if (n.gpus.empty() && !n.registered) return INT64_MAX;
  int64_t have = 0;
  for (const NodeGpu& g : n.gpus) have += spec.gpu_type.empty() || g.type == spec.gpu_type;
  if (have < need.node_gpus) return 0;
  return need.gpus > 0 ? (have - need.node_gpus) / need.gpus : INT64_MAX;
}

// The CPUs a job may use on a node: RestrictedCoresPerGPU keeps some from CPU-only jobs.
int64_t usable_cpus(const NodeSize& n, const UnitNeed& need) {
  if (need.gpus > 0 || need.node_gpus > 0) return n.cpus;
  return n.cpus - int64_t{n.node->restricted_cpus_per_gpu} * static_cast<int64_t>(n.node->gpus.size());
}

Status check_in_partition(const ClusterState& s, const Job& job, const PartitionConfig& p, const Constraint& constraint,
                          const std::vector<std::string>& required, const std::vector<std::string>& excluded) {
  if (p.max_time != kUnlimited && (job.time_limit == kUnlimited || job.time_limit > p.max_time))
    return invalid("Requested time limit is invalid (missing or exceeds some limit): partition " + p.name +
                   " allows at most " + std::to_string(p.max_time / 60) + " minutes");
  if ((p.max_nodes && job.spec.nodes_min > p.max_nodes) || job.spec.nodes_min < p.min_nodes)
    return invalid("Node count specification invalid: partition " + p.name + " allows " + std::to_string(p.min_nodes) +
                   "-" + (p.max_nodes ? std::to_string(p.max_nodes) : std::string("any")) + " nodes");
  std::vector<NodeSize> nodes;
  for (const auto& name : p.nodes) {
    if (std::find(excluded.begin(), excluded.end(), name) != excluded.end()) continue;
    if (!required.empty() && std::find(required.begin(), required.end(), name) == required.end() &&
        job.spec.nodes_min <= static_cast<int32_t>(required.size()))
      continue;
    auto it = s.nodes.find(name);
    if (it == s.nodes.end()) continue;
    const Node& n = it->second;
    nodes.push_back({&n, n.cpus > 0 ? n.cpus : int64_t{1} << 30, n.mem_mib > 0 ? n.mem_mib : int64_t{1} << 50});
  }
  for (const auto& r : required)
    if (std::find(p.nodes.begin(), p.nodes.end(), r) == p.nodes.end())
      return invalid("Requested node configuration is not available: node " + r + " is not in partition " + p.name);
  JobShape sh = job_shape(job.spec, p, 1);
  std::string gpu_reason;
  size_t alts = std::max<size_t>(1, constraint.alternatives.size());
  for (size_t a = 0; a < alts; ++a) {
    const ConstraintAlternative* alt = constraint.empty() ? nullptr : &constraint.alternatives[a];
    int64_t units = 0;
    bool counts_ok = true, gpus_short = false;
    for (const NodeSize& n : nodes) {
      if (alt && !node_matches(*alt, n.node->features)) continue;
      int64_t u;
      if (sh.need.whole_node) u = sh.spread ? std::min<int64_t>(sh.units, n.cpus / sh.need.cpus) : 1;
      else if (n.mem < sh.need.node_mem) u = 0;
      else {
        u = usable_cpus(n, sh.need) / sh.need.cpus;
        if (sh.need.mem > 0) u = std::min<int64_t>(u, (n.mem - sh.need.node_mem) / sh.need.mem);
        u = std::min<int64_t>(u, sh.need.max_units);
      }
      int64_t by_gpus = units_by_gpus(*n.node, job.spec, sh.need);
      if (by_gpus < u) gpus_short = true;
      units += std::max<int64_t>(0, std::min(u, by_gpus));
    }
    if (gpus_short && units < sh.units) {
      gpu_reason = "Requested node configuration is not available: partition '" + p.name + "' has no node with " +
                   std::to_string(sh.need.node_gpus + sh.need.gpus) + " " +
                   (job.spec.gpu_type.empty() ? std::string("GPU(s)") : job.spec.gpu_type + " GPU(s)") +
                   " for this job";
      continue;
    }
    if (alt) {
      for (const auto& [feature, count] : alt->counts) {
        int32_t have = 0;
        for (const NodeSize& n : nodes) have += has_feature(n.node->features, feature);
        counts_ok = counts_ok && have >= count;
      }
    }
    if (units >= sh.units && counts_ok) return Status::ok();
  }
  if (!gpu_reason.empty()) return invalid(gpu_reason);
  return invalid("Requested node configuration is not available: partition '" + p.name + "' has " +
                 std::to_string(nodes.size()) + " node(s) that could serve this job, too few or too small" +
                 (constraint.empty() ? "" : " with features '" + job.spec.constraint + "'"));
}

}  // namespace

Status check_ever_runnable(const ClusterState& s, const Job& job) {
  auto constraint = parse_constraint(job.spec.constraint);
  if (!constraint) return constraint.status();
  std::vector<std::string> required, excluded;
  for (auto [text, out] : {std::pair{&job.spec.nodelist, &required}, std::pair{&job.spec.exclude, &excluded}}) {
    if (text->empty()) continue;
    auto names = expand_hostlist(*text);
    if (!names) return names.status().with_context("Invalid node name specified");
    for (const auto& n : *names) {
      if (!s.nodes.count(n)) return invalid("Invalid node name specified: " + n);
      out->push_back(n);
    }
  }
  Status first;
  bool any = false;
  for_each_partition(job, [&](const std::string& name) {
    if (any) return;
    const PartitionConfig* p = find_partition(s.partitions, name);
    Status st = !p ? invalid("invalid partition name specified: " + name)
                   : check_in_partition(s, job, *p, *constraint, required, excluded);
    if (st) any = true;
    else if (first.is_ok()) first = st;
  });
  return any ? Status::ok() : first;
}

}  // namespace hq
