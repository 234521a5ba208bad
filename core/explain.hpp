// hq explain: why a pending job does not start now, per partition and per node, in
// plain sentences. Pure; thread-safe.
#pragma once
#include <string>
#include <vector>

#include "core/cluster_state.hpp"

namespace hq {

// At most `max_node_lines` node lines per partition; the rest are summarised by cause.
std::vector<std::string> explain_job(const ClusterState& state, const Job& job, Time now, size_t max_node_lines = 20);

}  // namespace hq
