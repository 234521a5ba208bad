#include "core/config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "core/hostlist.hpp"
#include "core/units.hpp"

namespace hq {
namespace {
constexpr std::array<std::string_view, 4> kPartStates{"UP", "DOWN", "DRAIN", "INACTIVE"};
constexpr std::array<std::string_view, 3> kPreemptModes{"OFF", "CANCEL", "REQUEUE"};
constexpr std::array<std::string_view, 3> kPolicies{"fifo", "easy", "backfill"};
constexpr std::array<std::string_view, 6> kUsageResets{"none", "daily", "weekly", "monthly", "quarterly", "yearly"};

template <typename E, size_t N>
bool parse_name(const std::array<std::string_view, N>& names, std::string_view in, E& out) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i].size() != in.size()) continue;
    bool same = true;
    for (size_t k = 0; k < in.size() && same; ++k) same = std::tolower(names[i][k]) == std::tolower(in[k]);
    if (same) { out = static_cast<E>(i); return true; }
  }
  return false;
}
}  // namespace

std::string_view partition_state_name(PartitionState s) { return kPartStates[static_cast<size_t>(s)]; }
bool parse_partition_state(std::string_view n, PartitionState& out) { return parse_name(kPartStates, n, out); }
std::string_view preempt_mode_name(PreemptMode m) { return kPreemptModes[static_cast<size_t>(m)]; }
bool parse_preempt_mode(std::string_view n, PreemptMode& out) { return parse_name(kPreemptModes, n, out); }
std::string_view sched_policy_name(SchedPolicy p) { return kPolicies[static_cast<size_t>(p)]; }
bool parse_sched_policy(std::string_view n, SchedPolicy& out) { return parse_name(kPolicies, n, out); }
std::string_view usage_reset_name(UsageReset r) { return kUsageResets[static_cast<size_t>(r)]; }
bool parse_usage_reset(std::string_view n, UsageReset& out) { return parse_name(kUsageResets, n, out); }

std::vector<std::string> settings_needing_restart(const ClusterConfig& from, const ClusterConfig& to) {
  std::vector<std::string> out;
  if (from.nodes != to.nodes) out.push_back("nodes");
  if (from.partitions != to.partitions) out.push_back("partitions");
  if (from.controller != to.controller) out.push_back("[controller] host, port, state_dir, auth_socket or client_socket");
  if (from.name != to.name) out.push_back("the cluster name");
  if (from.keys_dir != to.keys_dir) out.push_back("keys_dir");
  if (from.accounting != to.accounting) out.push_back("[accounting]");
  if (from.topology != to.topology || from.other_topologies != to.other_topologies) out.push_back("[topology]");
  if (from.handshake_timeout != to.handshake_timeout || from.client_idle_timeout != to.client_idle_timeout ||
      from.max_connections != to.max_connections || from.max_connections_per_peer != to.max_connections_per_peer)
    out.push_back("connection limits");
  return out;
}

namespace {

// The topologies: each valid, their names unique.
Status validate_topologies(const ClusterConfig& c) {
  if (Status s = validate_topology(c.topology); !s) return s;
  std::set<std::string> names{c.topology.name};
  for (const auto& t : c.other_topologies) {
    if (Status s = validate_topology(t); !s) return s;
    if (!names.insert(t.name).second) return invalid("Duplicate topology name: " + t.name);
  }
  return Status::ok();
}

bool has_topology(const ClusterConfig& c, const std::string& name) {
  if (c.topology.present && c.topology.name == name) return true;
  return std::any_of(c.other_topologies.begin(), c.other_topologies.end(), [&](const TopologyConfig& t) { return t.name == name; });
}

}  // namespace

Status validate_config(const ClusterConfig& c) {
  if (Status s = validate_topologies(c); !s) return s;
  std::set<std::string> nodes;
  for (const auto& n : c.nodes) {
    for (const auto& name : n.names) {
      if (!nodes.insert(name).second) return invalid("node '" + name + "' is declared twice");
    }
  }
  std::set<std::string> parts;
  int defaults = 0;
  for (const auto& p : c.partitions) {
    if (!parts.insert(p.name).second) return invalid("partition '" + p.name + "' is declared twice");
    if (p.is_default) ++defaults;
    if (p.max_nodes && p.min_nodes > p.max_nodes)
      return invalid("partition '" + p.name + "': min_nodes is larger than max_nodes");
    if (!p.topology.empty() && !has_topology(c, p.topology))
      return invalid("partition '" + p.name + "': Invalid partition topology: no [[topology]] is named '" + p.topology + "'");
    if (p.max_time != kUnlimited && p.default_time != kUnlimited && p.default_time > p.max_time)
      return invalid("partition '" + p.name + "': default_time is longer than max_time");
    for (const auto& name : p.nodes) {
      if (!nodes.count(name))
        return invalid("partition '" + p.name + "' names node '" + name + "', which no [[node]] declares");
    }
  }
  if (defaults > 1) return invalid("more than one partition has default = true");
  if (c.node_timeout <= 0) return invalid("node_timeout must be positive");
  if (c.heartbeat_interval <= 0) return invalid("heartbeat_interval must be positive");
  if (c.inactive_limit < 0 || c.inactive_limit > 65533)
    return invalid("inactive_limit must be 0 (off) to 65533 seconds (got " + std::to_string(c.inactive_limit) + ")");
  if (c.fence_timeout < 0 || (c.fence_timeout > 0 && (c.fence_timeout < 2 * c.heartbeat_interval ||
                                                      c.fence_timeout + c.heartbeat_interval > c.node_timeout)))
    return invalid("fence_timeout must be 0 (off), or at least twice heartbeat_interval and at most node_timeout "
                   "minus heartbeat_interval (" + std::to_string(c.fence_timeout) + " s)");
  const SchedulerConfig& k = c.scheduler;
  if (k.bf_resolution < 1 || k.bf_resolution > 3600) return invalid("[scheduler] bf_resolution must be 1-3600 seconds");
  if (k.bf_window < 60 || k.bf_window > 43200 * 60) return invalid("[scheduler] bf_window must be 1-43200 minutes");
  if (k.bf_window / k.bf_resolution > 200000) return invalid("[scheduler] bf_window / bf_resolution is over 200000 slots");
  if (k.weights.max_age < 1) return invalid("[scheduler] priority_max_age must be positive");
  return Status::ok();
}

Status parse_partition_nodes(std::string_view expr, PartitionConfig& p) {
  p.nodes.clear();
  p.node_features.clear();
  p.node_blocks.clear();
  p.node_switches.clear();
  p.all_nodes = false;
  std::string hosts;
  // Items split at top-level commas (a hostlist's own commas sit inside brackets).
  int depth = 0;
  size_t start = 0;
  auto item = [&](std::string_view it) -> Status {
    it = trim(it);
    if (it.empty()) return Status::ok();
    if (it == "ALL") {
      p.all_nodes = true;
      return Status::ok();
    }
    for (auto [prefix, list] : {std::pair{std::string_view("feature{"), &p.node_features},
                                std::pair{std::string_view("block{"), &p.node_blocks},
                                std::pair{std::string_view("switch{"), &p.node_switches}}) {
      if (it.rfind(prefix, 0) != 0 || it.back() != '}') continue;
      std::string_view f = it.substr(prefix.size(), it.size() - prefix.size() - 1);
      if (f.empty() || f.find_first_of("{}[],& ") != std::string_view::npos)
        return invalid("bad name in '" + std::string(it) + "'");
      list->emplace_back(f);
      return Status::ok();
    }
    if (it.find('{') != std::string_view::npos) {
      return invalid("unknown node function '" + std::string(it) + "' (known: feature{NAME}, block{NAME}, switch{NAME}, ALL)");
    } else {
      hosts += (hosts.empty() ? "" : ",") + std::string(it);
    }
    return Status::ok();
  };
  for (size_t i = 0; i <= expr.size(); ++i) {
    char c = i < expr.size() ? expr[i] : ',';
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      if (Status s = item(expr.substr(start, i - start)); !s) return s;
      start = i + 1;
    }
  }
  if (!hosts.empty()) {
    auto names = expand_hostlist(hosts);
    if (!names) return names.status();
    p.nodes = std::move(names).value();
  }
  if (p.nodes.empty() && p.node_features.empty() && p.node_blocks.empty() && p.node_switches.empty() && !p.all_nodes)
    return invalid("names no nodes");
  return Status::ok();
}

bool partition_wants(const PartitionConfig& p, const std::string& node, const std::vector<std::string>& features,
                     const std::string& block, const std::string& switch_name) {
  return partition_wants_by_function(p, features, block, switch_name) ||
         std::find(p.nodes.begin(), p.nodes.end(), node) != p.nodes.end();
}

bool partition_wants_by_function(const PartitionConfig& p, const std::vector<std::string>& features,
                                 const std::string& block, const std::string& switch_name) {
  if (p.all_nodes) return true;
  auto listed = [](const std::vector<std::string>& units, const std::string& label) {  // any topology's unit
    return !label.empty() && std::any_of(units.begin(), units.end(), [&](const std::string& u) { return label_names_unit(label, u); });
  };
  if (listed(p.node_blocks, block) || listed(p.node_switches, switch_name)) return true;
  for (const auto& f : p.node_features)
    if (std::find(features.begin(), features.end(), f) != features.end()) return true;
  return false;
}

const PartitionConfig* find_partition(const std::vector<PartitionConfig>& parts, const std::string& name) {
  for (const auto& p : parts)
    if (p.name == name) return &p;
  return nullptr;
}

const PartitionConfig* find_partition(const ClusterConfig& c, const std::string& name) {
  return find_partition(c.partitions, name);
}

const PartitionConfig* default_partition(const ClusterConfig& c) {
  for (const auto& p : c.partitions)
    if (p.is_default) return &p;
  return c.partitions.empty() ? nullptr : &c.partitions.front();
}

ClusterConfig uniform_cluster_config(const std::vector<std::string>& names, int32_t cpus, int64_t mem_mib,
                                     const std::string& partition) {
  ClusterConfig c;
  NodeConfig nc;
  nc.names = names;
  nc.cpus = cpus;
  nc.mem_mib = mem_mib;
  c.nodes.push_back(nc);
  PartitionConfig p;
  p.name = partition;
  p.nodes = names;
  p.is_default = true;
  c.partitions.push_back(p);
  return c;
}

const NodeConfig* find_node_config(const ClusterConfig& c, const std::string& node) {
  for (const auto& nc : c.nodes)
    for (const auto& n : nc.names)
      if (n == node) return &nc;
  return nullptr;
}

}  // namespace hq
