// NameMap: a hash map keyed by std::string that is searched by std::string_view too, so
// that a lookup by a job's partition (a Text, or a view of one) makes no string of it. The
// scheduler looks up every queued job's partitions in each pass. Pure; a plain value.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace hq {

struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

template <typename V>
using NameMap = std::unordered_map<std::string, V, NameHash, std::equal_to<>>;

}  // namespace hq
