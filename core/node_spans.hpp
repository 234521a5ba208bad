// A node's spans out of service, as the accounting store keeps them (Slurm's event table):
// DOWN (fell silent, GPUs short) and DRAIN (an operator's), each from when it began to when
// it ended (0: still). node_span_changes() says, for one event and the state before it,
// which spans it opens and closes: a reason changed while down or drained closes the span
// and opens another (apply() restarts its time, as Slurm starts a new event). Pure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/node_span.hpp"
#include "core/sreport.hpp"

namespace hq {

// The spans `event` opens or closes, read against `before` (the state it applies to). An
// event that apply() would take as stale changes none.
std::vector<NodeSpan> node_span_changes(const ClusterState& before, const Event& event);

// The spans open now in `state` (a node down, drained, or both).
std::vector<NodeSpan> open_node_spans(const ClusterState& state);

// sreport's Down time: for each node, the union of its spans (DOWN and DRAIN overlap: once),
// from the store's `stored` and the controller's `open` ones (a span the store does not
// have yet, or from before it kept spans), each with the node's TRES (its latest span's).
std::vector<NodeDownSpan> node_down_spans(const std::vector<NodeSpan>& stored, const std::vector<NodeSpan>& open);

}  // namespace hq
