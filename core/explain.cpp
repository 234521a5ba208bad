#include "core/explain.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/constraint.hpp"
#include "core/hostlist.hpp"
#include "core/job_shape.hpp"
#include "core/node_fit.hpp"
#include "core/placement.hpp"
#include "core/topology.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

// A node that takes no job now: its state as sinfo shows it ("*": not responding), and why.
std::string unusable_text(const Node& n) {
  std::string state = node_state_name(n);
  if (n.registered && !n.responding) state += "* (not responding)";
  const std::string& reason = node_reason(n);
  return state + (reason.empty() ? "" : " (" + reason + ")");
}

// Why this node cannot take the job now, or "" when it can: its state and features, then
// the shared fit rule (core/node_fit.hpp), against the node's size first, then what is free.
std::string node_verdict(const Node& n, const Job& job, const JobShape& sh, const Constraint& c,
                         const std::vector<std::string>& required, const std::vector<std::string>& excluded) {
  if (std::find(excluded.begin(), excluded.end(), n.name) != excluded.end()) return "excluded by --exclude";
  if (!required.empty() && only_listed_nodes(job.spec, required.size()) &&
      std::find(required.begin(), required.end(), n.name) == required.end())
    return "not in --nodelist";
  if (!node_schedulable(n)) return unusable_text(n);
  if (!c.empty() && std::none_of(c.alternatives.begin(), c.alternatives.end(),
                                 [&](const ConstraintAlternative& a) { return node_matches(a, n.features); }))
    return "lacks the features '" + job.spec.constraint + "'";
  NodeSize size = node_size(n, sh.need, job.spec.gpu_type);
  if (FitRefusal why = fit_refusal(size, all_free(size), sh.need); why != FitRefusal::kNone)
    return "too small for " + needed_text(why, sh.need, job.spec.gpu_type) + " per node (" +
           free_text(why, size, all_free(size)) + ")";
  NodeFree free = node_free(n, sh.need, job.spec.gpu_type);
  if (FitRefusal why = fit_refusal(size, free, sh.need); why != FitRefusal::kNone)
    return "busy: needs " + needed_text(why, sh.need, job.spec.gpu_type) + ", " + free_text(why, size, free);
  return "";
}

// Block topology: the level the job's nodes need, and which block of it holds most of the
// nodes that could take it now (a job waits rather than span blocks it may not).
// Switch tree: the switch that has most of the nodes that could take the job now below it,
// the lowest of those (a job waits rather than span switches without a common one).
void explain_switches(const ClusterState& s, const TopologyConfig& t, const Job& job, const std::vector<std::string>& fit,
                      std::vector<std::string>& out) {
  SwitchTree tree = switch_tree_of(s, t);
  if (!tree.active()) return;
  int32_t nodes = std::max(1, job.spec.nodes_min);
  std::set<std::string> could(fit.begin(), fit.end());
  const TopoSwitch* best = nullptr;
  size_t best_count = 0;
  for (int32_t at : tree.candidates_for(1)) {  // lowest level first, then the tightest
    const TopoSwitch& sw = tree.switches[static_cast<size_t>(at)];
    size_t n = static_cast<size_t>(std::count_if(sw.nodes.begin(), sw.nodes.end(), [&](const std::string& x) { return could.count(x) > 0; }));
    if (!best || n > best_count) best = &sw, best_count = n;
    if (best_count >= static_cast<size_t>(nodes)) break;  // the lowest that holds it
  }
  if (job.spec.switches > 0)
    out.push_back("  topology: --switches=" + std::to_string(job.spec.switches) + ": it waits up to " +
                  format_limit(std::max<Duration>(0, job.spec.switch_wait)) + " after it became eligible for a place on " +
                  std::to_string(job.spec.switches) + " leaf switch" + (job.spec.switches == 1 ? "" : "es") + " at most");
  if (!best) return;
  out.push_back("  topology: " + std::to_string(nodes) + " node" + (nodes == 1 ? "" : "s") +
                " must fit below one switch; the most that could take it now below one is " + std::to_string(best_count) +
                " of " + std::to_string(best->nodes.size()) + " below " + best->name + " (level " + std::to_string(best->level) +
                ")" + (static_cast<int32_t>(best_count) >= nodes ? ": it fits there" : ": it waits for a switch to free up"));
}

void explain_blocks(const ClusterState& s, const Job& job, const std::vector<std::string>& fit,
                    std::vector<std::string>& out) {
  // The topology of its (first) partition.
  std::string_view part = job.partition.view();
  const TopologyConfig& t = topology_of_partition(s, std::string(part.substr(0, part.find(','))));
  if (!t.present || !job.spec.nodelist.empty()) return;
  if (!t.switches.empty()) return explain_switches(s, t, job, fit, out);
  BlockTopology topo = block_topology_of(s, t);
  if (!topo.active()) return;
  int32_t nodes = std::max(1, job.spec.nodes_min);
  int32_t level = topo.level_for(nodes);
  std::string head = "  topology: " + std::to_string(nodes) + " node" + (nodes == 1 ? "" : "s");
  if (level < 0) {
    out.push_back(head + " is more than any block level holds: it may use every block");
    return;
  }
  std::set<std::string> could(fit.begin(), fit.end());
  const TopoBlock* best = nullptr;
  size_t best_count = 0;
  for (int32_t b : topo.by_level[static_cast<size_t>(level)]) {
    const TopoBlock& block = topo.blocks[static_cast<size_t>(b)];
    size_t n = static_cast<size_t>(std::count_if(block.nodes.begin(), block.nodes.end(), [&](const std::string& x) { return could.count(x) > 0; }));
    if (!best || n > best_count) best = &block, best_count = n;
  }
  if (!best) return;
  std::string where = "one block of level " + std::to_string(level) + " (BlockSize=" + std::to_string(best->size) + ")";
  out.push_back(head + " must fit in " + where + "; the most that could take it now in one is " +
                std::to_string(best_count) + " of " + std::to_string(best->nodes.size()) + " in " + best->name +
                (static_cast<int32_t>(best_count) >= nodes ? ": it fits there" : ": it waits for a block to free up"));
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
  explain_blocks(s, job, fit, out);
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
