// What a job needs in one partition, in time-map units: a fixed per-node shape
// (-N, --ntasks-per-node: one unit per node) or tasks spread freely (-n only: one
// unit per task). Pure; thread-safe.
#pragma once
#include <cstdint>

#include "core/config.hpp"
#include "core/job.hpp"
#include "core/timemap.hpp"

namespace hq {

struct JobShape {
  bool spread = false;       // units are tasks that may spread over nodes
  int32_t units = 1;         // units needed: nodes (fixed) or tasks (spread)
  int32_t nodes_max = 1;     // fixed: take up to this many nodes when they are free
  int32_t tasks_per_node = 1;
  UnitNeed need;
};

// `duration_slots` comes from the time map's resolution.
JobShape job_shape(const JobSpec& spec, const PartitionConfig& part, int32_t duration_slots);

}  // namespace hq
