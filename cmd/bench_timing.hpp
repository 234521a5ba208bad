// Timing runs for the built-in benchmarks: milliseconds of each run, sorted, and the median.
// One thread.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace hq::cmd {

// Milliseconds of each of `repeat` runs of fn, sorted. A fn that returns bool stops the
// runs at its first false: then the result is empty.
template <typename Fn>
std::vector<double> timed_ms(int32_t repeat, Fn&& fn) {
  std::vector<double> ms;
  for (int32_t r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if constexpr (std::is_same_v<decltype(fn()), bool>) {
      if (!fn()) return {};
    } else {
      fn();
    }
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

// The median of sorted runs; -1 when there are none.
inline double median_ms(const std::vector<double>& sorted) { return sorted.empty() ? -1 : sorted[sorted.size() / 2]; }

}  // namespace hq::cmd
