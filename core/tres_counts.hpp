// The TRES that limits and usage count, in Slurm's order, as fixed-size arrays: what a job
// asks for or holds (TresCounts) and what jobs used over time (TresUsage, TRES-seconds).
// Pure; no state.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>

namespace hq {

// mem in MiB; billing is CPUs (the default weights).
enum TresKind : int { kTresCpu, kTresMem, kTresNode, kTresGpu, kTresBilling, kTresKinds };
using TresCounts = std::array<int64_t, kTresKinds>;
// Decayed TRES-seconds by kind.
using TresUsage = std::array<double, kTresKinds>;

// TRES-seconds as whole TRES-minutes (as limits count them), saturating.
inline TresCounts tres_minutes(const TresUsage& seconds) {
  TresCounts out{};
  for (int k = 0; k < kTresKinds; ++k) out[k] = static_cast<int64_t>(std::min(seconds[k] / 60.0, 9.0e18));
  return out;
}

}  // namespace hq
