// Job array specifications (sbatch --array, reference §8.4): "0-15", "0,6,16-32",
// "0-15:4" (step), with an optional "%N" throttle. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

struct ArraySpec {
  std::vector<int32_t> indices;  // ascending, unique
  int32_t throttle = 0;          // 0: no limit
  int32_t step = 1;              // the first ":step" given (SLURM_ARRAY_TASK_STEP, as Slurm)
};

// Indices must be 0..max_size-1 (Slurm's MaxArraySize).
Result<ArraySpec> parse_array(std::string_view text, int32_t max_size);

// Ascending indices as Slurm prints a set of array tasks: an even step over a span of more
// than 10 with more than 5 tasks as "a-b:step" ("0-30:3"), else runs as "a-b" and the rest
// listed ("1-4,7,9-10"); with a throttle, "%N" after them (squeue's "12_[1-4%2]").
std::string format_array_indices(const std::vector<int32_t>& indices, int32_t throttle = 0);

}  // namespace hq
