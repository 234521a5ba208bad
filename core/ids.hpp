// Strong identifier types, so a job id is never confused with a count or a uid.
#pragma once
#include <compare>
#include <cstdint>
#include <functional>

namespace hq {

struct JobId {
  uint64_t value = 0;
  auto operator<=>(const JobId&) const = default;
  explicit operator bool() const { return value != 0; }
};

}  // namespace hq

template <>
struct std::hash<hq::JobId> {
  size_t operator()(const hq::JobId& id) const noexcept { return std::hash<uint64_t>()(id.value); }
};
