// Submit-time admission: could this job ever run in one of its partitions, on an
// otherwise idle cluster (DESIGN §4: never queue the impossible)? Decided node by node
// with the scheduler's own fit rule (core/node_fit.hpp), with Slurm's words for the
// refusal. Pure; thread-safe.
#pragma once
#include "core/cluster_state.hpp"
#include "core/status.hpp"

namespace hq {

// OK when the scheduler could start the job if every node of the cluster were up and
// idle (nodes no agent has reported yet count as large as needed), else why not:
// "Node count specification invalid: ...", "Requested node configuration is not
// available: ...", "Requested time limit is invalid ...", "Invalid node name specified".
Status check_ever_runnable(const ClusterState& state, const Job& job);

}  // namespace hq
