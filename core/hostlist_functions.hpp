// Slurm's hostlist functions (24.11) in node lists a job or an operator gives: `block{B}`
// (the nodes of block B, base or aggregated), `blockwith{N}` (the nodes of node N's base
// block), `switch{S}` / `switchwith{N}` (with a configured switch tree: every node below
// switch S at any level / the nodes of N's leaf switch, as Slurm's topology/tree; without
// one, the nodes agents labelled with switch S / with N's switch, or without switch labels
// answered as blocks, as Slurm's block plugin does), and `feature{F}` (nodes whose features
// include F). Mixed with plain hostlists:
// "n[1-2],block{b2}". Errors in Slurm's words ("Invalid hostlist_function specified: ...").
// Pure; thread-safe.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/status.hpp"

namespace hq {

// Whether `text` calls a hostlist function (has a '{').
bool has_hostlist_function(std::string_view text);

// The node names `text` means: plain hostlists expanded, functions answered from the
// cluster's nodes and topology; each name once, in the order they come.
Result<std::vector<std::string>> expand_node_list(const ClusterState& s, std::string_view text);

// `text` with its functions answered, as one plain hostlist ("" when they name no node);
// `text` itself when it calls none.
Result<std::string> resolve_hostlist_functions(const ClusterState& s, const std::string& text);

}  // namespace hq
