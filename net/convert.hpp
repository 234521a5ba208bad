// Conversions between core/ values and protobuf messages (wire and journal).
// Pure functions; thread-safe.
#pragma once
#include <string_view>
#include <functional>

#include "core/cluster_state.hpp"
#include "core/job.hpp"
#include "core/node.hpp"
#include "hq.pb.h"

namespace hq::net {

// `with_script` false leaves out the script, argv and environment (listings; secrets).
pb::JobSpec to_pb(const JobSpec& s, bool with_script = true);
void to_pb(const JobSpec& s, bool with_script, pb::JobSpec& out);  // into `out` (on an arena, say)
JobSpec from_pb(const pb::JobSpec& p);
pb::Job to_pb(const Job& j, bool with_script = true);
void to_pb(const Job& j, bool with_script, pb::Job& out);
// A listing's view of a job (QueueRequest.brief): ids, state, reason, priority, hold,
// partitions, times, allocation and array fields, and of its spec the name, user, uid,
// node, task and CPU counts and begin time. These serve the squeue fields kBriefFields.
// Each of the spec's fields is set whatever its value: a spec reused from the job before
// needs no clearing (cmd/controller/listing.cpp).
void to_pb_brief(const Job& j, pb::Job& out);
inline constexpr std::string_view kBriefFields = "iAFKPjuUtTMDRNlLCrSVeQp";
Result<Job> from_pb(const pb::Job& p);
pb::Node to_pb(const Node& n);
pb::JobEnded to_pb(const JobEnded& e);
Result<JobEnded> from_pb(const pb::JobEnded& p);

// Node journal records (convert_nodes.cpp).
pb::NodeRegisteredEvent to_pb(const NodeRegistered& e);
Result<NodeRegistered> from_pb(const pb::NodeRegisteredEvent& p);
pb::NodeDownEvent to_pb(const NodeDownChanged& e);
Result<NodeDownChanged> from_pb(const pb::NodeDownEvent& p);
pb::AdvanceReservation to_pb(const AdvanceReservation& r);
Result<AdvanceReservation> from_pb(const pb::AdvanceReservation& p);
pb::NodeRemovedEvent to_pb(const NodeRemoved& e);
Result<NodeRemoved> from_pb(const pb::NodeRemovedEvent& p);
pb::NodeUpdatedEvent to_pb(const NodeUpdated& e);
Result<NodeUpdated> from_pb(const pb::NodeUpdatedEvent& p);
// Snapshots hold every node as a registration that replays to it, and the DOWN ones.
void add_nodes(const ClusterState& s, pb::StateSnapshot& out);
Status restore_nodes(const pb::StateSnapshot& p, ClusterState& s);

// Journal records.
std::string encode_event(const Event& e);
Result<Event> decode_event(const std::string& bytes);
std::string encode_snapshot(const ClusterState& s);
// Restores nodes, jobs, drains and the id counter into a state built from config. `before_jobs`, if set,
// hears how many jobs the snapshot holds before any is added (to make room for them).
Status restore_snapshot(const std::string& bytes, ClusterState& s,
                        const std::function<void(size_t jobs)>& before_jobs = nullptr);

}  // namespace hq::net
