#include "core/admission.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/constraint.hpp"
#include "core/hostlist.hpp"
#include "core/job_shape.hpp"
#include "core/node_fit.hpp"
#include "core/placement.hpp"

namespace hq {
namespace {

// -w and -x as node names.
struct NodeChoice {
  std::vector<std::string> required, excluded;
  bool is_required(const std::string& name) const { return listed(required, name); }
  bool is_excluded(const std::string& name) const { return listed(excluded, name); }
  static bool listed(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  }
};

Status unavailable(const std::string& why) { return invalid("Requested node configuration is not available: " + why); }

// A node's size as far as it is known: a node no agent has reported yet cannot rule a job out.
NodeSize known_size(const Node& n, const JobShape& sh, const std::string& gpu_type) {
  NodeSize size = node_size(n, sh.need, gpu_type);
  if (n.cpus <= 0) size.cpus = 1 << 20;
  if (n.mem_mib <= 0) size.mem = int64_t{1} << 50;
  if (n.gpus.empty() && !n.registered) size.gpus = sh.need.uses_gpus() ? kMaxNodeGpus : 0;
  return size;
}

Status check_time_limit(const Job& job, const PartitionConfig& p) {
  if (p.max_time == kUnlimited || (job.time_limit != kUnlimited && job.time_limit <= p.max_time)) return Status::ok();
  return invalid("Requested time limit is invalid (missing or exceeds some limit): partition " + p.name +
                 " allows at most " + std::to_string(p.max_time / 60) + " minutes");
}

// Slurm's ESLURM_TOO_MANY_REQUESTED_NODES: more nodes than the partition has or allows.
Status check_node_count(const std::vector<const Node*>& known, const Job& job, const PartitionConfig& p,
                        const JobShape& sh) {
  int32_t wanted = sh.spread ? job.spec.nodes_min : sh.units;
  auto has = static_cast<int64_t>(known.size());
  if ((p.max_nodes && job.spec.nodes_min > p.max_nodes) || job.spec.nodes_min < p.min_nodes)
    return invalid("Node count specification invalid: partition " + p.name + " allows " + std::to_string(p.min_nodes) +
                   "-" + (p.max_nodes ? std::to_string(p.max_nodes) : std::string("any")) + " nodes");
  if (wanted > has)
    return invalid("Node count specification invalid: the job needs " + std::to_string(wanted) + " nodes, partition " +
                   p.name + " has " + std::to_string(has));
  return Status::ok();
}

// The partition's nodes the cluster knows, in the partition's order. A partition lists its
// nodes in the node table's (natural) order, so the node after the last one found is
// usually the next one: it is checked by equality first, and only a miss is looked up by
// name (a lookup per node made this check some 10 comparisons of names a node, most of a
// submission's cost on a partition of a thousand nodes).
std::vector<const Node*> known_nodes(const ClusterState& s, const PartitionConfig& p) {
  std::vector<const Node*> out;
  out.reserve(p.nodes.size());
  auto next = s.nodes.begin();
  for (const auto& name : p.nodes) {
    auto it = next != s.nodes.end() && next->first == name ? next : s.nodes.find(name);
    if (it == s.nodes.end()) continue;
    out.push_back(&it->second);
    next = std::next(it);
  }
  return out;
}

// The partition's nodes the job may use: not excluded, and only the -w nodes unless the
// job needs more nodes than listed (the scheduler's rule).
std::vector<const Node*> usable_nodes(const std::vector<const Node*>& known, const Job& job, const NodeChoice& choice) {
  bool only_required = !choice.required.empty() && only_listed_nodes(job.spec, choice.required.size());
  if (choice.excluded.empty() && !only_required) return known;
  std::vector<const Node*> out;
  for (const Node* n : known)
    if (!choice.is_excluded(n->name) && (!only_required || choice.is_required(n->name))) out.push_back(n);
  return out;
}

// How the partition's nodes answer one constraint alternative on an idle cluster.
struct Tally {
  int64_t units = 0;
  std::vector<const Node*> fit;                            // offer at least one unit
  std::map<FitRefusal, std::vector<std::string>> refused;  // by cause, node names
  std::vector<std::string> unmatched;                      // lack the features
};

Tally tally(const std::vector<const Node*>& nodes, const JobShape& sh, const ConstraintAlternative* alt,
            const std::string& gpu_type) {
  Tally t;
  for (const Node* n : nodes) {
    if (alt && !node_matches(*alt, n->features)) {
      t.unmatched.push_back(n->name);
      continue;
    }
    NodeSize size = known_size(*n, sh, gpu_type);
    int32_t units = units_on_node(size, all_free(size), sh.need);
    if (units == 0) {
      t.refused[fit_refusal(size, all_free(size), sh.need)].push_back(n->name);
      continue;
    }
    t.units += units;
    t.fit.push_back(n);
  }
  return t;
}

// "n[1-4] too small for 2000 MiB of memory; g1 too small for 9 GPU(s)".
std::string refusals_text(const Tally& t, const UnitNeed& need, const std::string& gpu_type) {
  std::string out;
  for (const auto& [why, names] : t.refused)
    out += (out.empty() ? "" : "; ") + compress_hostlist(names) + " too small for " + needed_text(why, need, gpu_type);
  return out;
}

// Why a -w node that the tally did not find fitting cannot take the job.
std::string required_refusal(const Tally& t, const std::string& name, const Job& job, const UnitNeed& need) {
  if (NodeChoice::listed(t.unmatched, name))
    return "node " + name + " (--nodelist) lacks the features '" + job.spec.constraint + "'";
  for (const auto& [why, names] : t.refused)
    if (NodeChoice::listed(names, name))
      return "node " + name + " (--nodelist) is too small for " + needed_text(why, need, job.spec.gpu_type);
  return "node " + name + " (--nodelist) cannot take this job";
}

// With a switch tree (topology/tree) a job runs below one switch: one must hold enough of
// the nodes that could take it (Slurm refuses the job at submit when none does).
Status check_one_switch(const SwitchTree& tree, const Tally& t, const JobShape& sh, const PartitionConfig& p,
                        const std::string& gpu_type) {
  std::unordered_map<std::string, int64_t> fit_units;
  for (const Node* n : t.fit) {
    NodeSize size = known_size(*n, sh, gpu_type);
    fit_units[n->name] = sh.spread ? units_on_node(size, all_free(size), sh.need) : 1;
  }
  size_t most = 0;
  int64_t most_units = -1;
  for (size_t i = 0; i < tree.switches.size(); ++i) {  // a switch's nodes: each once, however reached
    int64_t units = 0;
    for (const auto& name : tree.switches[i].nodes)
      if (auto it = fit_units.find(name); it != fit_units.end()) units += it->second;
    if (units >= sh.units) return Status::ok();
    if (units > most_units) most = i, most_units = units;
  }
  return unavailable("no switch holds enough of partition " + p.name + "'s nodes for its " + std::to_string(sh.units) +
                     (sh.spread ? " tasks" : " nodes") + " (the most, " + std::to_string(std::max<int64_t>(0, most_units)) +
                     ", below switch " + tree.switches[most].name + "): a job never spans switches without a common ancestor");
}

// A job with -w on a switch tree: its -w nodes must be on switches with a common ancestor
// (Slurm's ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE).
Status check_required_switches(const SwitchTree& tree, const NodeChoice& choice) {
  std::vector<int32_t> leaves;
  for (const auto& name : choice.required) {
    auto leaf = tree.node_leaf.find(name);
    if (leaf == tree.node_leaf.end())
      return invalid("Requested topology configuration is not available: node " + name + " (--nodelist) is on no switch");
    leaves.push_back(leaf->second);
  }
  if (tree.common_ancestor(leaves) < 0)
    return invalid("Requested topology configuration is not available: the --nodelist nodes " +
                   compress_hostlist(choice.required) + " have no switch in common");
  return Status::ok();
}

Status check_alternative(const Job& job, const PartitionConfig& p, const JobShape& sh, const ConstraintAlternative* alt,
                         const std::vector<const Node*>& nodes, const NodeChoice& choice, const SwitchTree& tree) {
  Tally t = tally(nodes, sh, alt, job.spec.gpu_type);
  std::string features = alt ? " with features '" + job.spec.constraint + "'" : "";
  int32_t most_nodes = sh.spread ? std::min(sh.units, sh.nodes_max) : sh.nodes_max;  // each -w node gets a unit
  if (static_cast<size_t>(most_nodes) < choice.required.size())
    return unavailable("it runs on at most " + std::to_string(most_nodes) + " node(s), fewer than the " +
                       std::to_string(choice.required.size()) + " --nodelist nodes");
  for (const auto& name : choice.required)
    if (std::none_of(t.fit.begin(), t.fit.end(), [&](const Node* n) { return n->name == name; }))
      return unavailable(required_refusal(t, name, job, sh.need));
  if (alt) {
    for (const auto& entry : alt->counts) {
      const auto& feature = entry.first;  // named, not a structured binding: clang 14 cannot capture those
      const auto count = entry.second;
      auto have = std::count_if(t.fit.begin(), t.fit.end(),
                                [&](const Node* n) { return has_feature(n->features, feature); });
      if (have < count)
        return unavailable("partition " + p.name + " has " + std::to_string(have) + " node(s) with feature '" + feature +
                           "' that could take this job, it asks for " + std::to_string(count));
    }
  }
  if (t.units >= sh.units && tree.active())
    return choice.required.empty() ? check_one_switch(tree, t, sh, p, job.spec.gpu_type) : check_required_switches(tree, choice);
  if (t.units >= sh.units) return Status::ok();
  if (alt && t.unmatched.size() == nodes.size())  // Slurm's ESLURM_INVALID_FEATURE: no node has them
    return invalid("Invalid feature specification: no node of partition " + p.name + " has the features '" +
                   job.spec.constraint + "'");
  if (t.fit.empty())
    return unavailable("partition " + p.name + " has no node that could take this job" + features +
                       (t.refused.empty() ? "" : ": " + refusals_text(t, sh.need, job.spec.gpu_type)));
  return unavailable("partition " + p.name + " has " + std::to_string(t.fit.size()) +
                     " node(s) that could take this job" + features + ", too few for its " + std::to_string(sh.units) +
                     (sh.spread ? " tasks" : " nodes"));
}

Status check_in_partition(const ClusterState& s, const Job& job, const PartitionConfig& p, const Constraint& constraint,
                          const NodeChoice& choice, const SwitchTree& tree) {
  if (Status st = check_time_limit(job, p); !st) return st;
  JobShape sh = job_shape(job.spec, p, 1);
  std::vector<const Node*> known = known_nodes(s, p);
  if (Status st = check_node_count(known, job, p, sh); !st) return st;
  for (const auto& r : choice.required)
    if (std::find(p.nodes.begin(), p.nodes.end(), r) == p.nodes.end())
      return unavailable("node " + r + " is not in partition " + p.name);
  std::vector<const Node*> nodes = usable_nodes(known, job, choice);
  Status first;
  size_t alts = std::max<size_t>(1, constraint.alternatives.size());
  for (size_t a = 0; a < alts; ++a) {
    const ConstraintAlternative* alt = constraint.empty() ? nullptr : &constraint.alternatives[a];
    Status st = check_alternative(job, p, sh, alt, nodes, choice, tree);
    if (st) return st;
    if (first.is_ok()) first = st;
  }
  return first;
}

Result<NodeChoice> node_choice(const ClusterState& s, const JobSpec& spec) {
  NodeChoice choice;
  for (auto [text, out] : {std::pair{&spec.nodelist, &choice.required}, std::pair{&spec.exclude, &choice.excluded}}) {
    if (text->empty()) continue;
    auto names = expand_hostlist(*text);
    if (!names) return names.status().with_context("Invalid node name specified");
    for (const auto& n : *names) {
      if (!s.nodes.count(n)) return invalid("Invalid node name specified: " + n);
      out->push_back(n);
    }
  }
  return choice;
}

}  // namespace

Status check_ever_runnable(const ClusterState& s, const Job& job) {
  auto constraint = parse_constraint(job.spec.constraint);
  if (!constraint) return constraint.status();
  auto choice = node_choice(s, job.spec);
  if (!choice) return choice.status();
  Status first;
  bool any = false;
  for_each_partition(job, [&](const std::string& name) {
    if (any) return;
    const PartitionConfig* p = find_partition(s.partitions, name);
    const TopologyConfig& topo = topology_of_partition(s, name);  // its switch tree, if it places by one
    Status st = !p ? invalid("Invalid partition name specified: " + name)
                   : check_in_partition(s, job, *p, *constraint, *choice, topo.switches.empty() ? SwitchTree{} : switch_tree_of(s, topo));
    if (st) any = true;
    else if (first.is_ok()) first = st;
  });
  return any ? Status::ok() : first;
}

}  // namespace hq
