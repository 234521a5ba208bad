// What a block topology's nodes do now, for operators (`hq nodes --blocks`): per base block
// its nodes idle, busy and out of service, and the topology's fragmentation as Slurm 24.11's
// topology/block measures it (topology_p_get_fragmentation: the sizes, in nodes, of every
// base and aligned aggregated block of an enforced level that is not wholly available, plus
// the block nodes not available; lower is better, 0 when every block is whole and free).
// Pure; thread-safe.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/topology.hpp"

namespace hq {

struct BlockUsage {
  std::string name, nodes;  // the base block's name and its nodes (a hostlist)
  int32_t total = 0, idle = 0, busy = 0, unavailable = 0;
};

// Each base block in order: idle (schedulable, nothing allocated), busy (something
// allocated), unavailable (down, drained, not responding, or not here).
std::vector<BlockUsage> block_usage(const BlockTopology& t, const std::map<std::string, Node, NaturalLess>& nodes);

// The nodes an exclusive=topo job (--exclusive=topo, or a partition's exclusive_topo) keeps
// from every other job: the rest of the base blocks (a tree's leaf switches) it runs in,
// in its partition's topology (Slurm's BLOCKED state).
std::set<std::string> blocked_by_exclusive_topo(const ClusterState& s);
bool exclusive_topo_job(const ClusterState& s, const Job& job);
bool exclusive_topo_running(const ClusterState& s);  // any such job runs (else nothing is BLOCKED)

// Slurm's fragmentation score over the nodes `available` says a job could have.
int64_t block_fragmentation(const BlockTopology& t, const std::function<bool(const std::string&)>& available);
// The same from the count of nodes available in each base block (in by_level[0] order).
int64_t block_fragmentation(const BlockTopology& t, std::span<const int32_t> available);
// What taking `taken` of those nodes (per base block) adds to the score: the taken nodes
// themselves and the size of every whole block they break. Not less than their count.
int64_t fragmentation_added(const BlockTopology& t, std::span<const int32_t> available, std::span<const int32_t> taken);

}  // namespace hq
