// The file operations the cgroup layer is made of (cmd/agent/cgroup.cpp, and its spare
// groups in cmd/agent/cgroup_spares.cpp): control files written and read, group
// directories made and removed. Agent event-loop thread only, as the cgroup layer.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/agent/cgroup.hpp"
#include "core/status.hpp"

namespace hq::cmd::cgroup_files {

bool exists(const std::string& path);
// One write of `value`; O_CREAT changes nothing on cgroupfs and lets tests use plain directories.
Status write_file(const std::string& path, const std::string& value);
Status make_dir(const std::string& path);  // an existing one is fine
int64_t read_int(const std::string& path);  // -1: absent or not a number
// "key value" lines (cpu.stat, memory.events, memory.oom_control): the value of `key`, or -1.
int64_t read_keyed(const std::string& path, std::string_view key);
// Writes `limits` into freshly made group directories `dirs` (v1: `controllers` names each one's).
Status write_limits(CgroupMode mode, const std::vector<std::string>& dirs, const std::vector<std::string>& controllers,
                    const CgroupLimits& limits, bool device_filters);
void remove_dir(const std::string& dir);  // an empty group, its (emptied) children first

}  // namespace hq::cmd::cgroup_files
