// A bounded wait on a condition, for tests: checks `pred` every 50 ms for up to `seconds`
// (never a bare sleep as synchronisation). Single-threaded use.
#pragma once
#include <chrono>
#include <functional>
#include <thread>

namespace hq::test {

inline bool wait_until(const std::function<bool()>& pred, double seconds) {
  for (double t = 0; t < seconds; t += 0.05) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

}  // namespace hq::test
