// Switch tree (Slurm's topology/tree): the `[[topology.switch]]` checks and the model built
// from them and from agents' `--switch` labels: each switch's level (leaf 0, a parent one more
// than its highest child), parent, children and nodes, each node's leaf switch, and what the
// scheduler, the job environment and `scontrol show topology` read of it (candidate switches
// for N nodes, common ancestors, SLURM_TOPOLOGY_ADDR, Slurm's show lines). Placement by the
// tree is the scheduler's, over switch_tree_blocks(). Pure values; not thread-safe.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/topology.hpp"

namespace hq {

// The first switch Slurm refuses, and why in its words.
struct SwitchConfigError {
  size_t switch_index = 0;  // into TopologyConfig::switches
  std::string message;
};

constexpr size_t kMaxSwitchNameLength = 64;  // Slurm's HOST_NAME_MAX

// Slurm's refusals of topology.conf's switches (22.05-24.11): a name too long, both or
// neither of nodes and switches, a name twice, a child that is no other switch, a loop, and
// (where Slurm only warns) a node on two leaf switches.
std::optional<SwitchConfigError> check_switches(const std::vector<SwitchConfig>& switches);

struct TopoSwitch {
  std::string name;
  int32_t level = 0;                   // 0: a leaf; else 1 + its highest child's level
  int32_t parent = -1;                 // -1: a root (the last switch that lists it, as Slurm)
  std::vector<int32_t> children;       // as its Switches= lists them
  std::vector<std::string> own_nodes;  // a leaf's nodes (natural order); empty above
  std::vector<std::string> nodes;      // every node below it (natural order)
  uint32_t link_speed = 1;
  std::string nodes_shown;             // Nodes= as Slurm prints it
  std::string switches_shown;          // Switches= as written ("" for a leaf)
};

struct SwitchTree {
  std::vector<TopoSwitch> switches;  // config order, then leaf switches agents' labels made (by name)
  std::unordered_map<std::string, int32_t> node_leaf;  // node -> its leaf switch
  int32_t outside = 0;  // nodes on no switch (Slurm: "switches lack access to N nodes")

  bool active() const { return !switches.empty(); }
  int32_t max_level() const;
  int32_t find(const std::string& name) const;  // the switch's index, or -1
  // Every switch with at least `nodes` nodes below it: lowest level first, then fewest
  // nodes (the tightest fit, as Slurm's switch comparison), then config order.
  std::vector<int32_t> candidates_for(int32_t nodes) const;
  // The lowest switch with all of `switch_indices` at or below it (one of them when it holds
  // the others), or -1 when they have none (disjoint roots) or the list is empty.
  int32_t common_ancestor(const std::vector<int32_t>& switch_indices) const;
  // SLURM_TOPOLOGY_ADDR: per level, top down, the switches holding the node (a blank level
  // where none does), then the node, joined by '.'; the node alone without switches.
  std::string node_addr(const std::string& node) const;
  // SLURM_TOPOLOGY_ADDR_PATTERN: "switch." per level, then "node".
  std::string node_addr_pattern() const;
  // scontrol show topology: one line per switch, Slurm's fields and order.
  std::vector<std::string> show_lines() const;
};

// The tree as the scheduler's blocks (BlockTopology::tree): a base block per leaf switch (tree
// order), then one per higher switch, lowest level first, holding the leaves below it; each
// node in its leaf's base block. Inactive when the tree is.
BlockTopology switch_tree_blocks(const SwitchTree& tree);

// The tree from the config and the nodes as they are: (name, agent's --switch label) for
// every node. A node on no configured leaf switch joins the leaf its label names, or a new
// root leaf switch of that name (a label naming a higher switch places it nowhere, as
// Slurm's "isn't a leaf switch"). Inactive (no switches) when `t` configures none.
SwitchTree build_switch_tree(const TopologyConfig& t,
                             const std::vector<std::pair<std::string, std::string>>& node_labels);

}  // namespace hq
