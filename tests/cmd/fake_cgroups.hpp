// Fake cgroup hierarchies made of plain directories and files, for the cgroup layer's
// tests (tests/cmd/cgroup_test.cpp, cgroup_spares_test.cpp): what the kernel would
// provide is put in place, what hq writes is read back.
#pragma once
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cmd/agent/cgroup.hpp"
#include "cmd/paths.hpp"

namespace hq::test {

inline void put(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}
inline std::string get(const std::string& path) { return cmd::read_small_file(path); }

// A fake v2 host under `root`: its cgroups opened for node n1.
inline cmd::Cgroups fake_v2(const std::string& root) {
  put(root + "/cgroup.controllers", "cpuset cpu io memory pids\n");
  auto cg = cmd::Cgroups::open(root, "auto", "n1");
  REQUIRE(cg.is_ok());
  return std::move(cg).value();
}

// A fake v1 host: every controller hq uses mounted under `root`, the cpuset with `cpus`, `mems`.
inline void fake_v1(const std::string& root, const std::string& cpus, const std::string& mems) {
  for (const char* ctl : {"memory", "cpuset", "pids", "freezer", "devices", "cpuacct"}) put(root + "/" + ctl + "/cgroup.procs", "");
  put(root + "/cpuset/cpuset.cpus", cpus + "\n");
  put(root + "/cpuset/cpuset.mems", mems + "\n");
}

}  // namespace hq::test
