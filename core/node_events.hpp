// The controller's node decisions as pure functions: which events an agent's registration
// makes, when a heartbeat returns a node to service, when a node has fallen silent. The
// controller records what these return (apply() + journal); they read the state only.
// No I/O, no clock: the time comes in as a value. Not thread-safe (reads ClusterState).
#pragma once
#include <vector>

#include "core/cluster_state.hpp"

namespace hq {

// The events a registration makes, in order: `report` itself (apply() finds it stale when
// it changes nothing), then NodeDownChanged when the node's DOWN state changes: DOWN when
// the GPUs it found fall short of its configured gres, back in service otherwise; except a
// node DOWN for silence while `return_to_service` is 0, which waits for a resume.
std::vector<Event> registration_events(const ClusterState& s, const NodeRegistered& report, int32_t return_to_service);

// Whether hearing from the node (a heartbeat) puts it back in service: it is DOWN because
// it fell silent and `return_to_service` > 0 (Slurm's ReturnToService=1; 2 behaves alike).
bool returns_to_service(const Node& n, int32_t return_to_service);

// Whether an up node has fallen silent at `now`: registered and not heard for `timeout`,
// or (no agent since the controller started at `started_at`) running jobs that long.
bool fell_silent(const Node& n, Time now, Time started_at, Duration timeout);

}  // namespace hq
