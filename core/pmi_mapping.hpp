// PMI_process_mapping: where a step's ranks are, in the form MPICH reads to find the ranks
// that share a node, as Slurm's pack_process_mapping writes it:
// "(vector,(start_node,node_count,ranks_per_node),...)". Each triple says that node_count
// consecutive nodes from start_node each hold ranks_per_node consecutive ranks, the ranks
// running on from node to node. Examples (reference steps-and-mpi.md §2.6): 3 nodes x 2
// block "(vector,(0,3,2))"; 6 ranks cyclic over 3 nodes "(vector,(0,3,1),(0,3,1))";
// block 2,1,1 "(vector,(0,1,2),(1,2,1))". Pure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq {

// `tasks[n]`: the global ranks on the step's node n, ascending; together every rank from 0
// to their count - 1 exactly once (else an error).
Result<std::string> pmi_process_mapping(const std::vector<std::vector<uint32_t>>& tasks);

}  // namespace hq
