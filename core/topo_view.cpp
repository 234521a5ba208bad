#include "core/topo_view.hpp"

#include <algorithm>

namespace hq {

const std::vector<int32_t>& TopoView::bblock_types(int32_t bb) {
  if (bblock_types_.empty()) {
    bblock_types_.resize(topo().by_level[0].size());
    for (size_t t = 0; t < snap_->types.size(); ++t)
      if (int32_t b = bblock_of_type(t); b >= 0) bblock_types_[static_cast<size_t>(b)].push_back(static_cast<int32_t>(t));
  }
  return bblock_types_[static_cast<size_t>(bb)];
}

const std::vector<int32_t>& TopoView::bblock_nodes(int32_t bb) {
  if (bblock_nodes_.empty()) {
    bblock_nodes_.resize(topo().by_level[0].size());
    for (int32_t n = 0; n < snap_->map.node_count(); ++n)
      if (int32_t b = bblock_of_node(n); b >= 0) bblock_nodes_[static_cast<size_t>(b)].push_back(n);
  }
  return bblock_nodes_[static_cast<size_t>(bb)];
}

std::span<const int32_t> TopoView::block_nodes(int32_t block) {
  const std::vector<int32_t>& bblocks = topo().blocks[static_cast<size_t>(block)].bblocks;
  if (bblocks.size() == 1) return bblock_nodes(bblocks.front());
  auto [it, fresh] = block_nodes_.try_emplace(block);
  if (fresh)
    for (int32_t bb : bblocks) it->second.insert(it->second.end(), bblock_nodes(bb).begin(), bblock_nodes(bb).end());
  return it->second;
}

int64_t TopoView::free_nodes_in_block(int32_t block) {
  if (bblock_free_.empty()) count_bblock_free();
  int64_t free = 0;
  for (int32_t bb : topo().blocks[static_cast<size_t>(block)].bblocks) free += bblock_free_[static_cast<size_t>(bb)];
  return free;
}

// Counts bblock_free_ afresh; the level orders made from the old counts are dropped.
void TopoView::count_bblock_free() {
  bblock_free_.assign(topo().by_level[0].size(), 0);
  for (int32_t n = 0; n < snap_->map.node_count(); ++n) {
    int32_t bb = bblock_of_node(n);
    if (bb >= 0 && snap_->map.free_cpus(n) > 0) ++bblock_free_[static_cast<size_t>(bb)];
  }
  for (auto& order : level_order_) order.clear();
}

const std::vector<std::pair<int64_t, int32_t>>& TopoView::level_order(int32_t level) {
  const BlockTopology& t = topo();
  if (bblock_free_.empty()) count_bblock_free();
  if (level_order_.empty()) {  // the maps from blocks, made once
    level_order_.resize(t.by_level.size());
    level_pos_.assign(t.blocks.size(), -1);
    bblock_blocks_.assign(t.by_level[0].size(), {});
    for (const std::vector<int32_t>& blocks : t.by_level)
      for (size_t i = 0; i < blocks.size(); ++i) {
        level_pos_[static_cast<size_t>(blocks[i])] = static_cast<int32_t>(i);
        for (int32_t bb : t.blocks[static_cast<size_t>(blocks[i])].bblocks) bblock_blocks_[static_cast<size_t>(bb)].push_back(blocks[i]);
      }
  }
  std::vector<std::pair<int64_t, int32_t>>& order = level_order_[static_cast<size_t>(level)];
  if (order.empty()) {
    for (int32_t b : t.by_level[static_cast<size_t>(level)]) order.emplace_back(free_nodes_in_block(b), b);
    std::sort(order.begin(), order.end());
  }
  return order;
}

void TopoView::node_filled(int32_t node) {
  if (bblock_free_.empty()) return;  // counted afresh when next needed
  if (int32_t bb = bblock_of_node(node); bb >= 0) fill_bblock(bb);
}

// One node fewer with free CPUs in base block `bb`, and in each block that holds it (moved
// up its level's order).
void TopoView::fill_bblock(int32_t bb) {
  --bblock_free_[static_cast<size_t>(bb)];
  if (level_order_.empty()) return;
  for (int32_t b : bblock_blocks_[static_cast<size_t>(bb)]) {
    auto& order = level_order_[static_cast<size_t>(topo().blocks[static_cast<size_t>(b)].level)];
    if (order.empty()) continue;
    int64_t free = free_nodes_in_block(b);  // after the decrement: it had one more
    auto at = std::lower_bound(order.begin(), order.end(), std::make_pair(free + 1, b));
    at->first = free;
    for (; at != order.begin() && *at < *(at - 1); --at) std::iter_swap(at, at - 1);
  }
}

const std::vector<std::pair<int32_t, int32_t>>& TopoView::switches_above(int32_t leaf) {
  if (leaf_up_.empty()) {
    leaf_up_.resize(topo().by_level[0].size());
    for (const TopoBlock& b : topo().blocks)
      for (int32_t bb : b.bblocks) leaf_up_[static_cast<size_t>(bb)].emplace_back(b.level, b.index);
    for (auto& up : leaf_up_) std::sort(up.begin(), up.end());
  }
  return leaf_up_[static_cast<size_t>(leaf)];
}

int32_t TopoView::join_level(int32_t a, int32_t b) {
  const std::vector<std::pair<int32_t, int32_t>>& up_a = switches_above(a);
  const std::vector<std::pair<int32_t, int32_t>>& up_b = switches_above(b);
  for (const auto& above : up_a)  // both by level, lowest first
    if (std::binary_search(up_b.begin(), up_b.end(), above)) return above.first;
  return INT32_MAX;
}

const std::vector<int32_t>& TopoView::idle_by_bblock(int32_t slot) {
  auto [it, fresh] = idle_by_slot_.try_emplace(slot);
  if (fresh) {
    it->second.assign(topo().by_level[0].size(), 0);
    for (size_t bb = 0; bb < it->second.size(); ++bb)
      for (int32_t n : bblock_nodes(static_cast<int32_t>(bb))) it->second[bb] += snap_->map.idle_at(n, slot) ? 1 : 0;
  }
  return it->second;
}

}  // namespace hq
