// cgroup v2 device confinement: loads core/device_filter's program into the kernel and
// attaches it to a group (BPF_CGROUP_DEVICE, with BPF_F_ALLOW_MULTI so that a step's
// filter adds to its job's: every filter on the way up must allow an access). The
// kernel keeps the program while the group exists; removing the group detaches it.
// Any thread (each call is a few system calls).
#pragma once
#include <string>
#include <vector>

#include "core/device_filter.hpp"
#include "core/status.hpp"

namespace hq::cmd {

// Whether device filters can confine groups under `dir`: it is on a cgroup2 file system,
// and a filter loads and attaches to a scratch group made in it (root, CONFIG_CGROUP_BPF,
// no ancestor filter that refuses others), which is removed again. Raises this process's
// RLIMIT_MEMLOCK first where it may (kernels before 5.11 count BPF programs there).
bool device_filters_work(const std::string& dir);

// Refuses the character devices `deny` to every process in the group at `dir` and its
// children. An empty list attaches nothing.
Status attach_device_filter(const std::string& dir, const std::vector<DeviceId>& deny);

}  // namespace hq::cmd
