// `hq node -C` against fake hardware trees: the exact output of slurmd -C (golden files
// tests/fixtures/hw/*/expected-C.txt), and a [[node]] block the config loader accepts.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {
CmdResult probe(const std::string& name, const std::string& extra = "") {
  std::string dir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/hw/" + name;
  return sh("(HQ_HWLOC_XML=" + dir + "/topology.xml " + HQ_BINARY + " node -C --probe-root " + dir + " " + extra +
            " 2>/dev/null)");
}
}  // namespace

TEST_CASE("e2e: hq node -C prints exactly what slurmd -C would for each fixture") {
  for (const char* name : {"h100x8", "a100x4", "mi300x2", "mixed", "none", "h200vm"}) {
    INFO("fixture " << std::string(name));
    auto r = probe(name);
    CHECK(r.rc == 0);
    CHECK(r.out == slurp(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/hw/" + name + "/expected-C.txt"));
  }
}

TEST_CASE("e2e: hq node -C --toml gives a [[node]] block that a cluster config accepts") {
  auto r = probe("h100x8", "--toml");
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("gres = \"gpu:nvidia_h100_80gb_hbm3:8\"") != std::string::npos);
  TempDir dir;
  std::ofstream(dir.path() + "/cluster.toml") << "[cluster]\nname = \"t\"\n" << r.out
                                              << "[[partition]]\nname = \"gpu\"\nnodes = \"gpu01\"\ndefault = true\n";
  auto check = sh(std::string(HQ_BINARY) + " config check " + dir.path() + "/cluster.toml");
  INFO(check.out);
  CHECK(check.rc == 0);
  std::ofstream(dir.path() + "/bad.toml") << "[cluster]\nname = \"t\"\n[[node]]\nnames = \"n1\"\ncpus = 10\nsockets = 2\n"
                                          << "cores_per_socket = 4\nthreads_per_core = 1\ngres = \"gpu:a100:x\"\n";
  auto bad = sh(std::string(HQ_BINARY) + " config check " + dir.path() + "/bad.toml");
  CHECK(bad.rc != 0);
  CHECK(bad.out.find("gres") != std::string::npos);
}
