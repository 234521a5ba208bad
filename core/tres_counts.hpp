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

// Saturating arithmetic: counts from jobs' sizes, times and limits must not wrap.
inline int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
inline int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

// TRES-seconds as whole TRES-minutes (as limits count them), saturating.
inline TresCounts tres_minutes(const TresUsage& seconds) {
  TresCounts out{};
  for (int k = 0; k < kTresKinds; ++k) out[k] = static_cast<int64_t>(std::min(seconds[k] / 60.0, 9.0e18));
  return out;
}

}  // namespace hq
