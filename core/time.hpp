// Time values used by core/: plain integers injected by callers.
// core/ never reads a clock; daemons pass `now` in (see net/clock.hpp).
#pragma once
#include <cstdint>

namespace hq {

using Time = int64_t;       // seconds since the Unix epoch
using Duration = int64_t;   // seconds
constexpr Duration kUnlimited = -1;  // "UNLIMITED" time limits

}  // namespace hq
