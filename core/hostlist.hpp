// Slurm hostlist expressions: expand "n[001-128],gpu[1-4]-ib" to names and compress
// names back to the ranged form, with Slurm's exact ordering and width rules
// (reference §10). Pure functions; thread-safe.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

constexpr size_t kMaxHostsPerRange = 65536;
constexpr size_t kMaxExpandedHosts = 1 << 20;

// Expands in order, keeping duplicates. Errors name the offending item.
Result<std::vector<std::string>> expand_hostlist(std::string_view expr);

enum class HostlistOrder { kAsGiven, kSorted, kSortedUnique };

// Slurm's ranged string (`scontrol show hostlist[sorted]`).
std::string compress_hostlist(const std::vector<std::string>& names,
                              HostlistOrder order = HostlistOrder::kAsGiven);

// Natural-order name comparison ("n2" < "n10"), used for sorting node tables.
bool natural_less(std::string_view a, std::string_view b);

}  // namespace hq
