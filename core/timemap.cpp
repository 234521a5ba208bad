#include "core/timemap.hpp"

#include <algorithm>
#include <bit>

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
                          int32_t total_gpus, int32_t free_gpus, int32_t restricted, int32_t threads) {
  NodeRec n;
  n.threads = std::max(1, threads);
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
namespace {
int32_t coarse_step(int32_t slot) { return slot <= 360 ? 5 : 30; }
}  // namespace

int32_t TimeMap::coarsen(int32_t slot) {
  if (slot <= 60 || slot >= kForever - 30) return slot;
  int32_t step = coarse_step(slot);
  return (slot + step - 1) / step * step;
}

int32_t TimeMap::coarsen_down(int32_t slot) {
  if (slot <= 60 || slot >= kForever - 30) return slot;
  return std::max(60, slot / coarse_step(slot) * coarse_step(slot));
}

void TimeMap::add_release(int32_t node, int32_t slot, int32_t cpus, int64_t mem, int32_t gpus) {
  add_change(nodes_[node], Change{coarsen(std::max(1, slot)), cpus, gpus, mem});
}

int32_t TimeMap::class_for(const NodeRec& n) {
  auto [it, fresh] = class_index_.try_emplace(static_cast<const Key&>(n), static_cast<int32_t>(classes_.size()));
  if (!fresh) return it->second;
  Class c;
  c.monotone = n.monotone;
  c.type = n.type;
  c.total_cpus = n.total_cpus;
  c.total_mem = n.total_mem;
  c.total_gpus = n.total_gpus;
  c.restricted = n.restricted;
  c.threads = n.threads;
  c.first_piece = static_cast<uint32_t>(pieces_.size());
  c.pieces = static_cast<uint32_t>(n.changes.size() + 1);
  Piece p{0, n.free_cpus, n.free_gpus, n.free_mem};
  pieces_.push_back(p);
  for (const Change& ch : n.changes) {
    p = Piece{ch.slot, p.cpus + ch.cpus, p.gpus + ch.gpus, p.mem + ch.mem};
    pieces_.push_back(p);
  }
  classes_.push_back(std::move(c));
  index_class(it->second, n);
  return it->second;
}

size_t TimeMap::StateKeyHash::operator()(const StateKey& k) const {
  auto mix = [](size_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); };
  size_t h = mix(static_cast<uint64_t>(k.type), static_cast<uint64_t>(k.now.cpus));
  h = mix(h, static_cast<uint64_t>(k.now.mem));
  return mix(h, static_cast<uint64_t>(k.now.gpus));
}

// A new monotone class: its state now (counted as nodes join) and where it gains.
void TimeMap::index_class(int32_t cls, const NodeRec& n) {
  Class& c = classes_[cls];
  if (!c.monotone) return;
  StateKey key{n.type, totals_of(c), pieces_[c.first_piece]};
  key.now.slot = 0;
  auto [it, fresh] = mono_state_index_.try_emplace(key, static_cast<int32_t>(mono_states_.size()));
  if (fresh) mono_states_.push_back(MonoState{key, 0});
  c.state = it->second;
}

void TimeMap::add_releases(int32_t cls) {
  if (releases_.size() >= compact_releases_at_) compact_releases();
  Class& c = classes_[cls];
  c.in_releases = true;
  if (release_head_.empty()) {
    release_head_.assign(static_cast<size_t>(horizon_), -1);
    release_bits_.assign(static_cast<size_t>(horizon_) / 64 + 1, 0);
  }
  for (uint32_t k = 1; k < c.pieces; ++k) {
    int32_t slot = pieces_[c.first_piece + k].slot;
    if (slot >= horizon_) break;
    list_release(Release{cls, k, -1}, slot);
  }
}

void TimeMap::list_release(Release r, int32_t slot) {
  r.next = release_head_[slot];
  releases_.push_back(r);
  release_head_[slot] = static_cast<int32_t>(releases_.size() - 1);
  release_bits_[static_cast<size_t>(slot) / 64] |= uint64_t{1} << (slot % 64);
}

// Starts and reservations leave classes without nodes; their releases go (a class that
// gains a node again is listed again by join_class()).
void TimeMap::compact_releases() {
  std::vector<Release> old;
  old.swap(releases_);
  release_head_.assign(static_cast<size_t>(horizon_), -1);
  std::fill(release_bits_.begin(), release_bits_.end(), 0);
  for (const Release& r : old) {
    Class& c = classes_[r.cls];
    if (c.nodes.empty()) c.in_releases = false;
    else list_release(r, pieces_[c.first_piece + r.piece].slot);
  }
  compact_releases_at_ = std::max<size_t>(4096, 2 * releases_.size());
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
  if (cls.monotone) {
    ++mono_states_[cls.state].nodes;
    if (!cls.in_releases) add_releases(n.cls);
  }
  if (!cls.listed) {
    cls.listed = true;
    live_.push_back(n.cls);
    if (!cls.monotone) live_dipped_.push_back(n.cls);
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
  Class& old = classes_[nodes_[node].cls];
  erase_sorted(old.nodes, node);
  if (old.monotone) --mono_states_[old.state].nodes;
  if (old.nodes.empty()) ++dead_live_;
  join_class(node);
  regroup(node);
}

// Emptied classes stay listed (sweeps skip them: no nodes) until they are a quarter of
// the list; then one pass drops them.
const std::vector<int32_t>& TimeMap::live_classes() {
  drop_dead_classes();
  return live_;
}

void TimeMap::drop_dead_classes() {
  if (dead_live_ * 4 < live_.size()) return;  // not yet a quarter
  dead_live_ = 0;
  auto dead = [&](int32_t c) { return classes_[c].nodes.empty(); };
  std::erase_if(live_dipped_, dead);
  std::erase_if(live_, [&](int32_t c) {
    if (!dead(c)) return false;
    classes_[c].listed = false;
    return true;
  });
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

bool TimeMap::idle_at(int32_t node, int32_t slot) const {
  const NodeRec& n = nodes_[node];
  int32_t free = n.free_cpus;
  for (const Change& c : n.changes) {
    if (c.slot > slot) break;
    free += c.cpus;
  }
  return free >= n.total_cpus;
}

int32_t TimeMap::idle_from(int32_t node) const {
  const NodeRec& n = nodes_[node];
  int32_t free = n.free_cpus, from = free >= n.total_cpus ? 0 : kForever;
  for (const Change& c : n.changes) {
    free += c.cpus;
    if (free < n.total_cpus) from = kForever;
    else if (from == kForever) from = c.slot;
  }
  return from;
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

void TimeMap::intervals(int32_t cls, const UnitNeed& need, std::vector<Interval>& out) const {
  out.clear();
  if (!classes_[cls].nodes.empty()) general_intervals(classes_[cls], need, out);
}

// What the releases in one slot's list add; classes that had no room before go to `room`.
int64_t TimeMap::add_released(int32_t first, const UnitNeed& need, const std::vector<char>& type_ok,
                              std::vector<int32_t>& room, int64_t& read) const {
  int64_t added = 0;
  for (int32_t e = first; e >= 0; e = releases_[e].next) {
    const Release& r = releases_[e];
    const Class& cls = classes_[r.cls];
    ++read;
    if (cls.nodes.empty() || !type_ok[cls.type]) continue;
    const Piece& before = pieces_[cls.first_piece + r.piece - 1];
    const Piece& after = pieces_[cls.first_piece + r.piece];
    NodeSize t = totals_of(cls);
    int32_t was = units(t, before.cpus, before.mem, before.gpus, need);
    int32_t is = units(t, after.cpus, after.mem, after.gpus, need);
    added += static_cast<int64_t>(cls.nodes.size()) * (is - was);
    if (was == 0 && is > 0) room.push_back(r.cls);
  }
  return added;
}

int32_t TimeMap::earliest(const UnitNeed& need, const std::vector<char>& type_ok, int64_t want, int32_t from,
                          int32_t last, std::vector<int32_t>& room, int64_t& read) {
  room.clear();
  last = std::min(last, horizon_ - 1);
  if (from > last) return -1;
  drop_dead_classes();
  read += static_cast<int64_t>(mono_states_.size() + live_dipped_.size());
  int64_t total = offered_now(need, type_ok);
  step_dipped(need, type_ok, last);
  // Walk the slots where something changes: steps of dipped classes, and releases on
  // monotone ones (what their new piece offers more). Up to `from` first, then on.
  auto take_slot = [&](int32_t slot) {
    total += take_steps(slot);
    if (slot > 0 && !release_bits_.empty() && has_bit(release_bits_, slot))
      total += add_released(release_head_[slot], need, type_ok, room, read);
  };
  auto next_slot = [&](int32_t after) { return std::min(next_bit(step_bits_, after), next_bit(release_bits_, after)); };
  int32_t answer = -1;
  for (int32_t s = next_slot(0); s <= from; s = next_slot(s + 1)) take_slot(s);
  for (int32_t s = from; s <= last && answer < 0; s = next_slot(s + 1)) {
    if (s > from) take_slot(s);
    if (total >= want) answer = s;
  }
  clear_steps();
  if (answer >= 0)
    for (const DippedInterval& d : dipped_)
      if (d.from <= answer && answer < d.to) room.push_back(d.cls);
  return answer;
}

// The offer of the nodes' classes at each slot is what earliest() sums, class by class:
// a monotone class offers its pieces' units from each piece's slot (room where it goes
// from none to some), a dipped one its intervals. Steps past `last` cannot matter.
int32_t TimeMap::earliest_among(const UnitNeed& need, const std::vector<char>& type_ok, std::span<const int32_t> nodes,
                                int64_t want, int32_t from, int32_t last, std::vector<int32_t>& room, int64_t& read) {
  room.clear();
  last = std::min(last, horizon_ - 1);
  if (from > last) return -1;
  std::vector<int32_t>& classes = among_classes_;
  classes.clear();
  for (int32_t n : nodes)
    if (type_ok[nodes_[n].type]) classes.push_back(nodes_[n].cls);
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  read += static_cast<int64_t>(classes.size());
  std::vector<Step>& steps = among_steps_;
  steps.clear();
  dipped_.clear();
  int64_t total = 0;
  for (int32_t c : classes) {
    const Class& cls = classes_[c];
    int64_t n = static_cast<int64_t>(cls.nodes.size());
    if (!cls.monotone) {
      general_intervals(cls, need, dip_ivs_, last);
      for (const Interval& iv : dip_ivs_) {
        if (iv.from > last) break;
        steps.push_back({iv.from, n * iv.units, -1});
        if (iv.to <= last) steps.push_back({iv.to, -n * iv.units, -1});
        dipped_.push_back({c, iv.from, iv.to});
      }
      continue;
    }
    const Piece* piece = pieces_.data() + cls.first_piece;
    const NodeSize t = totals_of(cls);
    int32_t was = units(t, piece[0].cpus, piece[0].mem, piece[0].gpus, need);
    total += n * was;
    for (uint32_t k = 1; k < cls.pieces && piece[k].slot <= last; ++k) {  // (earliest() lists them below the horizon)
      int32_t is = units(t, piece[k].cpus, piece[k].mem, piece[k].gpus, need);
      steps.push_back({piece[k].slot, n * (is - was), was == 0 && is > 0 ? c : -1});
      was = is;
    }
  }
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.slot < b.slot; });
  size_t i = 0;
  auto take = [&](int32_t slot) {  // the steps at `slot`
    for (; i < steps.size() && steps[i].slot == slot; ++i) {
      total += steps[i].units;
      if (steps[i].cls >= 0) room.push_back(steps[i].cls);
    }
  };
  while (i < steps.size() && steps[i].slot <= from) take(steps[i].slot);
  int32_t answer = total >= want ? from : -1;
  while (answer < 0 && i < steps.size()) {  // every step is at or before `last`
    int32_t slot = steps[i].slot;
    take(slot);
    if (total >= want) answer = slot;
  }
  if (answer >= 0)
    for (const DippedInterval& d : dipped_)
      if (d.from <= answer && answer < d.to) room.push_back(d.cls);
  return answer;
}

int64_t TimeMap::offered_now(const UnitNeed& need, const std::vector<char>& type_ok) const {
  int64_t total = 0;
  for (const MonoState& st : mono_states_)
    if (st.nodes > 0 && type_ok[st.key.type])
      total += int64_t{st.nodes} * units(st.key.totals, st.key.now.cpus, st.key.now.mem, st.key.now.gpus, need);
  return total;
}

void TimeMap::step_dipped(const UnitNeed& need, const std::vector<char>& type_ok, int32_t last) {
  dipped_.clear();
  if (step_bits_.empty()) {
    step_units_.assign(static_cast<size_t>(horizon_) + 1, 0);
    step_bits_.assign(static_cast<size_t>(horizon_) / 64 + 1, 0);
  }
  auto step = [&](int32_t slot, int64_t units) {
    step_units_[static_cast<size_t>(slot)] += units;
    step_bits_[static_cast<size_t>(slot) / 64] |= uint64_t{1} << (slot % 64);
  };
  for (int32_t c : live_dipped_) {
    const Class& cls = classes_[c];
    if (cls.nodes.empty() || !type_ok[cls.type]) continue;
    general_intervals(cls, need, dip_ivs_, last);
    int64_t n = static_cast<int64_t>(cls.nodes.size());
    for (const Interval& iv : dip_ivs_) {
      if (iv.from > last) break;
      step(iv.from, n * iv.units);
      if (iv.to <= last) step(iv.to, -n * iv.units);
      dipped_.push_back({c, iv.from, iv.to});
    }
  }
}

int64_t TimeMap::take_steps(int32_t slot) {
  if (!has_bit(step_bits_, slot)) return 0;
  int64_t units = step_units_[static_cast<size_t>(slot)];
  step_units_[static_cast<size_t>(slot)] = 0;
  step_bits_[static_cast<size_t>(slot) / 64] &= ~(uint64_t{1} << (slot % 64));
  return units;
}

void TimeMap::clear_steps() {  // the steps past an answer, for the next search
  for (int32_t s = next_bit(step_bits_, 0); s < kForever; s = next_bit(step_bits_, s + 1)) take_steps(s);
}

// The first slot at or after `slot` whose bit is set (kForever: none).
int32_t TimeMap::next_bit(const std::vector<uint64_t>& bits, int32_t slot) {
  size_t word = static_cast<size_t>(slot) / 64;
  if (word >= bits.size()) return kForever;
  uint64_t w = bits[word] & (~uint64_t{0} << (slot % 64));
  while (w == 0) {
    if (++word >= bits.size()) return kForever;
    w = bits[word];
  }
  return static_cast<int32_t>(word * 64 + static_cast<size_t>(std::countr_zero(w)));
}

// A class whose free resources also shrink later (reservations): each start's window
// minimum over the pieces it overlaps.
void TimeMap::general_intervals(const Class& c, const UnitNeed& need, std::vector<Interval>& out, int32_t limit) const {
  out.clear();
  const Piece* piece = pieces_.data() + c.first_piece;
  const size_t count = c.pieces;
  auto emit = [&](int32_t from, int32_t to, int32_t u) {
    if (u <= 0 || from >= horizon_) return;
    to = std::min(to, horizon_);
    if (!out.empty() && out.back().to == from && out.back().units == u) out.back().to = to;
    else out.push_back({from, to, u});
  };
  std::vector<int32_t>& pu = piece_units_;
  pu.resize(count);
  const NodeSize totals = totals_of(c);
  int32_t most = 0;
  for (size_t k = 0; k < count; ++k) {
    pu[k] = units(totals, piece[k].cpus, piece[k].mem, piece[k].gpus, need);
    most = std::max(most, pu[k]);
  }
  if (most == 0) return;  // never room for a unit
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
  for (size_t i = 0; i < cand.size() && cand[i] < horizon_ && cand[i] <= limit; ++i) {
    int32_t s = cand[i];
    while (first + 1 < count && piece[first + 1].slot <= s) ++first;
    int64_t end = need.slots == kForever ? INT64_MAX : int64_t{s} + need.slots;
    int32_t u = pu[first];
    for (size_t k = first + 1; u > 0 && k < count && piece[k].slot < end; ++k) u = std::min(u, pu[k]);
    emit(s, i + 1 < cand.size() ? cand[i + 1] : horizon_, u);
  }
}

}  // namespace hq
