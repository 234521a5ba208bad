// Hardware probe of the node agent: CPUs and memory through hwloc (the only file that
// includes hwloc). HQ_HWLOC_XML=FILE makes hwloc read a topology fixture instead.
#pragma once
#include <cstdint>
#include <string>

#include "core/status.hpp"

namespace hq::cmd {

struct HostInfo {
  std::string hostname;
  int32_t cpus = 0;        // processing units
  int32_t sockets = 0, cores = 0;
  int64_t mem_mib = 0;
  int64_t boot_time = 0;
};

Result<HostInfo> probe_host();

}  // namespace hq::cmd
