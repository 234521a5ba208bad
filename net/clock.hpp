// The real clocks, read only outside core/ and handed inward as values.
#pragma once
#include <chrono>

#include "core/time.hpp"

namespace hq::net {

inline Time wall_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline double mono_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace hq::net
