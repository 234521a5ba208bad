// The real clocks, read only outside core/ and handed inward as values.
#pragma once
#include <chrono>
#include <ctime>
#include <string>

#include "core/time.hpp"

namespace hq::net {

inline Time wall_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `t` in the local zone as Slurm prints times: "2026-11-24T17:00:00".
inline std::string local_time_text(Time t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm {};
  char buf[32] = "";
  if (localtime_r(&tt, &tm)) std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

inline double mono_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace hq::net
