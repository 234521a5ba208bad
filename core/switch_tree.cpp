#include "core/switch_tree.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/hostlist.hpp"

namespace hq {
namespace {

bool by_natural_order(const std::string& a, const std::string& b) { return natural_less(a, b); }

std::optional<SwitchConfigError> refuse(size_t index, std::string message) {
  return SwitchConfigError{index, std::move(message)};
}

int32_t index_of(const std::vector<SwitchConfig>& switches, const std::string& name) {
  for (size_t i = 0; i < switches.size(); ++i)
    if (switches[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

// What Slurm's _parse_switches refuses, line by line.
std::optional<SwitchConfigError> check_each_line(const std::vector<SwitchConfig>& switches) {
  for (size_t i = 0; i < switches.size(); ++i) {
    const SwitchConfig& s = switches[i];
    bool has_nodes = !s.nodes_expr.empty(), has_switches = !s.switches_expr.empty();
    if (s.name.empty()) return refuse(i, "Can't create a switch without a name");
    if (s.name.size() > kMaxSwitchNameLength)
      return refuse(i, "SwitchName (" + s.name + ") must be shorter than " + std::to_string(kMaxSwitchNameLength) + " chars");
    if (has_nodes && has_switches) return refuse(i, "switch " + s.name + " has both child switches and nodes");
    if (!has_nodes && !has_switches) return refuse(i, "switch " + s.name + " has neither child switches nor nodes");
  }
  return std::nullopt;
}

// A switch below itself: depth-first over the children, a child met again on the way down.
bool on_a_loop(const std::vector<SwitchConfig>& switches, int32_t at, std::vector<char>& state) {
  if (state[at] == 2) return false;
  if (state[at] == 1) return true;
  state[at] = 1;
  for (const auto& child : switches[at].switches)
    if (int32_t c = index_of(switches, child); c >= 0 && on_a_loop(switches, c, state)) return true;
  state[at] = 2;
  return false;
}

// What Slurm's switch_record_validate refuses, over the whole table.
std::optional<SwitchConfigError> check_table(const std::vector<SwitchConfig>& switches) {
  for (size_t i = 0; i < switches.size(); ++i)
    if (index_of(switches, switches[i].name) != static_cast<int32_t>(i))
      return refuse(i, "Switch (" + switches[i].name + ") has already been defined");
  for (size_t i = 0; i < switches.size(); ++i)
    for (auto child = switches[i].switches.rbegin(); child != switches[i].switches.rend(); ++child)  // hostlist_pop's order
      if (int32_t c = index_of(switches, *child); c < 0 || c == static_cast<int32_t>(i))
        return refuse(i, "Switch configuration " + switches[i].name + " has invalid child (" + *child + ")");
  std::vector<char> state(switches.size(), 0);
  for (size_t i = 0; i < switches.size(); ++i)
    if (on_a_loop(switches, static_cast<int32_t>(i), state)) return refuse(i, "Switch configuration is not a tree");
  return std::nullopt;
}

// Slurm warns of nodes on several leaf switches ("Multiple leaf switches contain nodes");
// hq refuses them: a node has one leaf switch.
std::optional<SwitchConfigError> check_multi_homed(const std::vector<SwitchConfig>& switches) {
  std::set<std::string> seen;
  std::vector<std::string> twice;
  size_t first_repeat = 0;
  for (size_t i = 0; i < switches.size(); ++i)
    for (const auto& n : std::set<std::string>(switches[i].nodes.begin(), switches[i].nodes.end()))
      if (!seen.insert(n).second) {
        if (twice.empty()) first_repeat = i;
        twice.push_back(n);
      }
  if (twice.empty()) return std::nullopt;
  return refuse(first_repeat, "Multiple leaf switches contain nodes: " + compress_hostlist(twice, HostlistOrder::kSortedUnique));
}

}  // namespace

std::optional<SwitchConfigError> check_switches(const std::vector<SwitchConfig>& switches) {
  if (auto e = check_each_line(switches)) return e;
  if (auto e = check_table(switches)) return e;
  return check_multi_homed(switches);
}

namespace {

// Levels and node sets of the switches above the leaves, children first (the config has
// passed check_switches: no loops).
void resolve_upper(SwitchTree& tree, int32_t at, std::vector<char>& done) {
  if (done[at]) return;
  done[at] = 1;
  TopoSwitch& s = tree.switches[static_cast<size_t>(at)];
  if (s.children.empty()) return;
  std::set<std::string, bool (*)(const std::string&, const std::string&)> nodes(by_natural_order);
  for (int32_t c : s.children) {
    resolve_upper(tree, c, done);
    const TopoSwitch& child = tree.switches[static_cast<size_t>(c)];
    s.level = std::max(s.level, child.level + 1);
    nodes.insert(child.nodes.begin(), child.nodes.end());
  }
  s.nodes.assign(nodes.begin(), nodes.end());
}

// Natural order, each name once (a hostlist may name a node twice).
void sort_natural(std::vector<std::string>& names) {
  std::sort(names.begin(), names.end(), by_natural_order);
  names.erase(std::unique(names.begin(), names.end()), names.end());
}

// Labelled nodes the config places on no leaf: onto the leaf their label names, or a new
// root leaf of that name; returns the leaves that took some (their Nodes= is made anew).
std::set<int32_t> place_labelled(SwitchTree& tree, const std::vector<std::pair<std::string, std::string>>& node_labels) {
  std::set<int32_t> grown;
  std::map<std::string, std::vector<std::string>> fresh;
  for (const auto& [node, label] : node_labels) {
    if (tree.node_leaf.count(node)) continue;
    int32_t at = label.empty() ? -1 : tree.find(label);
    if (at >= 0 && tree.switches[static_cast<size_t>(at)].children.empty()) {  // a leaf (levels come later)
      tree.switches[static_cast<size_t>(at)].own_nodes.push_back(node);
      tree.node_leaf.emplace(node, at);
      grown.insert(at);
    } else if (at < 0 && !label.empty()) {
      fresh[label].push_back(node);
    } else {
      ++tree.outside;  // no label, or a label naming a switch above the leaves
    }
  }
  for (auto& [label, nodes] : fresh) {
    int32_t at = static_cast<int32_t>(tree.switches.size());
    TopoSwitch leaf;
    leaf.name = label;
    leaf.own_nodes = std::move(nodes);
    for (const auto& n : leaf.own_nodes) tree.node_leaf.emplace(n, at);
    tree.switches.push_back(std::move(leaf));
    grown.insert(at);
  }
  return grown;
}

// The switches at or above `from`: children have lower levels than their parents, so one
// pass by level carries the mark up every path (a switch two switches list is above both).
std::vector<char> at_or_above(const SwitchTree& tree, int32_t from) {
  std::vector<int32_t> by_level(tree.switches.size());
  for (size_t i = 0; i < by_level.size(); ++i) by_level[i] = static_cast<int32_t>(i);
  std::stable_sort(by_level.begin(), by_level.end(),
                   [&](int32_t a, int32_t b) { return tree.switches[a].level < tree.switches[b].level; });
  std::vector<char> mark(tree.switches.size(), 0);
  mark[static_cast<size_t>(from)] = 1;
  for (int32_t s : by_level)
    for (int32_t c : tree.switches[static_cast<size_t>(s)].children)
      if (mark[static_cast<size_t>(c)]) mark[static_cast<size_t>(s)] = 1;
  return mark;
}

}  // namespace

SwitchTree build_switch_tree(const TopologyConfig& t,
                             const std::vector<std::pair<std::string, std::string>>& node_labels) {
  SwitchTree tree;
  if (t.switches.empty()) return tree;
  for (const SwitchConfig& c : t.switches) {
    TopoSwitch s;
    s.name = c.name;
    s.link_speed = c.link_speed;
    s.own_nodes = c.nodes;
    s.switches_shown = c.switches_expr;
    s.nodes_shown = c.nodes_expr;  // a leaf's Nodes= as written (Slurm 22.05-24.11)
    tree.switches.push_back(std::move(s));
  }
  for (size_t i = 0; i < t.switches.size(); ++i)
    for (const auto& name : t.switches[i].switches) {
      int32_t c = tree.find(name);
      if (c < 0) continue;  // refused by check_switches
      tree.switches[i].children.push_back(c);
      tree.switches[static_cast<size_t>(c)].parent = static_cast<int32_t>(i);  // the last to list it, as Slurm
    }
  for (size_t i = 0; i < tree.switches.size(); ++i)
    for (const auto& n : tree.switches[i].own_nodes) tree.node_leaf.emplace(n, static_cast<int32_t>(i));
  std::set<int32_t> grown = place_labelled(tree, node_labels);
  for (size_t i = 0; i < tree.switches.size(); ++i) {
    TopoSwitch& s = tree.switches[i];
    sort_natural(s.own_nodes);
    s.nodes = s.own_nodes;
    if (grown.count(static_cast<int32_t>(i))) s.nodes_shown = compress_hostlist(s.nodes, HostlistOrder::kSorted);
  }
  std::vector<char> done(tree.switches.size(), 0);
  for (size_t i = 0; i < tree.switches.size(); ++i) resolve_upper(tree, static_cast<int32_t>(i), done);
  for (TopoSwitch& s : tree.switches)
    if (!s.children.empty()) s.nodes_shown = compress_hostlist(s.nodes, HostlistOrder::kSorted);
  return tree;
}

namespace {

// The leaf switches at or below `at` (indices into the tree), each once.
void leaves_below(const SwitchTree& tree, int32_t at, std::set<int32_t>& out) {
  const TopoSwitch& s = tree.switches[static_cast<size_t>(at)];
  if (s.children.empty()) out.insert(at);
  for (int32_t c : s.children) leaves_below(tree, c, out);
}

}  // namespace

BlockTopology switch_tree_blocks(const SwitchTree& tree) {
  BlockTopology topo;
  if (!tree.active()) return topo;
  topo.tree = true;
  topo.outside = tree.outside;
  int32_t top = tree.max_level();
  topo.by_level.assign(static_cast<size_t>(top) + 1, {});
  for (int32_t l = 0; l <= top; ++l) topo.levels.push_back(l);
  std::vector<int32_t> block_of(tree.switches.size(), -1);
  for (int32_t level = 0; level <= top; ++level)
    for (size_t i = 0; i < tree.switches.size(); ++i) {
      const TopoSwitch& s = tree.switches[i];
      if (s.level != level || (level == 0 && !s.children.empty())) continue;
      TopoBlock b;
      b.name = s.name;
      b.index = b.shown_index = static_cast<int32_t>(topo.blocks.size());
      b.level = level;
      b.nodes = s.nodes;
      b.size = static_cast<int32_t>(s.nodes.size());
      if (level == 0) {
        b.bblocks = {b.index};
      } else {
        std::set<int32_t> leaves;
        leaves_below(tree, static_cast<int32_t>(i), leaves);
        for (int32_t leaf : leaves)
          if (block_of[static_cast<size_t>(leaf)] >= 0) b.bblocks.push_back(block_of[static_cast<size_t>(leaf)]);
        std::sort(b.bblocks.begin(), b.bblocks.end());
      }
      block_of[i] = b.index;
      topo.by_level[static_cast<size_t>(level)].push_back(b.index);
      topo.blocks.push_back(std::move(b));
    }
  for (const auto& [node, leaf] : tree.node_leaf) topo.node_bblock.emplace(node, block_of[static_cast<size_t>(leaf)]);
  return topo;
}

int32_t SwitchTree::max_level() const {
  int32_t top = 0;
  for (const auto& s : switches) top = std::max(top, s.level);
  return top;
}

int32_t SwitchTree::find(const std::string& name) const {
  for (size_t i = 0; i < switches.size(); ++i)
    if (switches[i].name == name) return static_cast<int32_t>(i);
  return -1;
}

std::vector<int32_t> SwitchTree::candidates_for(int32_t nodes) const {
  std::vector<int32_t> out;
  for (size_t i = 0; i < switches.size(); ++i)
    if (static_cast<int64_t>(switches[i].nodes.size()) >= std::max(1, nodes)) out.push_back(static_cast<int32_t>(i));
  std::stable_sort(out.begin(), out.end(), [&](int32_t a, int32_t b) {
    return std::pair(switches[a].level, switches[a].nodes.size()) < std::pair(switches[b].level, switches[b].nodes.size());
  });
  return out;
}

int32_t SwitchTree::common_ancestor(const std::vector<int32_t>& switch_indices) const {
  if (switch_indices.empty()) return -1;
  std::vector<char> common(switches.size(), 1);
  for (int32_t s : switch_indices) {
    std::vector<char> above = at_or_above(*this, s);
    for (size_t i = 0; i < common.size(); ++i) common[i] = common[i] && above[i];
  }
  int32_t best = -1;
  for (size_t i = 0; i < common.size(); ++i) {
    if (!common[i]) continue;
    const TopoSwitch& s = switches[i];
    if (best < 0 || std::pair(s.level, s.nodes.size()) < std::pair(switches[best].level, switches[best].nodes.size()))
      best = static_cast<int32_t>(i);
  }
  return best;
}

// Slurm's topology_p_get_node_addr: every level from the top one down, the switches of that
// level that hold the node (as a hostlist; none leaves the level blank), then the node.
std::string SwitchTree::node_addr(const std::string& node) const {
  if (!active()) return node;
  auto leaf = node_leaf.find(node);
  std::vector<char> holding =
      leaf == node_leaf.end() ? std::vector<char>(switches.size(), 0) : at_or_above(*this, leaf->second);
  std::string addr;
  for (int32_t level = max_level(); level >= 0; --level) {
    std::vector<std::string> names;
    for (size_t i = 0; i < switches.size(); ++i)
      if (holding[i] && switches[i].level == level) names.push_back(switches[i].name);
    addr += compress_hostlist(names) + ".";
  }
  return addr + node;
}

std::string SwitchTree::node_addr_pattern() const {
  std::string pattern;
  for (int32_t level = active() ? max_level() : -1; level >= 0; --level) pattern += "switch.";
  return pattern + "node";
}

// Slurm's print of a switch record: SwitchName, Level, LinkSpeed, then Nodes= (every switch
// has nodes: a leaf its own, a higher one those below it) and Switches= (only above the leaves).
std::vector<std::string> SwitchTree::show_lines() const {
  std::vector<std::string> out;
  for (const TopoSwitch& s : switches) {
    std::string line = "SwitchName=" + s.name + " Level=" + std::to_string(s.level) + " LinkSpeed=" + std::to_string(s.link_speed);
    line += " Nodes=" + s.nodes_shown;
    if (!s.switches_shown.empty()) line += " Switches=" + s.switches_shown;
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace hq
