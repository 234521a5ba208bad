#include "core/sched_snapshot.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <tuple>

#include "core/switch_tree.hpp"

namespace hq {

uint64_t NameIndex::hash(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

void NameIndex::reserve(size_t names) {
  if (names * 2 <= entries_.size()) return;
  std::vector<Entry> old;
  old.swap(entries_);
  entries_.assign(std::bit_ceil(std::max<size_t>(16, names * 2)), Entry{});
  mask_ = entries_.size() - 1;
  count_ = 0;
  for (const Entry& e : old)
    if (e.index >= 0) place(e);
}

void NameIndex::add(std::string_view name, int32_t index) {
  reserve(count_ + 1);  // at most half full
  place(Entry{name, hash(name), index});
}

void NameIndex::place(const Entry& e) {
  size_t at = e.hash & mask_;
  while (entries_[at].index >= 0) at = (at + 1) & mask_;
  entries_[at] = e;
  ++count_;
}

int32_t NameIndex::find(std::string_view name) const {
  if (entries_.empty()) return -1;
  uint64_t h = hash(name);
  for (size_t at = h & mask_; entries_[at].index >= 0; at = (at + 1) & mask_)
    if (entries_[at].hash == h && entries_[at].name == name) return entries_[at].index;
  return -1;
}

int32_t SchedSnapshot::release_slot(Time t) const {
  if (t <= now) return 1;
  int64_t slots = (t - now + resolution - 1) / resolution;
  return static_cast<int32_t>(std::min<int64_t>(slots, kForever - 1));
}

int32_t SchedSnapshot::duration_slots(Duration limit) const {
  if (limit == kUnlimited || limit < 0) return kForever;
  int64_t slots = std::max<int64_t>(1, (limit + resolution - 1) / resolution);
  return static_cast<int32_t>(std::min<int64_t>(slots, kForever - 1));
}

Duration SchedSnapshot::grace_of(const std::string& partition) const {
  auto it = part_index.find(partition);
  return it == part_index.end() ? 0 : parts[it->second]->grace_time;
}

int32_t SchedSnapshot::release_of(const Job& job) const {
  // A suspended job ends no sooner than it is resumed (and its CPUs are free already).
  if (job.suspended) return kForever;
  int32_t slot = job.time_limit == kUnlimited ? kForever : release_slot(limit_end(job));
  if (job.preempting) slot = std::min(slot, release_slot(now + grace_of(job.partition)));
  return slot == kForever ? kForever : TimeMap::coarsen(slot);
}

int32_t NodeType::gpus_of(std::string_view type) const {
  if (type.empty()) return static_cast<int32_t>(gpus.size());
  return static_cast<int32_t>(std::count_if(gpus.begin(), gpus.end(), [&](const NodeGpu& g) { return g.type == type; }));
}

namespace {

using TypeKey = std::tuple<int32_t, int64_t, int32_t, std::vector<std::string>, std::vector<int32_t>, std::vector<NodeGpu>,
                           int32_t, int32_t, std::vector<int32_t>>;

// The node's base block in each topology, -1 where it has none.
void bblocks_of(const SchedSnapshot& snap, const std::string& name, std::vector<int32_t>& out) {
  out.clear();
  for (const BlockTopology& topo : snap.topos) {
    auto it = topo.active() ? topo.node_bblock.find(name) : topo.node_bblock.end();
    out.push_back(it == topo.node_bblock.end() ? -1 : it->second);
  }
}

int32_t type_of(SchedSnapshot& snap, std::map<TypeKey, int32_t>& index, const Node& n, const std::vector<int32_t>& bblock) {
  std::vector<int32_t> parts;
  for (const auto& p : n.partitions) {
    auto it = snap.part_index.find(p);
    if (it != snap.part_index.end()) parts.push_back(it->second);
  }
  std::sort(parts.begin(), parts.end());
  TypeKey key{n.cpus, n.mem_mib, n.weight, n.features, parts, n.gpus, n.restricted_cpus_per_gpu, n.threads_per_core, bblock};
  auto [it, fresh] = index.try_emplace(key, static_cast<int32_t>(snap.types.size()));
  if (fresh) {
    bool mixed = std::any_of(n.gpus.begin(), n.gpus.end(), [&](const NodeGpu& g) { return g.type != n.gpus[0].type; });
    snap.types.push_back(
        NodeType{n.cpus, n.mem_mib, n.weight, n.features, std::move(parts), n.gpus, n.restricted_cpus_per_gpu, mixed, bblock});
  }
  return it->second;
}

// Each topology as the scheduler places by it, and each partition's.
void add_topologies(const ClusterState& s, SchedSnapshot& snap) {
  std::vector<const TopologyConfig*> all = topologies_of(s);
  for (const TopologyConfig* t : all) {
    if (!t->present) snap.topos.emplace_back();
    else snap.topos.push_back(t->switches.empty() ? block_topology_of(s, *t) : switch_tree_blocks(switch_tree_of(s, *t)));
  }
  for (const PartitionConfig* p : snap.parts) {
    const TopologyConfig* t = topology_named(s, p->topology);
    auto at = std::find(all.begin(), all.end(), t);
    snap.part_topo.push_back(at == all.end() ? 0 : static_cast<int32_t>(at - all.begin()));
  }
}

}  // namespace

SchedSnapshot build_snapshot(const ClusterState& s, const SchedulerConfig& cfg, Time now) {
  SchedSnapshot snap;
  snap.now = now;
  snap.resolution = std::max<Duration>(1, cfg.bf_resolution);
  int64_t horizon = std::max<int64_t>(1, cfg.bf_window / snap.resolution);
  snap.map = TimeMap(static_cast<int32_t>(horizon));
  for (const auto& p : s.partitions) {
    snap.part_index.emplace(p.name, static_cast<int32_t>(snap.parts.size()));
    snap.parts.push_back(&p);
  }
  add_topologies(s, snap);
  std::vector<int32_t> bblock;
  std::map<TypeKey, int32_t> type_index;
  snap.node_index.reserve(s.nodes.size());
  snap.nodes.reserve(s.nodes.size());
  const Node* prev = nullptr;
  int32_t prev_type = -1;
  for (const auto& [name, n] : s.nodes) {
    snap.cluster_cpus += n.cpus;
    if (!node_schedulable(n) || n.cpus <= 0) continue;
    // Neighbours are usually alike: compare with the previous node before the map.
    bblocks_of(snap, name, bblock);
    bool same = prev && prev->cpus == n.cpus && prev->mem_mib == n.mem_mib && prev->weight == n.weight &&
                prev->features == n.features && prev->partitions == n.partitions && prev->gpus == n.gpus &&
                prev->restricted_cpus_per_gpu == n.restricted_cpus_per_gpu && prev->threads_per_core == n.threads_per_core &&
                snap.types[prev_type].bblock == bblock;
    int32_t type = same ? prev_type : type_of(snap, type_index, n, bblock);
    prev = &n;
    prev_type = type;
    int32_t gpus = static_cast<int32_t>(n.gpus.size());
    int32_t idx = snap.map.add_node(type, n.cpus, n.mem_mib, n.cpus - n.alloc_cpus, n.mem_mib - n.alloc_mem_mib, gpus,
                                    std::max(0, gpus - n.alloc_gpus), n.restricted_cpus_per_gpu, n.threads_per_core);
    snap.nodes.push_back(&n);
    snap.node_index.add(name, idx);
  }
  for_each_job_in(s, s.running, [&](const Job& job) {
    int32_t slot = snap.release_of(job);
    if (slot == kForever) return;
    for (const auto& a : job.alloc) {
      if (int32_t idx = snap.node_index.find(a.node); idx >= 0)
        snap.map.add_release(idx, slot, a.cpus, a.mem_mib, static_cast<int32_t>(a.gpus.size()));
    }
  });
  snap.map.finalize();
  return snap;
}

}  // namespace hq
