#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <hwloc.h>

#include "../temp_dir.hpp"
#include "cmd/agent/probe.hpp"

using namespace hq;

namespace {
// Writes an hwloc XML fixture for a synthetic machine (2 sockets x 4 cores x 2 threads).
bool write_fixture(const std::string& path) {
  hwloc_topology_t t;
  hwloc_topology_init(&t);
  bool ok = hwloc_topology_set_synthetic(t, "pack:2 [numa(memory=8589934592)] core:4 pu:2") == 0 && hwloc_topology_load(t) == 0 &&
            hwloc_topology_export_xml(t, path.c_str(), 0) == 0;
  hwloc_topology_destroy(t);
  return ok;
}
}  // namespace

TEST_CASE("probe: HQ_HWLOC_XML makes the agent see the fixture machine") {
  test::TempDir dir;
  std::string xml = dir.path() + "/machine.xml";
  REQUIRE(write_fixture(xml));
  setenv("HQ_HWLOC_XML", xml.c_str(), 1);
  auto host = cmd::probe_host();
  unsetenv("HQ_HWLOC_XML");
  REQUIRE_MESSAGE(host.is_ok(), host.status().message());
  CHECK(host->cpus == 16);
  CHECK(host->cores == 8);
  CHECK(host->sockets == 2);
  CHECK(host->mem_mib == 16 * 1024);
}

TEST_CASE("probe: a missing topology file is an error naming it") {
  setenv("HQ_HWLOC_XML", "/nonexistent/topo.xml", 1);
  auto host = cmd::probe_host();
  unsetenv("HQ_HWLOC_XML");
  REQUIRE(!host.is_ok());
  CHECK(host.status().message().find("/nonexistent/topo.xml") != std::string::npos);
}

TEST_CASE("probe: without a topology file the memory is the kernel's total, as slurmd -C's RealMemory") {
  unsetenv("HQ_HWLOC_XML");
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = -1;
  while (meminfo >> key)
    if (key == "MemTotal:" && (meminfo >> kib)) break;
  REQUIRE(kib > 0);
  auto host = cmd::probe_host();
  REQUIRE_MESSAGE(host.is_ok(), host.status().message());
  CHECK(host->mem_mib == kib / 1024);
}
