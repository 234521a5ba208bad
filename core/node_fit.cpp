#include "core/node_fit.hpp"

#include "core/gpu_select.hpp"
#include "core/node.hpp"
#include "core/status.hpp"

namespace hq {
namespace {

int32_t cpus_per_unit(const UnitNeed& need) { return std::max(1, need.cpus); }
int64_t mem_per_unit(const UnitNeed& need) { return need.node_mem + need.mem; }
int32_t gpus_per_unit(const UnitNeed& need) { return need.node_gpus + need.gpus; }

// The GPUs that count for a job: of its type when it asks for GPUs, all of them otherwise
// (they keep restricted cores from it, or a whole-node job waits for them).
std::string_view counted_type(const UnitNeed& need, std::string_view gpu_type) {
  return need.uses_gpus() ? gpu_type : std::string_view{};
}

// "has 64 CPUs" when all of it is free, else "12 of 64 CPUs free".
std::string amount(int64_t free, int64_t total, const char* what) {
  if (free == total) return "has " + std::to_string(total) + " " + what;
  return std::to_string(free) + " of " + std::to_string(total) + " " + what + " free";
}

}  // namespace

FitRefusal fit_refusal(const NodeSize& size, const NodeFree& free, const UnitNeed& need) {
  if (units_on_node(size, free, need) > 0) return FitRefusal::kNone;
  if (need.whole_node && !fit_detail::idle(size, free)) return FitRefusal::kNotIdle;
  NodeFree room = need.whole_node ? all_free(size) : free;
  int32_t per = std::max(1, unit_cpus(size, need));
  if (room.cpus < per) return FitRefusal::kCpus;
  if (usable_cpus(size, room, need) < per) return FitRefusal::kRestrictedCpus;
  if (room.mem < mem_per_unit(need) || (need.all_mem && room.mem < size.mem)) return FitRefusal::kMemory;
  HQ_CHECK(room.gpus < gpus_per_unit(need));  // units_on_node() has no other cause
  return FitRefusal::kGpus;
}

std::string needed_text(FitRefusal why, const UnitNeed& need, std::string_view gpu_type) {
  switch (why) {
    case FitRefusal::kNone: return "";
    case FitRefusal::kNotIdle: return "the whole node idle";
    case FitRefusal::kCpus:
      return std::to_string(cpus_per_unit(need)) + (need.whole_cores ? " whole cores (--hint=nomultithread)" : " CPUs");
    case FitRefusal::kRestrictedCpus:
      return std::to_string(cpus_per_unit(need)) + " CPUs besides those kept for GPU jobs (restricted_cores_per_gpu)";
    case FitRefusal::kMemory:
      return need.all_mem ? "all of its memory unused (--mem=0)" : std::to_string(mem_per_unit(need)) + " MiB of memory";
    case FitRefusal::kGpus:
      return std::to_string(gpus_per_unit(need)) + " " + (gpu_type.empty() ? "" : std::string(gpu_type) + " ") + "GPU(s)";
  }
  return "";
}

std::string free_text(FitRefusal why, const NodeSize& size, const NodeFree& free) {
  switch (why) {
    case FitRefusal::kNone: return "";
    case FitRefusal::kNotIdle:
      return amount(free.cpus, size.cpus, "CPUs") + ", " + amount(free.mem, size.mem, "MiB") + ", " +
             amount(free.gpus, size.gpus, "GPUs");
    case FitRefusal::kCpus: return amount(free.cpus, size.cpus, "CPUs");
    case FitRefusal::kRestrictedCpus:
      return amount(free.cpus, size.cpus, "CPUs") + ", " + std::to_string(size.restricted * free.gpus) + " kept for " +
             std::to_string(free.gpus) + " idle GPU(s)";
    case FitRefusal::kMemory: return amount(free.mem, size.mem, "MiB");
    case FitRefusal::kGpus: return amount(free.gpus, size.gpus, "GPUs");
  }
  return "";
}

NodeSize node_size(const Node& n, const UnitNeed& need, std::string_view gpu_type) {
  std::string_view type = counted_type(need, gpu_type);
  int32_t gpus = 0;
  for (const NodeGpu& g : n.gpus) gpus += type.empty() || g.type == type;
  return {n.cpus, gpus, n.restricted_cpus_per_gpu, n.mem_mib, std::max(1, n.threads_per_core)};
}

NodeFree node_free(const Node& n, const UnitNeed& need, std::string_view gpu_type) {
  return {n.cpus - n.alloc_cpus, free_gpus_of_type(n.gpus, n.gpu_used, counted_type(need, gpu_type)),
          n.mem_mib - n.alloc_mem_mib};
}

}  // namespace hq
