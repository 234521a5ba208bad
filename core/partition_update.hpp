// scontrol update PartitionName=NAME Key=Value...: the settings an administrator may change
// on a running cluster (State=UP|DOWN|DRAIN|INACTIVE, MaxTime=, DefaultTime=), read as
// Slurm's scontrol reads them, into the PartitionUpdated event that records them. Pure;
// thread-safe.
#pragma once
#include <string>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/config.hpp"
#include "core/status.hpp"

namespace hq {

// `current` with `settings` ("State=DOWN", keys in any case) applied, as an event for
// time `now`. Errors in Slurm's words: "Update of this parameter is not supported: X",
// "Invalid input: State=bogus", "Invalid MaxTime value".
Result<PartitionUpdated> parse_partition_update(const PartitionConfig& current, const std::vector<std::string>& settings,
                                                Time now);

}  // namespace hq
