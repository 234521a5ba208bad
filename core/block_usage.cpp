#include "core/block_usage.hpp"

#include <algorithm>
#include <map>

#include "core/hostlist.hpp"
#include "core/switch_tree.hpp"

namespace hq {

std::vector<BlockUsage> block_usage(const BlockTopology& t, const std::map<std::string, Node, NaturalLess>& nodes) {
  std::vector<BlockUsage> out;
  if (t.by_level.empty()) return out;
  for (int32_t b : t.by_level[0]) {
    const TopoBlock& block = t.blocks[static_cast<size_t>(b)];
    BlockUsage u;
    u.name = block.name;
    u.nodes = compress_hostlist(block.nodes);
    for (const std::string& name : block.nodes) {
      ++u.total;
      auto it = nodes.find(name);
      if (it == nodes.end() || !node_schedulable(it->second)) ++u.unavailable;
      else if (it->second.alloc_cpus > 0) ++u.busy;
      else ++u.idle;
    }
    out.push_back(std::move(u));
  }
  return out;
}

bool exclusive_topo_job(const ClusterState& s, const Job& job) {
  if (job.spec.exclusive_topo) return true;
  const PartitionConfig* p = find_partition(s.partitions, job.partition);
  return p && p->exclusive_topo;
}

bool exclusive_topo_running(const ClusterState& s) {
  bool any = false;
  for_each_job_in(s, s.running, [&](const Job& job) { any = any || exclusive_topo_job(s, job); });
  return any;
}

std::set<std::string> blocked_by_exclusive_topo(const ClusterState& s) {
  std::set<std::string> out;
  std::map<const TopologyConfig*, BlockTopology> built;  // each topology as blocks (a tree's leaves), once
  for_each_job_in(s, s.running, [&](const Job& job) {
    if (!exclusive_topo_job(s, job)) return;
    const TopologyConfig& config = topology_of_partition(s, job.partition);
    auto [at, fresh] = built.try_emplace(&config);
    if (fresh && config.present)
      at->second = config.switches.empty() ? block_topology_of(s, config) : switch_tree_blocks(switch_tree_of(s, config));
    const BlockTopology& t = at->second;
    if (!t.active()) return;
    std::set<std::string> own;
    for (const auto& a : job.alloc) own.insert(a.node);
    for (const auto& a : job.alloc) {
      auto it = t.node_bblock.find(a.node);
      if (it == t.node_bblock.end()) continue;
      for (const std::string& n : t.blocks[static_cast<size_t>(it->second)].nodes)
        if (!own.count(n)) out.insert(n);
    }
  });
  return out;
}

int64_t block_fragmentation(const BlockTopology& t, const std::function<bool(const std::string&)>& available) {
  if (t.by_level.empty()) return 0;
  std::vector<int32_t> counts;
  for (int32_t b : t.by_level[0]) {
    int32_t free_here = 0;
    for (const std::string& n : t.blocks[static_cast<size_t>(b)].nodes) free_here += available(n) ? 1 : 0;
    counts.push_back(free_here);
  }
  return block_fragmentation(t, counts);
}

int64_t block_fragmentation(const BlockTopology& t, std::span<const int32_t> available) {
  if (t.by_level.empty()) return 0;
  const std::vector<int32_t>& base = t.by_level[0];
  const auto count = static_cast<int64_t>(std::min(base.size(), available.size()));
  std::vector<int64_t> sizes;  // each enforced level's size in base blocks (1, 2, 4, ...)
  for (int32_t k : t.levels) sizes.push_back(int64_t{1} << k);
  std::vector<bool> started(sizes.size(), false);  // an aligned group whose blocks so far are all available
  int64_t frag = 0, block_nodes = 0, free_nodes = 0;
  for (int64_t i = 0; i < count; ++i) {
    const TopoBlock& block = t.blocks[static_cast<size_t>(base[static_cast<size_t>(i)])];
    int64_t free_here = available[static_cast<size_t>(i)];
    block_nodes += static_cast<int64_t>(block.nodes.size());
    free_nodes += free_here;
    bool whole = free_here >= t.bblock_nodes;
    for (size_t j = whole ? 1 : 0; j < sizes.size(); ++j) {
      bool starts_group = i % sizes[j] == 0 && sizes[j] <= count - i;
      if (whole) {
        if (starts_group) started[j] = true;
      } else if (started[j] || starts_group) {
        frag += sizes[j];  // this group is not wholly available: counted once
        started[j] = false;
      }
    }
  }
  return frag * t.bblock_nodes + block_nodes - free_nodes;
}

int64_t fragmentation_added(const BlockTopology& t, std::span<const int32_t> available, std::span<const int32_t> taken) {
  std::vector<int32_t> after(available.begin(), available.end());
  for (size_t i = 0; i < after.size() && i < taken.size(); ++i) after[i] = std::max(0, after[i] - taken[i]);
  return block_fragmentation(t, after) - block_fragmentation(t, available);
}

}  // namespace hq
