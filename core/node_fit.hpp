// Does a job fit on a node: the one rule, from what one unit of the job needs on a node
// (UnitNeed) and what the node offers it (its size and what is free of it), shared by the
// scheduler's time map (per class and slot, in its hot loop: inline, no allocation),
// submit-time admission ("could this ever run") and `hq explain` (per-node reasons).
// Resources: CPUs (less RestrictedCoresPerGPU for jobs without GPUs), memory, GPUs, and
// whole nodes. Pure; thread-safe.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

namespace hq {

struct Node;

// A multiplier m with (n * m) >> 32 == n / d for every n, d below 2^16 (0: d out of
// range). Unit counts are computed millions of times per pass; a divide is costly.
constexpr uint64_t division_magic(int32_t d) {
  return d >= 1 && d < 65536 ? ((uint64_t{1} << 32) + static_cast<uint64_t>(d) - 1) / static_cast<uint64_t>(d) : 0;
}

// What one unit of a job needs on one node, and for how long (the time map's slots).
struct UnitNeed {
  int32_t cpus = 1;        // per unit
  int64_t mem = 0;         // per unit
  int64_t node_mem = 0;    // per node, however many units it holds
  int32_t max_units = 1;   // per node
  int32_t gpus = 0;        // per unit
  int32_t node_gpus = 0;   // per node, however many units it holds
  bool whole_node = false; // the node must be idle; the job gets all of it (one unit, or tasks)
  bool all_mem = false;    // --mem=0: none of the node's memory in use; the job gets all of it
  bool whole_cores = false; // --hint=nomultithread: each CPU asked for takes a whole core (threads_per_core CPUs)
  int32_t slots = 1;       // duration; kForever: no time limit
  uint64_t cpus_magic = 0; // division_magic(cpus), or 0: divide plainly
  bool uses_gpus() const { return gpus > 0 || node_gpus > 0; }
};

// A node's size. `gpus`: the GPUs that count for the job (of its type when it asks for
// GPUs, all of them otherwise); `restricted`: CPUs per idle GPU kept for GPU jobs.
struct NodeSize {
  int32_t cpus = 0, gpus = 0, restricted = 0;
  int64_t mem = 0;
  int32_t threads = 1;  // per core
  bool operator==(const NodeSize&) const = default;
};

// What of a node is free at the moment asked about (the same GPUs as NodeSize counts).
struct NodeFree {
  int32_t cpus = 0, gpus = 0;
  int64_t mem = 0;
};

inline NodeFree all_free(const NodeSize& size) { return {size.cpus, size.gpus, size.mem}; }

// The free CPUs a job may use: RestrictedCoresPerGPU keeps `restricted` CPUs per idle GPU
// from jobs that use no GPU (whole-node jobs take every CPU and GPU).
inline int32_t usable_cpus(const NodeSize& size, const NodeFree& free, const UnitNeed& need) {
  if (size.restricted == 0 || need.uses_gpus() || need.whole_node) return free.cpus;
  return free.cpus - size.restricted * free.gpus;
}

// The CPUs one unit takes on a node of `size`: whole cores for --hint=nomultithread.
inline int32_t unit_cpus(const NodeSize& size, const UnitNeed& need) {
  return need.whole_cores && size.threads > 1 ? need.cpus * size.threads : need.cpus;
}

namespace fit_detail {

// Units a node offers a job that shares it, from its usable CPUs, memory and GPUs.
inline int32_t shared_units(const NodeSize& size, const NodeFree& free, const UnitNeed& need) {
  int32_t cpus = usable_cpus(size, free, need);
  if (free.mem < need.node_mem || cpus <= 0 || free.gpus < need.node_gpus) return 0;
  if (need.all_mem && free.mem < size.mem) return 0;
  int32_t per = unit_cpus(size, need);
  int64_t u = need.cpus_magic && per == need.cpus && cpus < 65536
                  ? static_cast<int64_t>((static_cast<uint64_t>(cpus) * need.cpus_magic) >> 32)
              : per > 0 ? cpus / per
                        : need.max_units;
  u = std::min<int64_t>(u, need.max_units);
  if (need.gpus > 0) u = std::min<int64_t>(u, (free.gpus - need.node_gpus) / need.gpus);
  // Memory rarely binds: divide only when the CPU-bound count does not fit.
  if (need.mem > 0 && free.mem - need.node_mem < u * need.mem) u = (free.mem - need.node_mem) / need.mem;
  return static_cast<int32_t>(std::max<int64_t>(u, 0));
}

inline bool idle(const NodeSize& size, const NodeFree& free) {
  return free.cpus >= size.cpus && free.mem >= size.mem && free.gpus >= size.gpus;
}

}  // namespace fit_detail

// Units of `need` the node offers: 0 means the job does not fit there. A whole-node job
// needs the node idle, and then gets what all of it holds.
inline int32_t units_on_node(const NodeSize& size, const NodeFree& free, const UnitNeed& need) {
  if (!need.whole_node) return fit_detail::shared_units(size, free, need);
  if (!fit_detail::idle(size, free)) return 0;
  return fit_detail::shared_units(size, all_free(size), need);
}

// Why a job does not fit, the first of these that holds.
enum class FitRefusal : uint8_t {
  kNone,           // it fits: at least one unit
  kNotIdle,        // a whole-node job, and something holds part of the node
  kCpus,           // fewer CPUs than one unit needs
  kRestrictedCpus, // enough CPUs, but not outside those kept for GPU jobs
  kMemory,         // less memory than one unit needs on the node
  kGpus,           // fewer GPUs (of the job's type) than one unit needs on the node
};

// kNone exactly when units_on_node() > 0 (which decides); otherwise the resource that is short.
FitRefusal fit_refusal(const NodeSize& size, const NodeFree& free, const UnitNeed& need);

// The words at the edge (admission's and explain's messages). What the job needs that
// the node lacks: "16 CPUs", "2000 MiB of memory", "2 h100 GPU(s)", ...
std::string needed_text(FitRefusal why, const UnitNeed& need, std::string_view gpu_type);
// What the node has of that resource: "has 64 CPUs", "3 of 8 GPUs free", ...
std::string free_text(FitRefusal why, const NodeSize& size, const NodeFree& free);

// A Node's size and what is free of it now, counting the GPUs of `gpu_type` ("" any) when
// the job asks for GPUs and all of them otherwise.
NodeSize node_size(const Node& n, const UnitNeed& need, std::string_view gpu_type);
NodeFree node_free(const Node& n, const UnitNeed& need, std::string_view gpu_type);

}  // namespace hq
