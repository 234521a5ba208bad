// Block topology (Slurm's topology/block): the `[topology]` config (base block size and
// enforced levels, named blocks of nodes) and the model the scheduler and `scontrol show
// topology` read: base blocks, the aggregated blocks of each enforced level (aligned runs of
// 2^k base blocks; a shorter last run where the level below cannot hold it), and each
// node's base block. Nodes join a block by the config, or by
// their agent's `--block` label (a label that names no configured block makes a block of
// its own, after the configured ones). A `[topology]` may name switches instead
// (`[[topology.switch]]`, Slurm's topology/tree: core/switch_tree.hpp). Pure values; not
// thread-safe.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.hpp"

namespace hq {

struct BlockConfig {
  std::string name;
  std::string nodes_expr;           // as written
  std::vector<std::string> nodes;   // expanded
  bool operator==(const BlockConfig&) const = default;
};

// One [[topology.switch]] (Slurm's topology.conf SwitchName= line): a leaf switch names its
// nodes, a higher one its child switches (core/switch_tree.hpp builds the tree).
struct SwitchConfig {
  std::string name;
  std::string nodes_expr;             // Nodes= as written ("" when not given)
  std::vector<std::string> nodes;     // expanded
  std::string switches_expr;          // Switches= as written ("" when not given)
  std::vector<std::string> switches;  // expanded child switch names
  uint32_t link_speed = 1;            // LinkSpeed= (shown, unused; Slurm's default 1)
  bool operator==(const SwitchConfig&) const = default;
};

struct TopologyConfig {
  std::string name = "default";     // [[topology]] name (a lone [topology] is "default", as Slurm's topology.conf)
  bool present = false;             // a [topology] table was given: block placement is on
  bool flat = false;                // flat = true: no blocks nor switches, labels ignored (Slurm's `flat: true`)
  std::vector<int32_t> block_sizes; // Slurm's BlockSizes (empty: the first block's size, 1-16 base blocks)
  std::vector<BlockConfig> blocks;
  std::vector<SwitchConfig> switches;  // a switch tree (topology/tree) instead of blocks
  bool operator==(const TopologyConfig&) const = default;
};

// Slurm's checks of BlockSizes and the blocks, or of the switches (check_switches): errors
// in Slurm's words where it has them. Blocks and switches together are refused (Slurm has
// one TopologyPlugin).
Status validate_topology(const TopologyConfig& t);
constexpr std::string_view kBlocksOrSwitches =
    "[topology] has blocks or switches, not both (Slurm's TopologyPlugin is topology/block or topology/tree)";

constexpr int32_t kMaxBlockLevels = 16;

// A node's topology label (agent's --block or --switch, or scontrol update Topology=) is a
// comma list of [TOPOLOGY:]UNIT; an entry without a topology is the cluster default's.
// The unit it names in topology `topo` ("" none); `is_default`: `topo` is the default.
std::string label_unit(std::string_view label, std::string_view topo, bool is_default);
// Whether any entry of `label` names unit `unit` (block{B}, switch{S}: any topology's).
bool label_names_unit(std::string_view label, std::string_view unit);
// `label` with its entry for `topo` set to `unit` (the others kept; the default's entry
// written without a topology).
std::string label_with_unit(std::string_view label, std::string_view topo, bool is_default, std::string_view unit);
// `label` with each entry of `overrides` replacing its topology's (a bare one the bare one).
std::string merge_labels(std::string_view label, std::string_view overrides);

struct TopoBlock {
  std::string name;                 // a base block's own; an aggregated one's is its members' hostlist
  int32_t index = 0;                // its place in BlockTopology::blocks: base blocks, then aggregated ones by level
  int32_t shown_index = 0;          // BlockIndex= as Slurm numbers it (aggregated ones as they are made)
  int32_t level = 0;                // 0: base; k: 2^k base blocks
  std::vector<int32_t> bblocks;     // its base blocks (indices into blocks)
  std::vector<std::string> nodes;   // natural order
  int32_t size = 0;                 // BlockSize=: the base size times 2^level
};

struct BlockTopology {
  int32_t bblock_nodes = 0;         // the base block size (planning unit)
  std::vector<int32_t> levels;      // enforced levels, ascending; 0 always
  std::vector<TopoBlock> blocks;    // base blocks, then aggregated ones
  std::vector<std::vector<int32_t>> by_level;  // level -> its blocks (indices into blocks)
  std::unordered_map<std::string, int32_t> node_bblock;  // node -> its base block
  int32_t outside = 0;              // nodes in no block (Slurm: "Blocks lack access to N nodes")
  // A switch tree seen as blocks (switch_tree_blocks(), for the scheduler): base blocks are
  // the leaf switches, each higher switch a block of the leaves below it, levels the
  // switches' levels. A job may then use any switch that holds it, the lowest first.
  bool tree = false;

  bool active() const { return !blocks.empty(); }
  // The enforced level a job of `nodes` nodes is placed in (the smallest that holds it), or
  // -1 when none does: then the whole topology counts as one block.
  int32_t level_for(int32_t nodes) const;
  // scontrol show topology: one line per block, Slurm's words.
  std::vector<std::string> show_lines() const;
};

// scontrol show topology NAME: the lines of block NAME and of the blocks that hold node NAME
// (NAME may be a hostlist: the blocks that hold all its nodes). Switch lines as Slurm 22.05's
// scontrol: switch NAME's line alone when there is one, else the switches above the nodes.
std::vector<std::string> topology_lines_matching(const std::vector<std::string>& lines, const std::string& name);

// The model from the config and the nodes as they are: (name, agent's --block label) for
// every node the cluster has. An inactive model (no blocks) when `t` is not present or
// configures switches.
// `moved`: nodes an operator placed (scontrol update Topology=): their label wins over the
// config (the blocks they leave keep their place, and the base size stays).
BlockTopology build_block_topology(const TopologyConfig& t,
                                   const std::vector<std::pair<std::string, std::string>>& node_labels,
                                   const std::set<std::string>& moved = {});

}  // namespace hq
