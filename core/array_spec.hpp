// Job array specifications (sbatch --array, reference §8.4): "0-15", "0,6,16-32",
// "0-15:4" (step), with an optional "%N" throttle. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

struct ArraySpec {
  std::vector<int32_t> indices;  // ascending, unique
  int32_t throttle = 0;          // 0: no limit
};

// Indices must be 0..max_size-1 (Slurm's MaxArraySize).
Result<ArraySpec> parse_array(std::string_view text, int32_t max_size);

}  // namespace hq
