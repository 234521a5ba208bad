// The backfill time map (Slurm's node_space): for every usable node, the CPUs and
// memory free now and how that changes later (running jobs end, reservations begin
// and end), in slots of the backfill resolution counted from `now`. Nodes in the same
// state share a class, so a query costs per distinct node state, not per node: on a
// busy cluster the nodes of one multi-node job form one class.
// A plain value built per scheduling pass; not thread-safe.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace hq {

constexpr int32_t kForever = INT32_MAX;  // a slot that never comes: no end

struct Change {
  int32_t slot;
  int32_t cpus;
  int64_t mem;
  bool operator==(const Change&) const = default;
};

// What one unit of a job needs on one node, and for how long.
struct UnitNeed {
  int32_t cpus = 1;        // per unit
  int64_t mem = 0;         // per unit
  int64_t node_mem = 0;    // per node, however many units it holds
  int32_t max_units = 1;   // per node
  bool whole_node = false; // every CPU and all memory of the node (one unit)
  int32_t slots = 1;       // duration; kForever: no time limit
};

// Starts in [from, to) get `units` units on a node.
struct Interval {
  int32_t from, to, units;
};

class TimeMap {
 public:
  explicit TimeMap(int32_t horizon) : horizon_(horizon) {}

  // Building: add every node, then the releases of running jobs, then finalize().
  int32_t add_node(int32_t type, int32_t total_cpus, int64_t total_mem, int32_t free_cpus, int64_t free_mem);
  void add_release(int32_t node, int32_t slot, int32_t cpus, int64_t mem);
  void finalize();

  // Holds resources on `node` over [from, to); to = kForever never gives them back.
  void take(int32_t node, int32_t from, int32_t to, int32_t cpus, int64_t mem);
  // Moves a future release earlier or later (preemption shortens a running job).
  void move_release(int32_t node, int32_t from_slot, int32_t to_slot, int32_t cpus, int64_t mem);

  int32_t units_at(int32_t node, const UnitNeed& need, int32_t slot) const;
  // The starts at which one node of class `cls` offers units, clipped to the horizon.
  void intervals(int32_t cls, const UnitNeed& need, std::vector<Interval>& out) const;

  int32_t horizon() const { return horizon_; }
  static int32_t coarsen(int32_t slot);
  int32_t node_count() const { return static_cast<int32_t>(nodes_.size()); }
  int32_t class_count() const { return static_cast<int32_t>(classes_.size()); }
  const std::vector<int32_t>& class_nodes(int32_t cls) const { return classes_[cls].nodes; }
  int32_t class_of(int32_t node) const { return nodes_[node].cls; }
  int32_t type_of(int32_t node) const { return nodes_[node].type; }
  int32_t free_cpus(int32_t node) const { return nodes_[node].free_cpus; }
  int64_t free_mem(int32_t node) const { return nodes_[node].free_mem; }
  int32_t total_cpus(int32_t node) const { return nodes_[node].total_cpus; }
  int64_t total_mem(int32_t node) const { return nodes_[node].total_mem; }
  const std::vector<Change>& changes(int32_t node) const { return nodes_[node].changes; }

 private:
  struct NodeRec {
    int32_t type = 0, total_cpus = 0, free_cpus = 0;
    int64_t total_mem = 0, free_mem = 0;
    std::vector<Change> changes;  // sorted by slot, one per slot, never zero
    int32_t cls = -1;
  };
  struct Key {
    int32_t type, total_cpus, free_cpus;
    int64_t total_mem, free_mem;
    std::vector<Change> changes;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Class {
    std::vector<int32_t> nodes;  // sorted
  };

  void add_change(NodeRec& n, Change c);
  void reclass(int32_t node);
  int32_t class_for(const NodeRec& n);
  int32_t units(const NodeRec& n, int32_t cpus, int64_t mem, const UnitNeed& need) const;

  int32_t horizon_;
  std::vector<NodeRec> nodes_;
  std::vector<Class> classes_;
  std::unordered_map<Key, int32_t, KeyHash> class_index_;
  mutable std::vector<int32_t> scratch_;  // intervals()' candidate starts
};

}  // namespace hq
