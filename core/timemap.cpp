#include "core/timemap.hpp"

#include <algorithm>

namespace hq {

size_t TimeMap::KeyHash::operator()(const Key& k) const {
  auto mix = [](size_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); };
  size_t h = mix(0, static_cast<uint64_t>(k.type));
  h = mix(h, static_cast<uint64_t>(k.free_cpus));
  h = mix(h, static_cast<uint64_t>(k.free_mem));
  h = mix(h, static_cast<uint64_t>(k.total_cpus));
  for (const Change& c : k.changes) {
    h = mix(h, static_cast<uint64_t>(c.slot));
    h = mix(h, static_cast<uint64_t>(c.cpus));
  }
  return h;
}

int32_t TimeMap::add_node(int32_t type, int32_t total_cpus, int64_t total_mem, int32_t free_cpus, int64_t free_mem) {
  NodeRec n;
  n.type = type;
  n.total_cpus = total_cpus;
  n.total_mem = total_mem;
  n.free_cpus = free_cpus;
  n.free_mem = free_mem;
  nodes_.push_back(std::move(n));
  return static_cast<int32_t>(nodes_.size() - 1);
}

void TimeMap::add_change(NodeRec& n, Change c) {
  if (c.slot >= kForever || (c.cpus == 0 && c.mem == 0)) return;
  if (c.slot <= 0) {
    n.free_cpus += c.cpus;
    n.free_mem += c.mem;
    return;
  }
  auto it = std::lower_bound(n.changes.begin(), n.changes.end(), c.slot,
                             [](const Change& a, int32_t slot) { return a.slot < slot; });
  if (it != n.changes.end() && it->slot == c.slot) {
    it->cpus += c.cpus;
    it->mem += c.mem;
    if (it->cpus == 0 && it->mem == 0) n.changes.erase(it);
  } else {
    n.changes.insert(it, c);
  }
}

// Far-off releases are rounded later (never earlier, so plans stay safe): exact for
// the first 60 slots, then to 5 slots, and past 360 slots to 30. Fewer distinct node
// states means fewer classes to test per job.
int32_t TimeMap::coarsen(int32_t slot) {
  if (slot <= 60 || slot >= kForever - 30) return slot;
  int32_t step = slot <= 360 ? 5 : 30;
  return (slot + step - 1) / step * step;
}

void TimeMap::add_release(int32_t node, int32_t slot, int32_t cpus, int64_t mem) {
  add_change(nodes_[node], Change{coarsen(std::max(1, slot)), cpus, mem});
}

int32_t TimeMap::class_for(const NodeRec& n) {
  Key key{n.type, n.total_cpus, n.free_cpus, n.total_mem, n.free_mem, n.changes};
  auto [it, fresh] = class_index_.try_emplace(std::move(key), static_cast<int32_t>(classes_.size()));
  if (fresh) classes_.emplace_back();
  return it->second;
}

void TimeMap::finalize() {
  for (int32_t i = 0; i < node_count(); ++i) {
    nodes_[i].cls = class_for(nodes_[i]);
    classes_[nodes_[i].cls].nodes.push_back(i);  // ascending: i grows
  }
}

void TimeMap::reclass(int32_t node) {
  NodeRec& n = nodes_[node];
  auto& old = classes_[n.cls].nodes;
  old.erase(std::lower_bound(old.begin(), old.end(), node));
  n.cls = class_for(n);
  auto& now = classes_[n.cls].nodes;
  now.insert(std::lower_bound(now.begin(), now.end(), node), node);
}

void TimeMap::take(int32_t node, int32_t from, int32_t to, int32_t cpus, int64_t mem) {
  NodeRec& n = nodes_[node];
  add_change(n, Change{from, -cpus, -mem});
  if (to != kForever) add_change(n, Change{coarsen(to), cpus, mem});
  reclass(node);
}

void TimeMap::move_release(int32_t node, int32_t from_slot, int32_t to_slot, int32_t cpus, int64_t mem) {
  NodeRec& n = nodes_[node];
  if (from_slot != kForever) add_change(n, Change{std::max(1, from_slot), -cpus, -mem});
  add_change(n, Change{std::max(0, to_slot), cpus, mem});
  reclass(node);
}

int32_t TimeMap::units(const NodeRec& n, int32_t cpus, int64_t mem, const UnitNeed& need) const {
  if (need.whole_node) {
    if (cpus < n.total_cpus || mem < n.total_mem) return 0;
    if (need.max_units <= 1) return 1;
    return std::clamp(n.total_cpus / std::max(1, need.cpus), 0, need.max_units);
  }
  if (mem < need.node_mem || cpus <= 0) return 0;
  int64_t u = need.cpus > 0 ? cpus / need.cpus : need.max_units;
  if (need.mem > 0) u = std::min<int64_t>(u, (mem - need.node_mem) / need.mem);
  return static_cast<int32_t>(std::clamp<int64_t>(u, 0, need.max_units));
}

int32_t TimeMap::units_at(int32_t node, const UnitNeed& need, int32_t slot) const {
  const NodeRec& n = nodes_[node];
  int64_t end = need.slots == kForever ? INT64_MAX : int64_t{slot} + need.slots;
  int32_t cpus = n.free_cpus;
  int64_t mem = n.free_mem;
  size_t i = 0;
  for (; i < n.changes.size() && n.changes[i].slot <= slot; ++i) {
    cpus += n.changes[i].cpus;
    mem += n.changes[i].mem;
  }
  int32_t u = units(n, cpus, mem, need);
  for (; u > 0 && i < n.changes.size() && n.changes[i].slot < end; ++i) {
    cpus += n.changes[i].cpus;
    mem += n.changes[i].mem;
    u = std::min(u, units(n, cpus, mem, need));
  }
  return u;
}

void TimeMap::intervals(int32_t cls, const UnitNeed& need, std::vector<Interval>& out) const {
  out.clear();
  const auto& members = classes_[cls].nodes;
  if (members.empty()) return;
  const NodeRec& n = nodes_[members.front()];
  if (n.changes.empty()) {
    int32_t u = units(n, n.free_cpus, n.free_mem, need);
    if (u > 0) out.push_back({0, horizon_, u});
    return;
  }
  // Units can change only where a piece enters or leaves the window [s, s + slots).
  std::vector<int32_t>& cand = scratch_;
  cand.assign(1, 0);
  for (const Change& c : n.changes) {
    cand.push_back(c.slot);
    if (need.slots != kForever && int64_t{c.slot} - need.slots + 1 > 0) cand.push_back(c.slot - need.slots + 1);
  }
  std::sort(cand.begin(), cand.end());
  cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
  for (size_t k = 0; k < cand.size() && cand[k] < horizon_; ++k) {
    int32_t to = k + 1 < cand.size() ? std::min(cand[k + 1], horizon_) : horizon_;
    int32_t u = units_at(members.front(), need, cand[k]);
    if (u <= 0) continue;
    if (!out.empty() && out.back().to == cand[k] && out.back().units == u) out.back().to = to;
    else out.push_back({cand[k], to, u});
  }
}

}  // namespace hq
