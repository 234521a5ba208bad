// Which CPUs of a node a job runs on: the agent picks them (least used first, CPUs next
// to the job's GPUs before others), and --cpu-bind says how the job's processes, and
// each task of a job step, are bound within them. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

// kSockets and kLdoms bind a task to the step's CPUs (hq knows no sockets inside a share).
enum class CpuBindKind { kDefault, kNone, kCores, kThreads, kSockets, kLdoms, kRank, kMap, kMask };

struct CpuBind {
  CpuBindKind kind = CpuBindKind::kDefault;
  std::vector<int32_t> map;               // map_cpu:<list>
  std::vector<std::vector<int32_t>> masks;  // mask_cpu:<hex>,<hex>: the CPUs of each
  bool verbose = false;
};

// Slurm's --cpu-bind: "" (default), optionally "quiet," or "verbose," and then one of
// "none"/"no", "cores", "threads", "sockets", "ldoms", "rank", "map_cpu:0,2,4" (a CPU
// per local task), "mask_cpu:0x3,0xc" (a mask per local task).
Result<CpuBind> parse_cpu_bind(std::string_view text);

// `n` CPUs from `pool`: fewest jobs on them first (`in_use` counts jobs per CPU), then
// those in `preferred`, then lower ids. When the pool is smaller than `n`, all of it.
std::vector<int32_t> choose_cpus(const std::vector<int32_t>& pool, const std::map<int32_t, int32_t>& in_use,
                                 int32_t n, const std::vector<int32_t>& preferred);

// --hint=nomultithread: `n` CPUs of `pool` as whole cores (`cores`: each core's CPUs), the
// cores whose CPUs carry the fewest jobs first, then those in `preferred`, then lower ids;
// choose_cpus() when the pool has too few whole cores (or the cores are not known).
std::vector<int32_t> choose_cores(const std::vector<int32_t>& pool, const std::map<int32_t, int32_t>& in_use, int32_t n,
                                  const std::vector<int32_t>& preferred, const std::vector<std::vector<int32_t>>& cores);
// One CPU (the lowest) of each core that `cpus` has a CPU of: where --hint=nomultithread
// binds. `cpus` itself when the cores are not known.
std::vector<int32_t> first_threads(const std::vector<int32_t>& cpus, const std::vector<std::vector<int32_t>>& cores);

// The affinity for the job's processes: empty for none (the cpuset still confines);
// an error when map_cpu or mask_cpu names a CPU outside `allocated`.
Result<std::vector<int32_t>> affinity_for(const CpuBind& bind, const std::vector<int32_t>& allocated);

// The affinity of a step's task, local id `local` on its node, where the step holds
// `step_cpus` (ascending): empty for none (no binding); the step's CPUs by default (and
// for sockets, ldoms); `cpus_per_task` CPUs of its own, in local-id order, for cores and
// threads (round again when the tasks outnumber the CPUs); the step's CPU of the task's
// rank for rank; the listed CPU or mask for map_cpu and mask_cpu (one per local task,
// round again), which must be among the step's CPUs.
Result<std::vector<int32_t>> task_affinity(const CpuBind& bind, const std::vector<int32_t>& step_cpus, uint32_t local,
                                           int32_t cpus_per_task);

// A CPU set as Slurm prints a mask: hex, most significant digit first, no leading zeros
// ("0" when empty). {0,1,4} -> "13".
std::string cpu_mask_hex(const std::vector<int32_t>& cpus);

// --cpu-bind=verbose's line for one task, as slurmstepd writes it to the task's stderr
// (Slurm 22.05's task_slurm_chkaffinity): `head` + the task's pid + `tail`, e.g.
// "cpu-bind-cores=MASK - n1, task  0  0 [" "4242]: mask 0x3 set\n". `mask` is the affinity
// the task gets (for none: the one it inherits); `global`/`local` its task ids.
struct CpuBindReport {
  std::string head, tail;
};
CpuBindReport cpu_bind_report(const CpuBind& bind, std::string_view node, uint32_t global, uint32_t local,
                              const std::vector<int32_t>& mask);

}  // namespace hq
