// Hardware probe of the node agent: CPU topology and memory through hwloc (the only file
// that includes hwloc), GPUs from procfs/sysfs (gpu_probe.cpp), host name and uptime.
// HQ_HWLOC_XML=FILE makes hwloc read a topology fixture (memory then comes from it);
// HQ_PROBE_ROOT=DIR (or `hq node --probe-root DIR`) reads every procfs/sysfs path under
// DIR, so tests can pretend to be any machine. Thread-safe (no shared state).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/status.hpp"

namespace hq::cmd {

struct HostInfo {
  std::string hostname;
  int32_t cpus = 0;        // processing units
  int32_t sockets = 0, cores = 0;
  int64_t mem_mib = 0;
  int64_t boot_time = 0;
  std::vector<Gpu> gpus;   // in PCI order: a GPU's position is its index
  std::vector<std::vector<int32_t>> core_cpus;  // each core's CPUs; empty: not known
};

// `probe_root` "": the real machine; otherwise a fake tree (see above).
Result<NodeHardware> probe_hardware(const std::string& probe_root);
// The probe root from HQ_PROBE_ROOT ("" when unset).
std::string default_probe_root();
Result<HostInfo> probe_host();
// Keeps hwloc from loading its plugins (shared objects, which pull the shared libc into this
// static process) for the rest of the process: call before any hwloc use, with one thread.
void forbid_hwloc_plugins();

}  // namespace hq::cmd
