#include "cmd/agent/probe.hpp"

#include <cmath>
#include <cstdlib>
#include <hwloc.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "cmd/agent/gpu_probe.hpp"
#include "cmd/paths.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"

namespace hq::cmd {
namespace {

std::string read_trimmed(const std::string& path) { return std::string(trim(read_small_file(path))); }

std::string probe_hostname(const std::string& root) {
  std::string name = root.empty() ? "" : read_trimmed(root + "/proc/sys/kernel/hostname");
  if (name.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    name = host;
  }
  if (auto dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  return name;
}

int64_t probe_uptime(const std::string& root, std::vector<std::string>& warnings) {
  if (!root.empty()) {
    std::string text = read_trimmed(root + "/proc/uptime");
    char* end = nullptr;
    double up = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && std::isfinite(up) && up >= 0) return static_cast<int64_t>(up);
    warnings.push_back("no uptime in " + root + "/proc/uptime");
  }
  struct sysinfo si {};
  return sysinfo(&si) == 0 ? static_cast<int64_t>(si.uptime) : 0;
}

}  // namespace

void forbid_hwloc_plugins() {
  setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_opencl,hwloc_gl,hwloc_pci,hwloc_xml_libxml,hwloc_cuda,hwloc_nvml,"
         "hwloc_rsmi,hwloc_levelzero", 1);
}

namespace {

Status probe_cpus(CpuTopology& cpu) {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return internal("hwloc_topology_init failed");
  const char* xml = std::getenv("HQ_HWLOC_XML");
  if (xml && *xml && hwloc_topology_set_xml(topo, xml) != 0) {
    hwloc_topology_destroy(topo);
    return invalid(std::string("HQ_HWLOC_XML: cannot use topology file ") + xml);
  }
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return internal("hwloc could not load the topology");
  }
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  // A topology file's memory is the fixture's. The machine's is the kernel's total (below),
  // as slurmd -C's RealMemory: hwloc sums its NUMA nodes, which on VMs with hot-plugged
  // memory hold a fraction of it (4,443 of 128,888 MiB on one 16-core GPU VM).
  if (xml && *xml) cpu.mem_mib = static_cast<int64_t>(hwloc_get_root_obj(topo)->total_memory / (1024 * 1024));
  for (int i = 0; i < cores; ++i) {  // each core's CPUs, for --hint=nomultithread
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(i));
    if (!core || !core->cpuset) continue;
    std::vector<int32_t> cpus;
    for (int id = hwloc_bitmap_first(core->cpuset); id >= 0; id = hwloc_bitmap_next(core->cpuset, id)) cpus.push_back(id);
    if (!cpus.empty()) cpu.core_cpus.push_back(std::move(cpus));
  }
  hwloc_topology_destroy(topo);
  if (pus <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    pus = n > 0 ? static_cast<int>(n) : 1;
  }
  cpu.cpus = pus;
  cpu.sockets = std::max(1, sockets);
  cores = cores > 0 ? cores : pus;
  cpu.cores_per_socket = std::max(1, cores / cpu.sockets);
  cpu.threads_per_core = std::max(1, pus / cores);
  cpu.numa_nodes = std::max(1, numa);
  cpu.boards = 1;
  return Status::ok();
}

}  // namespace

std::string default_probe_root() {
  const char* root = std::getenv("HQ_PROBE_ROOT");
  return root ? root : "";
}

Result<NodeHardware> probe_hardware(const std::string& probe_root) {
  NodeHardware hw;
  hw.hostname = probe_hostname(probe_root);
  if (Status s = probe_cpus(hw.cpu); !s) return s;
  if (hw.cpu.mem_mib <= 0) {
    struct sysinfo si {};
    if (sysinfo(&si) == 0) hw.cpu.mem_mib = static_cast<int64_t>(si.totalram) * si.mem_unit / (1024 * 1024);
  }
  hw.uptime_s = probe_uptime(probe_root, hw.warnings);
  hw.gpus = probe_gpus(probe_root, hw.warnings);
  return hw;
}

Result<HostInfo> probe_host() {
  auto hw = probe_hardware(default_probe_root());
  if (!hw) return hw.status();
  HostInfo info;
  info.hostname = hw->hostname;
  info.cpus = hw->cpu.cpus;
  info.sockets = hw->cpu.sockets;
  info.cores = hw->cpu.sockets * hw->cpu.cores_per_socket;
  info.mem_mib = hw->cpu.mem_mib;
  info.boot_time = net::wall_now() - hw->uptime_s;
  info.gpus = hw->gpus;
  info.core_cpus = hw->cpu.core_cpus;
  return info;
}

}  // namespace hq::cmd
