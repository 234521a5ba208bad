#include "core/hostlist_functions.hpp"

#include <algorithm>
#include <set>

#include "core/hostlist.hpp"
#include "core/switch_tree.hpp"
#include "core/topology.hpp"

namespace hq {
namespace {

// Items at top-level commas (a hostlist's and a function's own commas sit inside brackets).
std::vector<std::string_view> items(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    if (c == ',' && (depth == 0 || i == text.size())) {  // the end closes the last item, even an unclosed one
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// The nodes of the block named `name` (base or aggregated) in the first topology that has
// one, or of the agents' block labels; false when there is none.
bool block_nodes(const ClusterState& s, const std::vector<BlockTopology>& all, const std::string& name, std::vector<std::string>& out) {
  if (name.empty()) return false;
  for (const BlockTopology& t : all)
    for (const TopoBlock& b : t.blocks)
      if (b.name == name) {
        out.insert(out.end(), b.nodes.begin(), b.nodes.end());
        return true;
      }
  bool any = false;
  for (const auto& [node, n] : s.nodes)
    if (label_names_unit(n.block, name)) out.push_back(node), any = true;
  return any;
}

// The nodes of node `node`'s base block (its block label's without a topology); false when
// the node is unknown or in no block.
bool block_with(const ClusterState& s, const BlockTopology& t, const std::string& node, std::vector<std::string>& out) {
  if (!s.nodes.count(node)) return false;
  if (auto it = t.node_bblock.find(node); it != t.node_bblock.end()) {
    const TopoBlock& b = t.blocks[static_cast<size_t>(it->second)];
    out.insert(out.end(), b.nodes.begin(), b.nodes.end());
    return true;
  }
  std::string label = label_unit(s.nodes.at(node).block, s.topology.name, true);
  if (!label.empty() && block_nodes(s, {t}, label, out)) return true;
  out.push_back(node);  // in no block: itself, as Slurm's topology_p_whole_topo leaves it
  return true;
}

bool switch_nodes(const ClusterState& s, const std::string& name, std::vector<std::string>& out) {
  if (name.empty()) return false;
  bool any = false;
  for (const auto& [node, n] : s.nodes)
    if (label_names_unit(n.switch_name, name)) out.push_back(node), any = true;
  return any;
}

// What the functions read: each topology's blocks and switch tree (inactive where it has
// none), the cluster default first. block{} and switch{} name a unit of any topology; the
// *with{} functions read the default.
struct Topologies {
  std::vector<BlockTopology> blocks;
  std::vector<SwitchTree> trees;
};

// With a switch tree, as Slurm's topology/tree: switch{S} (or block{S}) is every node below
// switch S, at any level; false when S is no switch.
bool tree_switch_nodes(const SwitchTree& tree, const std::string& name, std::vector<std::string>& out) {
  int32_t at = tree.active() ? tree.find(name) : -1;
  if (at < 0) return false;
  const TopoSwitch& sw = tree.switches[static_cast<size_t>(at)];
  out.insert(out.end(), sw.nodes.begin(), sw.nodes.end());
  return true;
}

// With a switch tree, switchwith{N} (and blockwith{N}): the nodes of N's leaf switch, N
// alone on none (Slurm's topology_p_whole_topo); false when N is unknown.
bool tree_leaf_with(const ClusterState& s, const SwitchTree& tree, const std::string& node, std::vector<std::string>& out) {
  if (!s.nodes.count(node)) return false;
  auto leaf = tree.node_leaf.find(node);
  if (leaf == tree.node_leaf.end()) {
    out.push_back(node);
    return true;
  }
  const TopoSwitch& sw = tree.switches[static_cast<size_t>(leaf->second)];
  out.insert(out.end(), sw.nodes.begin(), sw.nodes.end());
  return true;
}

Status call(const ClusterState& s, const Topologies& topo, std::string_view item, std::vector<std::string>& out) {
  const BlockTopology& t = topo.blocks.front();
  const SwitchTree& tree = topo.trees.front();
  size_t open = item.find('{');
  size_t close = item.find('}', open);
  if (close == std::string_view::npos)
    return invalid("invalid node specified in hostlist function: \"" + std::string(item) + "\" (missing closing '}')");
  std::string fn(item.substr(0, open + 1));
  std::string arg(item.substr(open + 1, close - open - 1));
  auto bad_node = [&] { return invalid("invalid node specified in hostlist function: \"" + std::string(item) + "\""); };
  auto bad_unit = [&] {
    return invalid("invalid block or switch specified in hostlist function: \"" + std::string(item) + "\"");
  };
  bool is_with = fn == "blockwith{" || fn == "switchwith{";
  if (tree.active() && is_with) return tree_leaf_with(s, tree, arg, out) ? Status::ok() : bad_node();
  if (fn == "block{" || fn == "switch{")
    for (const SwitchTree& any : topo.trees)
      if (tree_switch_nodes(any, arg, out)) return Status::ok();
  if (fn == "blockwith{") return block_with(s, t, arg, out) ? Status::ok() : bad_node();
  if (fn == "switchwith{") {
    if (!s.nodes.count(arg)) return bad_node();
    std::string sw = label_unit(s.nodes.at(arg).switch_name, s.topology.name, true);
    if (!sw.empty()) return switch_nodes(s, sw, out), Status::ok();
    return block_with(s, t, arg, out) ? Status::ok() : bad_node();
  }
  if (fn == "block{" || fn == "switch{")
    return (fn == "switch{" && switch_nodes(s, arg, out)) || block_nodes(s, topo.blocks, arg, out) ? Status::ok() : bad_unit();
  if (fn == "feature{") {  // an unknown feature names no node, as in Slurm
    for (const auto& [node, n] : s.nodes)
      if (std::find(n.features.begin(), n.features.end(), arg) != n.features.end()) out.push_back(node);
    return Status::ok();
  }
  return invalid("Invalid hostlist_function specified: " + std::string(item));
}

}  // namespace

bool has_hostlist_function(std::string_view text) { return text.find('{') != std::string_view::npos; }

Result<std::vector<std::string>> expand_node_list(const ClusterState& s, std::string_view text) {
  std::vector<std::string> out;
  std::string plain;
  Topologies topo;
  bool topo_built = false;
  for (std::string_view item : items(text)) {
    if (!has_hostlist_function(item)) {
      plain += (plain.empty() ? "" : ",") + std::string(item);
      continue;
    }
    if (!plain.empty()) {  // keep the order the list gives
      auto names = expand_hostlist(plain);
      if (!names) return names.status();
      out.insert(out.end(), names->begin(), names->end());
      plain.clear();
    }
    if (!topo_built) {
      for (const TopologyConfig* t : topologies_of(s)) {
        topo.blocks.push_back(block_topology_of(s, *t));
        topo.trees.push_back(switch_tree_of(s, *t));
      }
      topo_built = true;
    }
    if (Status st = call(s, topo, item, out); !st) return st;
  }
  if (!plain.empty()) {
    auto names = expand_hostlist(plain);
    if (!names) return names.status();
    out.insert(out.end(), names->begin(), names->end());
  }
  std::set<std::string> seen;
  std::vector<std::string> once;
  for (auto& n : out)
    if (seen.insert(n).second) once.push_back(std::move(n));
  return once;
}

Result<std::string> resolve_hostlist_functions(const ClusterState& s, const std::string& text) {
  if (!has_hostlist_function(text)) return text;
  auto names = expand_node_list(s, text);
  if (!names) return names.status();
  return compress_hostlist(*names);
}

}  // namespace hq
