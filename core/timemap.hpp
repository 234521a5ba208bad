// The backfill time map (Slurm's node_space): for every usable node, the CPUs,
// memory and GPUs free now and how that changes later (running jobs end, reservations begin
// and end), in slots of the backfill resolution counted from `now`. Nodes in the same
// state share a class, so a query costs per distinct node state, not per node: on a
// busy cluster the nodes of one multi-node job form one class. Searches for a job's
// earliest start read indexes kept alongside (states now, releases by slot, classes a
// reservation dips), so they cost what changes before the answer, not every class.
// A plain value built per scheduling pass; not thread-safe.
#pragma once
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/node_fit.hpp"

namespace hq {

constexpr int32_t kForever = INT32_MAX;  // a slot that never comes: no end

struct Change {
  int32_t slot;
  int32_t cpus;
  int32_t gpus;
  int64_t mem;
  bool operator==(const Change&) const = default;
};

// Starts in [from, to) get `units` units on a node.
struct Interval {
  int32_t from, to, units;
};

class TimeMap {
 public:
  explicit TimeMap(int32_t horizon) : horizon_(horizon) {}

  // Building: add every node, then the releases of running jobs, then finalize().
  // Nodes of one `type` must be alike in size (CPUs, memory, GPUs, restricted cores).
  // `restricted` CPUs per free GPU are kept from jobs that use no GPU (RestrictedCoresPerGPU).
  int32_t add_node(int32_t type, int32_t total_cpus, int64_t total_mem, int32_t free_cpus, int64_t free_mem,
                   int32_t total_gpus = 0, int32_t free_gpus = 0, int32_t restricted = 0, int32_t threads = 1);
  void add_release(int32_t node, int32_t slot, int32_t cpus, int64_t mem, int32_t gpus = 0);
  void finalize();

  // Holds resources on `node` over [from, to); to = kForever never gives them back.
  void take(int32_t node, int32_t from, int32_t to, int32_t cpus, int64_t mem, int32_t gpus = 0);
  // Moves a future release earlier or later (preemption shortens a running job).
  void move_release(int32_t node, int32_t from_slot, int32_t to_slot, int32_t cpus, int64_t mem, int32_t gpus = 0);

  int32_t units_at(int32_t node, const UnitNeed& need, int32_t slot) const;
  // Whether nothing holds any of the node's CPUs at `slot`.
  bool idle_at(int32_t node, int32_t slot) const;
  // The first slot from which nothing ever holds the node's CPUs again (kForever: none).
  int32_t idle_from(int32_t node) const;
  // Units a node offers by its resources alone (no time involved).
  int32_t units_for(int32_t node, int32_t cpus, int64_t mem, int32_t gpus, const UnitNeed& need) const {
    return units(nodes_[node], cpus, mem, gpus, need);
  }
  // The starts at which one node of class `cls` offers units, clipped to the horizon.
  void intervals(int32_t cls, const UnitNeed& need, std::vector<Interval>& out) const;

  // The earliest slot in [from, last] (from >= 1) at which the nodes of the types with
  // `type_ok` set together offer `want` units of `need`, or -1. `room` gets the classes
  // that have room at that slot but none now: with the now groups that have room now,
  // they hold every node that can take a unit there. Costs the distinct states of the
  // nodes whose free resources only grow, the classes a reservation dips, and the
  // releases up to the answer; `read` counts those entries.
  int32_t earliest(const UnitNeed& need, const std::vector<char>& type_ok, int64_t want, int32_t from, int32_t last,
                   std::vector<int32_t>& room, int64_t& read);

  // earliest() for a pool confined to a few nodes (a topology block's): the same answer
  // and room, provided every node of a type with `type_ok` set is in `nodes`. Reads those
  // nodes' classes alone, where earliest() reads every release up to the answer.
  int32_t earliest_among(const UnitNeed& need, const std::vector<char>& type_ok, std::span<const int32_t> nodes,
                         int64_t want, int32_t from, int32_t last, std::vector<int32_t>& room, int64_t& read);

  int32_t horizon() const { return horizon_; }
  static int32_t coarsen(int32_t slot);       // rounded later, to the grid of far-off slots
  static int32_t coarsen_down(int32_t slot);  // rounded earlier, to the same grid
  int32_t node_count() const { return static_cast<int32_t>(nodes_.size()); }
  int32_t class_count() const { return static_cast<int32_t>(classes_.size()); }
  // The classes that have nodes, and some that lost theirs lately (class_nodes() empty;
  // they are dropped here, lazily).
  const std::vector<int32_t>& live_classes();
  const std::vector<int32_t>& class_nodes(int32_t cls) const { return classes_[cls].nodes; }
  int32_t class_type(int32_t cls) const { return classes_[cls].type; }
  int32_t class_of(int32_t node) const { return nodes_[node].cls; }
  int32_t type_of(int32_t node) const { return nodes_[node].type; }
  int32_t now_group_of(int32_t node) const { return nodes_[node].now_group; }
  int32_t free_cpus(int32_t node) const { return nodes_[node].free_cpus; }
  int64_t free_mem(int32_t node) const { return nodes_[node].free_mem; }
  int32_t total_cpus(int32_t node) const { return nodes_[node].total_cpus; }
  int64_t total_mem(int32_t node) const { return nodes_[node].total_mem; }
  int32_t free_gpus(int32_t node) const { return nodes_[node].free_gpus; }
  int32_t total_gpus(int32_t node) const { return nodes_[node].total_gpus; }
  // A node's size (what node_fit's rule reads), by its index.
  NodeSize size_of(int32_t node) const { return size_of(nodes_[node]); }
  const std::vector<Change>& changes(int32_t node) const { return nodes_[node].changes; }

  // GPUs per node are at most 255 (kMaxNodeGpus: config and registration check it).
  struct NowGroup {
    int32_t type, free_cpus, free_gpus;
    std::vector<int32_t> nodes;  // sorted
  };
  int32_t now_group_count() const { return static_cast<int32_t>(now_groups_.size()); }
  const NowGroup& now_group(int32_t g) const { return now_groups_[g]; }

 private:
  // What decides a node's class: its size, what it has free now, and the changes ahead.
  struct Key {
    int32_t type = 0, total_cpus = 0, free_cpus = 0;
    int32_t total_gpus = 0, free_gpus = 0, restricted = 0;
    int64_t total_mem = 0, free_mem = 0;
    int32_t threads = 1;  // per core (whole-core jobs take this many CPUs per CPU they ask for)
    std::vector<Change> changes;  // sorted by slot, one per slot, never zero
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct NodeRec : Key {  // a node is looked up as its own class key, without a copy
    int32_t cls = -1, now_group = -1;
    bool monotone = true;         // no change takes resources: free only grows with time
  };
  // What the resources of a class's nodes are from each piece's slot on (piece 0: now).
  struct Piece {
    int32_t slot, cpus, gpus;
    int64_t mem;
    bool operator==(const Piece&) const = default;
  };
  // A class keeps its own copy of the state, packed, so sweeps read it in one place.
  struct Class {
    std::vector<int32_t> nodes;  // sorted
    bool listed = false;         // in live_
    bool monotone = true;
    int32_t type = 0, total_cpus = 0;
    int32_t total_gpus = 0, restricted = 0;
    int64_t total_mem = 0;
    int32_t threads = 1;
    uint32_t first_piece = 0, pieces = 0;  // in pieces_
    int32_t state = -1;                    // monotone: its entry in mono_states_
    bool in_releases = false;              // its pieces are in the release lists
  };

  void add_change(NodeRec& n, Change c);
  void join_class(int32_t node);
  void regroup(int32_t node);
  int32_t group_for(const NodeRec& n);
  void reclass(int32_t node);
  int32_t class_for(const NodeRec& n);
  // Units of `need` a node of `size` offers with these resources free (core/node_fit.hpp).
  static int32_t units(const NodeSize& size, int32_t cpus, int64_t mem, int32_t gpus, const UnitNeed& need) {
    return units_on_node(size, NodeFree{cpus, gpus, mem}, need);
  }
  static NodeSize size_of(const NodeRec& n) { return {n.total_cpus, n.total_gpus, n.restricted, n.total_mem, n.threads}; }
  int32_t units(const NodeRec& n, int32_t cpus, int64_t mem, int32_t gpus, const UnitNeed& need) const {
    return units(size_of(n), cpus, mem, gpus, need);
  }

  int32_t horizon_;
  std::vector<NodeRec> nodes_;
  std::vector<Class> classes_;
  std::vector<Piece> pieces_;      // every class's pieces, appended as classes are made
  std::vector<int32_t> live_;
  size_t dead_live_ = 0;           // classes in live_ that have lost their last node since the last compaction
  std::unordered_map<Key, int32_t, KeyHash> class_index_;
  std::vector<NowGroup> now_groups_;
  std::unordered_map<uint64_t, int32_t> now_group_index_;  // (type, free GPUs, free CPUs) -> group
  mutable std::vector<int32_t> scratch_;  // intervals()' candidate starts
  mutable std::vector<int32_t> piece_units_;
  // The nodes of monotone classes, counted by their state now (the first piece): at any
  // slot they offer at least what they offer now, plus what releases add by then.
  struct StateKey {
    int32_t type;
    NodeSize totals;
    Piece now;  // slot 0
    bool operator==(const StateKey&) const = default;
  };
  struct StateKeyHash {
    size_t operator()(const StateKey& k) const;
  };
  struct MonoState {
    StateKey key;
    int32_t nodes = 0;
  };
  std::vector<MonoState> mono_states_;
  std::unordered_map<StateKey, int32_t, StateKeyHash> mono_state_index_;
  // Where monotone classes gain resources: piece `piece` of class `cls` begins at the slot
  // whose list holds it (lists threaded through releases_ by `next`).
  struct Release {
    int32_t cls;
    uint32_t piece;
    int32_t next;
  };
  std::vector<Release> releases_;
  std::vector<int32_t> release_head_;  // by slot below the horizon: first in releases_, -1 none
  std::vector<uint64_t> release_bits_; // by slot: a bit set where release_head_ is not -1
  void list_release(Release r, int32_t slot);
  static bool has_bit(const std::vector<uint64_t>& bits, int32_t slot) {
    return (bits[static_cast<size_t>(slot) / 64] >> (slot % 64)) & 1;
  }
  static int32_t next_bit(const std::vector<uint64_t>& bits, int32_t slot);
  size_t compact_releases_at_ = 4096;  // classes that lost their nodes are dropped from the lists then
  void add_releases(int32_t cls);
  int64_t add_released(int32_t first, const UnitNeed& need, const std::vector<char>& type_ok, std::vector<int32_t>& room,
                       int64_t& read) const;
  void compact_releases();
  std::vector<int32_t> live_dipped_;   // listed classes that are not monotone
  void drop_dead_classes();            // once they are a quarter of live_
  void index_class(int32_t cls, const NodeRec& n);
  static NodeSize totals_of(const Class& c) {
    return NodeSize{c.total_cpus, c.total_gpus, c.restricted, c.total_mem, c.threads};
  }
  // Intervals starting after `limit` are left out.
  void general_intervals(const Class& c, const UnitNeed& need, std::vector<Interval>& out,
                         int32_t limit = INT32_MAX) const;
  // earliest()'s scratch: what dipped classes' offer steps up or down by, per slot, and
  // the slots that have a step (all zero between searches).
  std::vector<int64_t> step_units_;
  std::vector<uint64_t> step_bits_;
  // What the nodes of monotone classes offer now, by their states.
  int64_t offered_now(const UnitNeed& need, const std::vector<char>& type_ok) const;
  // Dipped classes' intervals up to `last`, as steps (and in dipped_, for the room).
  void step_dipped(const UnitNeed& need, const std::vector<char>& type_ok, int32_t last);
  int64_t take_steps(int32_t slot);  // what the steps at `slot` add; they are cleared
  void clear_steps();
  std::vector<Interval> dip_ivs_;
  struct DippedInterval {
    int32_t cls, from, to;
  };
  std::vector<DippedInterval> dipped_;
  // earliest_among()'s scratch: the nodes' classes, and what each changes the offer by
  // when (`cls` >= 0: a monotone class that has room from then on and had none before).
  struct Step {
    int32_t slot;
    int64_t units;
    int32_t cls;
  };
  std::vector<int32_t> among_classes_;
  std::vector<Step> among_steps_;
};

}  // namespace hq
