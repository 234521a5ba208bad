// The scheduler's indexed view of one ClusterState at `now`: usable nodes in dense
// indices, node types (nodes alike in size, weight, features and partitions), the
// partitions, and the time map of free resources. Built per pass; read-only after,
// except the time map, which the pass fills with starts and reservations.
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/name_map.hpp"
#include "core/timemap.hpp"
#include "core/topology.hpp"

namespace hq {

struct NodeType {
  int32_t cpus = 0;
  int64_t mem = 0;
  int32_t weight = 1;
  std::vector<std::string> features;
  std::vector<int32_t> parts;       // partition indices, ascending
  std::vector<NodeGpu> gpus;        // types and CPU lists of the node's GPUs
  int32_t restricted = 0;           // CPUs per idle GPU kept from CPU-only jobs
  bool mixed_gpus = false;          // more than one GPU type
  std::vector<int32_t> bblock;      // by topology (SchedSnapshot::topos): its base block there (-1: none)
  // GPUs of `type` ("" any) each node of this type has.
  int32_t gpus_of(std::string_view type) const;
};

// Node name -> time map index, rebuilt every pass: open addressing over views of the
// names, so building it allocates once and a lookup is one hash of a short string.
class NameIndex {
 public:
  void reserve(size_t names);  // room for this many without growing
  void add(std::string_view name, int32_t index);  // names are unique
  int32_t find(std::string_view name) const;       // -1: not there

 private:
  struct Entry {
    std::string_view name;
    uint64_t hash = 0;
    int32_t index = -1;  // -1: empty
  };
  static uint64_t hash(std::string_view name);
  void place(const Entry& e);
  std::vector<Entry> entries_;
  size_t mask_ = 0, count_ = 0;
};

struct SchedSnapshot {
  Time now = 0;
  Duration resolution = 60;
  std::vector<const Node*> nodes;   // by time map index
  NameIndex node_index;             // views of Node::name
  std::vector<NodeType> types;
  std::vector<const PartitionConfig*> parts;
  NameMap<int32_t> part_index;
  int64_t cluster_cpus = 0;         // every configured node, usable or not
  // Every topology (the cluster default first), a switch tree as blocks; inactive without
  // [topology]. Node types never span base blocks of any of them.
  std::vector<BlockTopology> topos;
  std::vector<int32_t> part_topo;   // by partition: the index in `topos` its jobs are placed by
  TimeMap map{1};

  // The slot in which something ending at `t` frees its resources (at least 1).
  int32_t release_slot(Time t) const;
  // Slots a job of `limit` seconds occupies; kForever for no limit.
  int32_t duration_slots(Duration limit) const;
  Time slot_time(int32_t slot) const { return now + slot * resolution; }
  // The (coarsened) slot at which a running job's resources come back; kForever: never.
  // A job being preempted comes back once its partition's grace time has passed.
  int32_t release_of(const Job& job) const;
  // The slot at which a job preempted now would be gone, after `grace`.
  int32_t preempted_release(Duration grace) const { return TimeMap::coarsen(release_slot(now + grace)); }
  Duration grace_of(const std::string& partition) const;
};

SchedSnapshot build_snapshot(const ClusterState& state, const SchedulerConfig& cfg, Time now);

}  // namespace hq
