// GPU discovery without vendor libraries, from procfs and sysfs under a probe root
// ("" for the real machine; tests pass a fake tree):
//   NVIDIA: ROOT/proc/driver/nvidia/gpus/<pci>/information, with CPU affinity from
//           ROOT/sys/bus/pci/drivers/nvidia/<pci>/local_cpulist;
//   AMD:    ROOT/sys/class/drm/card<N>/device with vendor 0x1002 (product_name where
//           present), its render node ROOT/sys/class/drm/card<N>/device/drm/renderD<M>.
// Missing or malformed files become warnings and a smaller result, never an error.
// Ordered by PCI address. Thread-safe (no shared state).
#pragma once
#include <string>
#include <vector>

#include "core/hardware.hpp"

namespace hq::cmd {

std::vector<Gpu> probe_gpus(const std::string& root, std::vector<std::string>& warnings);

}  // namespace hq::cmd
