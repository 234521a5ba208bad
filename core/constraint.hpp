// --constraint expressions (Slurm -C): node features joined by & (and) and | (or),
// parentheses, node counts (`gpu*2`: at least two of the job's nodes have gpu) and
// brackets (`[rack1|rack2]`: every node has the same one of the options;
// `[rack1*2&rack2*4]`: two nodes from rack1 and four from rack2). Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.hpp"

namespace hq {

// One way to satisfy a constraint: every node passes `any_of` (one conjunction of
// features; empty means any node), and the counts hold over the chosen nodes.
struct ConstraintAlternative {
  std::vector<std::vector<std::string>> any_of;
  std::vector<std::pair<std::string, int32_t>> counts;
};

struct Constraint {
  std::vector<ConstraintAlternative> alternatives;  // empty: no constraint
  bool empty() const { return alternatives.empty(); }
};

Result<Constraint> parse_constraint(std::string_view text);

// Whether a node with `features` may be part of an allocation under `alt`.
bool node_matches(const ConstraintAlternative& alt, const std::vector<std::string>& features);
bool has_feature(const std::vector<std::string>& features, std::string_view f);

}  // namespace hq
