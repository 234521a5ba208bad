#include "cmd/agent/probe.hpp"

#include <cstdlib>
#include <hwloc.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "net/clock.hpp"

namespace hq::cmd {

Result<HostInfo> probe_host() {
  HostInfo info;
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  info.hostname = host;
  if (auto dot = info.hostname.find('.'); dot != std::string::npos) info.hostname.resize(dot);
  struct sysinfo si {};
  if (sysinfo(&si) == 0) info.boot_time = net::wall_now() - si.uptime;

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
  info.cpus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  info.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  info.sockets = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  info.mem_mib = static_cast<int64_t>(hwloc_get_root_obj(topo)->total_memory / (1024 * 1024));
  hwloc_topology_destroy(topo);
  if (info.cpus <= 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    info.cpus = n > 0 ? static_cast<int32_t>(n) : 1;
  }
  if (info.mem_mib <= 0) info.mem_mib = static_cast<int64_t>(si.totalram) * si.mem_unit / (1024 * 1024);
  return info;
}

}  // namespace hq::cmd
