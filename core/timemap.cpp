#include "core/timemap.hpp"

#include <algorithm>

namespace hq {

size_t TimeMap::KeyHash::operator()(const Key& k) const {
  auto mix = [](size_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); };
  size_t h = mix(0, static_cast<uint64_t>(k.type));
  h = mix(h, static_cast<uint64_t>(k.free_cpus));
  h = mix(h, static_cast<uint64_t>(k.free_mem));
  h = mix(h, static_cast<uint64_t>(k.total_cpus));
  h = mix(h, static_cast<uint64_t>(k.free_gpus));
  for (const Change& c : k.changes) {
    h = mix(h, static_cast<uint64_t>(c.slot));
    h = mix(h, static_cast<uint64_t>(c.cpus));
  }
  return h;
}

int32_t TimeMap::add_node(int32_t type, int32_t total_cpus, int64_t total_mem, int32_t free_cpus, int64_t free_mem,
                          int32_t total_gpus, int32_t free_gpus, int32_t restricted) {
  NodeRec n;
  n.total_gpus = total_gpus;
  n.free_gpus = free_gpus;
  n.restricted = restricted;
  n.type = type;
  n.total_cpus = total_cpus;
  n.total_mem = total_mem;
  n.free_cpus = free_cpus;
  n.free_mem = free_mem;
  nodes_.push_back(std::move(n));
  return static_cast<int32_t>(nodes_.size() - 1);
}

void TimeMap::add_change(NodeRec& n, Change c) {
  if (c.slot >= kForever || (c.cpus == 0 && c.mem == 0 && c.gpus == 0)) return;
  if (c.slot <= 0) {
    n.free_cpus += c.cpus;
    n.free_mem += c.mem;
    n.free_gpus += c.gpus;
    return;
  }
  auto it = std::lower_bound(n.changes.begin(), n.changes.end(), c.slot,
                             [](const Change& a, int32_t slot) { return a.slot < slot; });
  if (it != n.changes.end() && it->slot == c.slot) {
    it->cpus += c.cpus;
    it->mem += c.mem;
    it->gpus += c.gpus;
    if (it->cpus == 0 && it->mem == 0 && it->gpus == 0) n.changes.erase(it);
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

void TimeMap::add_release(int32_t node, int32_t slot, int32_t cpus, int64_t mem, int32_t gpus) {
  add_change(nodes_[node], Change{coarsen(std::max(1, slot)), cpus, gpus, mem});
}

int32_t TimeMap::class_for(const NodeRec& n) {
  Key key{n.type, n.total_cpus, n.free_cpus, n.total_gpus, n.free_gpus, n.restricted, n.total_mem, n.free_mem, n.changes};
  auto [it, fresh] = class_index_.try_emplace(std::move(key), static_cast<int32_t>(classes_.size()));
  if (!fresh) return it->second;
  Class c;
  c.monotone = n.monotone;
  c.type = n.type;
  c.total_cpus = n.total_cpus;
  c.total_mem = n.total_mem;
  c.total_gpus = n.total_gpus;
  c.restricted = n.restricted;
  c.first_piece = static_cast<uint32_t>(pieces_.size());
  c.pieces = static_cast<uint32_t>(n.changes.size() + 1);
  Piece p{0, n.free_cpus, n.free_gpus, n.free_mem};
  pieces_.push_back(p);
  for (const Change& ch : n.changes) {
    p = Piece{ch.slot, p.cpus + ch.cpus, p.gpus + ch.gpus, p.mem + ch.mem};
    pieces_.push_back(p);
  }
  classes_.push_back(std::move(c));
  return it->second;
}

int32_t TimeMap::group_for(const NodeRec& n) {
  uint64_t gpus = static_cast<uint64_t>(std::clamp(n.free_gpus, 0, 255));
  uint64_t key = (uint64_t{static_cast<uint32_t>(n.type)} << 40) | (gpus << 32) | static_cast<uint32_t>(n.free_cpus);
  auto [it, fresh] = now_group_index_.try_emplace(key, static_cast<int32_t>(now_groups_.size()));
  if (fresh) now_groups_.push_back(NowGroup{n.type, n.free_cpus, n.free_gpus, {}});
  return it->second;
}

namespace {
bool all_releases(const std::vector<Change>& changes) {
  return std::all_of(changes.begin(), changes.end(), [](const Change& c) { return c.cpus >= 0 && c.mem >= 0 && c.gpus >= 0; });
}
void insert_sorted(std::vector<int32_t>& v, int32_t x) { v.insert(std::lower_bound(v.begin(), v.end(), x), x); }
void erase_sorted(std::vector<int32_t>& v, int32_t x) { v.erase(std::lower_bound(v.begin(), v.end(), x)); }
}  // namespace

// Puts a node into the class of its current state (and that class on the live list).
void TimeMap::join_class(int32_t node) {
  NodeRec& n = nodes_[node];
  n.monotone = all_releases(n.changes);
  n.cls = class_for(n);
  Class& cls = classes_[n.cls];
  insert_sorted(cls.nodes, node);
  if (!cls.listed) {
    cls.listed = true;
    live_.push_back(n.cls);
  }
}

void TimeMap::finalize() {
  for (int32_t i = 0; i < node_count(); ++i) {
    join_class(i);
    NodeRec& n = nodes_[i];
    n.now_group = group_for(n);
    now_groups_[n.now_group].nodes.push_back(i);  // ascending: i grows
  }
}

void TimeMap::reclass(int32_t node) {
  std::vector<int32_t>& old = classes_[nodes_[node].cls].nodes;
  erase_sorted(old, node);
  if (old.empty()) ++dead_live_;
  join_class(node);
  regroup(node);
}

// Emptied classes stay listed (sweeps skip them: no nodes) until they are a quarter of
// the list; then one pass drops them.
const std::vector<int32_t>& TimeMap::live_classes() {
  if (dead_live_ * 4 < live_.size()) return live_;
  dead_live_ = 0;
  std::erase_if(live_, [&](int32_t c) {
    if (!classes_[c].nodes.empty()) return false;
    classes_[c].listed = false;
    return true;
  });
  return live_;
}

void TimeMap::regroup(int32_t node) {
  NodeRec& n = nodes_[node];
  const NowGroup& g = now_groups_[n.now_group];
  if (g.free_cpus == n.free_cpus && g.free_gpus == n.free_gpus) return;
  erase_sorted(now_groups_[n.now_group].nodes, node);
  n.now_group = group_for(n);
  insert_sorted(now_groups_[n.now_group].nodes, node);
}

void TimeMap::take(int32_t node, int32_t from, int32_t to, int32_t cpus, int64_t mem, int32_t gpus) {
  NodeRec& n = nodes_[node];
  add_change(n, Change{from, -cpus, -gpus, -mem});
  if (to != kForever) add_change(n, Change{coarsen(to), cpus, gpus, mem});
  reclass(node);
}

void TimeMap::move_release(int32_t node, int32_t from_slot, int32_t to_slot, int32_t cpus, int64_t mem,
                           int32_t gpus) {
  NodeRec& n = nodes_[node];
  if (from_slot != kForever) add_change(n, Change{std::max(1, from_slot), -cpus, -gpus, -mem});
  add_change(n, Change{std::max(0, to_slot), cpus, gpus, mem});
  reclass(node);
}

int32_t TimeMap::units_at(int32_t node, const UnitNeed& need, int32_t slot) const {
  const NodeRec& n = nodes_[node];
  int64_t end = need.slots == kForever ? INT64_MAX : int64_t{slot} + need.slots;
  int32_t cpus = n.free_cpus, gpus = n.free_gpus;
  int64_t mem = n.free_mem;
  size_t i = 0;
  for (; i < n.changes.size() && n.changes[i].slot <= slot; ++i) {
    cpus += n.changes[i].cpus;
    mem += n.changes[i].mem;
    gpus += n.changes[i].gpus;
  }
  int32_t u = units(n, cpus, mem, gpus, need);
  if (n.monotone) return u;  // free only grows: the start is the tightest point
  for (; u > 0 && i < n.changes.size() && n.changes[i].slot < end; ++i) {
    cpus += n.changes[i].cpus;
    mem += n.changes[i].mem;
    gpus += n.changes[i].gpus;
    u = std::min(u, units(n, cpus, mem, gpus, need));
  }
  return u;
}

TimeMap::NeedKey TimeMap::need_key(const UnitNeed& need) {
  // Outside whole-node needs, the unit cap only clamps the answer: leave it out.
  int32_t cap = need.whole_node ? need.max_units : INT32_MAX;
  return NeedKey{need.cpus, need.gpus, need.node_gpus, cap, need.mem, need.node_mem, need.whole_node};
}

int32_t TimeMap::memo_slot(const UnitNeed& need) const {
  NeedKey key = need_key(need);
  if (last_need_ >= 0 && key == last_key_) return last_need_;
  auto it = std::find(memo_needs_.begin(), memo_needs_.end(), key);
  last_need_ = static_cast<int32_t>(it - memo_needs_.begin());
  if (it == memo_needs_.end()) {
    memo_needs_.push_back(key);
    memo_index_.emplace_back();
  }
  last_key_ = key;
  return last_need_;
}

// A monotone class: a start's tightest point is the start itself, so the pieces are the
// answer, whatever the duration. Memoized per need (slot `memo`), before the unit cap.
std::span<const Interval> TimeMap::monotone_view(const Class& c, const UnitNeed& need, int32_t memo) const {
  std::vector<uint64_t>& index = memo_index_[static_cast<size_t>(memo)];
  size_t cls = static_cast<size_t>(&c - classes_.data());
  if (index.size() <= cls) index.resize(classes_.size(), 0);
  if (index[cls] == 0) {
    UnitNeed open = need;
    open.max_units = need_key(need).max_units;
    const Piece* piece = pieces_.data() + c.first_piece;
    const Totals totals{c.total_cpus, c.total_gpus, c.restricted, c.total_mem};
    uint64_t begin = memo_.size();
    for (size_t k = 0; k < c.pieces; ++k) {
      int32_t u = units(totals, piece[k].cpus, piece[k].mem, piece[k].gpus, open);
      int32_t from = piece[k].slot, to = k + 1 < c.pieces ? piece[k + 1].slot : horizon_;
      if (u <= 0 || from >= horizon_) continue;
      to = std::min(to, horizon_);
      if (memo_.size() > begin && memo_.back().to == from && memo_.back().units == u) memo_.back().to = to;
      else memo_.push_back({from, to, u});
    }
    index[cls] = ((begin << 20) | (memo_.size() - begin)) + 1;
  }
  uint64_t at = index[cls] - 1;
  return {memo_.data() + (at >> 20), static_cast<size_t>(at & 0xfffff)};
}

std::span<const Interval> TimeMap::intervals_view(int32_t cls, const UnitNeed& need, int32_t memo,
                                                  std::vector<Interval>& scratch) const {
  const Class& c = classes_[cls];
  if (c.nodes.empty()) return {};
  if (c.monotone) return monotone_view(c, need, memo);
  general_intervals(c, need, scratch);
  return scratch;
}

void TimeMap::intervals(int32_t cls, const UnitNeed& need, std::vector<Interval>& out) const {
  std::vector<Interval> scratch;
  auto view = intervals_view(cls, need, memo_slot(need), scratch);
  out.clear();
  for (const Interval& iv : view) {  // the cap, and neighbours it makes equal merged
    int32_t u = std::min(iv.units, need.max_units);
    if (!out.empty() && out.back().to == iv.from && out.back().units == u) out.back().to = iv.to;
    else out.push_back({iv.from, iv.to, u});
  }
}

// A class whose free resources also shrink later (reservations): each start's window
// minimum over the pieces it overlaps.
void TimeMap::general_intervals(const Class& c, const UnitNeed& need, std::vector<Interval>& out) const {
  out.clear();
  const Piece* piece = pieces_.data() + c.first_piece;
  const size_t count = c.pieces;
  auto emit = [&](int32_t from, int32_t to, int32_t u) {
    if (u <= 0 || from >= horizon_) return;
    to = std::min(to, horizon_);
    if (!out.empty() && out.back().to == from && out.back().units == u) out.back().to = to;
    else out.push_back({from, to, u});
  };
  auto end_of = [&](size_t k) { return k + 1 < count ? piece[k + 1].slot : horizon_; };
  std::vector<int32_t>& pu = piece_units_;
  pu.resize(count);
  const Totals totals{c.total_cpus, c.total_gpus, c.restricted, c.total_mem};
  for (size_t k = 0; k < count; ++k) pu[k] = units(totals, piece[k].cpus, piece[k].mem, piece[k].gpus, need);
  // Units change only where a piece enters or leaves the window [s, s + slots): at a
  // piece start, or `slots` - 1 before one. Both lists are sorted: merge them.
  std::vector<int32_t>& cand = scratch_;
  cand.assign(1, 0);
  size_t a = 1, b = 1;
  auto lead = [&](size_t i) { return need.slots == kForever ? kForever : piece[i].slot - need.slots + 1; };
  while (a < count || b < count) {
    int32_t next = b < count && (a >= count || lead(b) < piece[a].slot) ? lead(b++) : piece[a++].slot;
    if (next > cand.back()) cand.push_back(next);
  }
  // The window's units are the minimum over the pieces it overlaps.
  size_t first = 0;  // the piece holding the candidate start
  for (size_t i = 0; i < cand.size() && cand[i] < horizon_; ++i) {
    int32_t s = cand[i];
    while (first + 1 < count && piece[first + 1].slot <= s) ++first;
    int64_t end = need.slots == kForever ? INT64_MAX : int64_t{s} + need.slots;
    int32_t u = pu[first];
    for (size_t k = first + 1; u > 0 && k < count && piece[k].slot < end; ++k) u = std::min(u, pu[k]);
    emit(s, i + 1 < cand.size() ? cand[i + 1] : horizon_, u);
  }
}

}  // namespace hq
