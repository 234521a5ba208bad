// What a PMIx server on one node of a job step (srun --mpi=pmix) tells the library about the
// step, as Slurm's mpi/pmix plugin does (reference steps-and-mpi.md §2.4-2.5): the
// namespace's name, the node list and the ranks on each node (the inputs of
// PMIx_generate_regex and PMIx_generate_ppn), every rank's node and local rank, this node's
// peers, and Open MPI's transport key. Pure: the PMIx calls are in cmd/agent/pmix_server.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/step_layout.hpp"

namespace hq {

struct PmixRank {
  uint32_t node = 0;        // index of its node in the step (PMIX_NODEID)
  uint16_t local_rank = 0;  // its index on that node (PMIX_LOCAL_RANK, PMIX_NODE_RANK)
};

struct PmixStepMap {
  std::string nspace;                 // "slurm.pmix.J.S", Slurm's name
  std::string job_id;                 // "J.S" (PMIX_JOBID)
  std::string nodes;                  // "e1,e2,e3": the step's nodes, SLURM_NODEID order
  std::string proc_map;               // "0,1;2;3": the ranks on each node, same order
  std::vector<std::string> hosts;     // per node: its name
  std::vector<PmixRank> ranks;        // per rank
  size_t here = 0;                    // this node's index
  std::vector<uint32_t> local;        // the ranks here, ascending
  std::string local_peers;            // "0,1" (PMIX_LOCAL_PEERS)
};

// "slurm.pmix.12.3".
std::string pmix_nspace(uint64_t job, uint32_t step);

// The map of `layout` as node `here` of the step sees it.
PmixStepMap pmix_step_map(uint64_t job, uint32_t step, const std::vector<StepNode>& layout, size_t here);

// OMPI_MCA_orte_precondition_transports as Slurm sets it ("%08x%08x-%08x%08x": job, step,
// job, step): a key unique to the step for PSM/PSM2.
std::string precondition_transports(uint64_t job, uint32_t step);

// A rank's environment with PMIx's variables (from PMIx_server_setup_fork) over it, and
// OMPI_MCA_orte_precondition_transports unless the user set it (as Slurm).
std::vector<std::string> with_pmix_env(std::vector<std::string> env, const std::vector<std::string>& pmix_vars,
                                       uint64_t job, uint32_t step);

}  // namespace hq
