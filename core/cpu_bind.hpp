// Which CPUs of a node a job runs on: the agent picks them (least used first, CPUs next
// to the job's GPUs before others), and --cpu-bind says how the job's processes are
// bound within them. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

enum class CpuBindKind { kDefault, kNone, kCores, kThreads, kMap };

struct CpuBind {
  CpuBindKind kind = CpuBindKind::kDefault;
  std::vector<int32_t> map;  // map_cpu:<list>
};

// "" (default), "none"/"no", "cores", "threads", "map_cpu:0,2,4" (a CPU list).
Result<CpuBind> parse_cpu_bind(std::string_view text);

// `n` CPUs from `pool`: fewest jobs on them first (`in_use` counts jobs per CPU), then
// those in `preferred`, then lower ids. When the pool is smaller than `n`, all of it.
std::vector<int32_t> choose_cpus(const std::vector<int32_t>& pool, const std::map<int32_t, int32_t>& in_use,
                                 int32_t n, const std::vector<int32_t>& preferred);

// The affinity for the job's processes: empty for none (the cpuset still confines);
// an error when map_cpu names a CPU outside `allocated`.
Result<std::vector<int32_t>> affinity_for(const CpuBind& bind, const std::vector<int32_t>& allocated);

}  // namespace hq
