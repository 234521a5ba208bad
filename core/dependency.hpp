// Job dependencies (sbatch -d, reference §8.5): parsing and evaluation against the
// cluster state. `a,b` needs every term, `a?b` any one. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.hpp"

namespace hq {

enum class DepType { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kAfterCorr, kSingleton };

struct DepTarget {
  uint64_t job = 0;
  int32_t task = -1;        // "123_4": one array task; -1: the job or every task of the array
  Duration delay = 0;       // after:123+10 (minutes in the syntax, seconds here)
};

struct DepTerm {
  DepType type = DepType::kAfterAny;
  std::vector<DepTarget> targets;
};

struct Dependency {
  std::vector<DepTerm> terms;
  bool any = false;         // joined with '?'
};

enum class DepResult { kSatisfied, kWaiting, kNever };

Result<Dependency> parse_dependency(std::string_view text);

// `self` is the dependent job (aftercorr and singleton need it).
DepResult evaluate_dependency(const Dependency& dep, const Job& self, const ClusterState& state, Time now);

// Every job id the dependency names (submit checks that they exist).
std::vector<uint64_t> dependency_targets(const Dependency& dep);

}  // namespace hq
