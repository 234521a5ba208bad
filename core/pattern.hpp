// Slurm filename patterns for --output/--error (%j %x %u %N %A %a %% and friends,
// reference §8.3). Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace hq {

struct PatternContext {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;   // 0: not an array task (%A -> job id)
  int64_t array_task = -1;     // -1: not an array task (%a -> 4294967294, like Slurm)
  std::string user;
  std::string job_name;
  std::string node;            // short hostname of the batch node
  int64_t node_index = 0;
  int64_t task = 0;
  int64_t restart_count = 0;
  std::string step = "batch";
};

std::string expand_pattern(std::string_view pattern, const PatternContext& ctx);

// Whether the pattern names something of one task (%t, %n or %N, with or without a
// width): srun then writes a file per task.
bool names_a_task(std::string_view pattern);

}  // namespace hq
