// One topology as a scheduling pass sees it (core/scheduler.cpp): its model, each node's
// base block (a leaf switch under a tree) in it, and what the pass keeps about it: the time
// map's nodes of each base block, the nodes with free CPUs now per base block, each level's
// blocks in best-fit order, the switches above each leaf, the idle nodes per base block at a
// slot. Each is built when first asked; the pass tells the view of its starts
// (node_filled, forget_free, forget_idle). A cluster has one view per topology: the default
// (0), then the other [[topology]] tables. Belongs to one pass; not thread-safe.
#pragma once
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/sched_snapshot.hpp"

namespace hq {

class TopoView {
 public:
  TopoView(SchedSnapshot& snap, int32_t index) : snap_(&snap), k_(index) {}

  int32_t index() const { return k_; }
  const BlockTopology& topo() const { return snap_->topos[static_cast<size_t>(k_)]; }
  bool active() const { return topo().active(); }
  bool tree() const { return topo().tree; }
  // The base block of a node type, of a time map node (-1: none).
  int32_t bblock_of_type(size_t type) const { return snap_->types[type].bblock[static_cast<size_t>(k_)]; }
  int32_t bblock_of_node(int32_t node) const { return bblock_of_type(static_cast<size_t>(snap_->map.type_of(node))); }

  // By base block: its node types (types never span base blocks), its time map nodes.
  const std::vector<int32_t>& bblock_types(int32_t bb);
  const std::vector<int32_t>& bblock_nodes(int32_t bb);
  // The time map's nodes of a block (a base block's own list; a higher one's made once).
  std::span<const int32_t> block_nodes(int32_t block);
  // Nodes of a block with free CPUs now (after the pass's starts).
  int64_t free_nodes_in_block(int32_t block);
  // The blocks of `level` sorted by (free nodes now, block): the best-fit order. Kept across
  // jobs: a start moves only the blocks of the node it filled (node_filled()).
  const std::vector<std::pair<int64_t, int32_t>>& level_order(int32_t level);
  // A block's place in its level's by_level list (after a level_order()).
  int32_t level_pos(int32_t block) const { return level_pos_[static_cast<size_t>(block)]; }
  // A start took the last free CPUs of `node`.
  void node_filled(int32_t node);
  // Holds changed other nodes: the free counts are made again when next needed.
  void forget_free() { bblock_free_.clear(); }
  // A leaf's switches above it (itself too), as (level, block), lowest level first.
  const std::vector<std::pair<int32_t, int32_t>>& switches_above(int32_t leaf);
  // The level of the lowest switch above both leaves, INT32_MAX when none is.
  int32_t join_level(int32_t a, int32_t b);
  // By base block: its nodes with nothing allocated at `slot` (until forget_idle()).
  const std::vector<int32_t>& idle_by_bblock(int32_t slot);
  void forget_idle() { idle_by_slot_.clear(); }

 private:
  void count_bblock_free();
  void fill_bblock(int32_t bb);

  SchedSnapshot* snap_;
  int32_t k_;
  std::vector<std::vector<int32_t>> bblock_types_;  // by base block: its node types
  std::vector<std::vector<int32_t>> bblock_nodes_;  // by base block: its time map nodes
  std::unordered_map<int32_t, std::vector<int32_t>> block_nodes_;  // block_nodes()'s, for blocks above the base
  std::vector<int64_t> bblock_free_;       // by base block: nodes with free CPUs now (empty: to count)
  std::vector<std::vector<std::pair<int64_t, int32_t>>> level_order_;  // by level (empty: to sort)
  std::vector<int32_t> level_pos_;         // by block: its place in its level's by_level list
  std::vector<std::vector<int32_t>> bblock_blocks_;  // by base block: the blocks that hold it, every level
  std::vector<std::vector<std::pair<int32_t, int32_t>>> leaf_up_;  // switches_above()'s
  std::unordered_map<int32_t, std::vector<int32_t>> idle_by_slot_;  // idle_by_bblock()'s, by slot
};

}  // namespace hq
