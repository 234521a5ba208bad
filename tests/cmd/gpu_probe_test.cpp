#include <doctest/doctest.h>

#include <fstream>

#include "../temp_dir.hpp"
#include "cmd/agent/gpu_probe.hpp"

using namespace hq;
using hq::cmd::probe_gpus;

namespace {
std::string fixture(const std::string& name) { return std::string(HQ_SOURCE_DIR) + "/tests/fixtures/hw/" + name; }
bool mentions(const std::vector<std::string>& warnings, const std::string& text) {
  for (const auto& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("probe: 8x H100 in PCI order, minors and affinity as the files say") {
  std::vector<std::string> warnings;
  auto gpus = probe_gpus(fixture("h100x8"), warnings);
  CHECK(warnings.empty());
  REQUIRE(gpus.size() == 8);
  CHECK(gpus[0].pci == "0000:18:00.0");
  CHECK(gpus[7].pci == "0000:db:00.0");
  CHECK(gpus[0].minor == 2);               // the minor is not the PCI index
  CHECK(gpus[0].device == "/dev/nvidia2");
  CHECK(gpus[0].type == "nvidia_h100_80gb_hbm3");
  CHECK(gpus[0].uuid.rfind("GPU-", 0) == 0);
  CHECK(gpus[0].local_cpus.size() == 64);
  CHECK(gpus[7].local_cpus.front() == 64);
}

TEST_CASE("probe: the files of a real H200 (driver 580, a 16-core VM) as they were read there") {
  std::vector<std::string> warnings;
  auto gpus = probe_gpus(fixture("h200vm"), warnings);
  CHECK(warnings.empty());
  REQUIRE(gpus.size() == 1);
  CHECK(gpus[0].pci == "0000:00:06.0");
  CHECK(gpus[0].type == "nvidia_h200");
  CHECK(gpus[0].minor == 0);
  CHECK(gpus[0].device == "/dev/nvidia0");
  CHECK(gpus[0].uuid == "GPU-87092fba-d7f1-adbe-7207-0966b540fc89");
  CHECK(gpus[0].local_cpus.size() == 16);
}

TEST_CASE("probe: a missing cpulist is a warning, not a lost GPU") {
  std::vector<std::string> warnings;
  auto gpus = probe_gpus(fixture("a100x4"), warnings);
  REQUIRE(gpus.size() == 4);
  CHECK(gpus[2].pci == "0000:47:00.0");
  CHECK(gpus[2].local_cpus.empty());
  CHECK(gpus[1].local_cpus.size() == 32);
  CHECK(mentions(warnings, "0000:47:00.0"));
  CHECK(gpus[0].type == "nvidia_a100-sxm4-40gb");
}

TEST_CASE("probe: AMD cards by vendor id, render nodes, not the BMC or connectors") {
  std::vector<std::string> warnings;
  auto gpus = probe_gpus(fixture("mi300x2"), warnings);
  CHECK(warnings.empty());
  REQUIRE(gpus.size() == 2);
  CHECK(gpus[0].pci == "0000:05:00.0");    // card2 sorts first by PCI address
  CHECK(gpus[0].device == "/dev/dri/renderD129");
  CHECK(gpus[0].vendor == GpuVendor::kAmd);
  CHECK(gpus[0].type == "amd_instinct_mi300x");
  CHECK(gpus[1].local_cpus.size() == 32);
}

TEST_CASE("probe: mixed vendors interleave by PCI address - none is empty") {
  std::vector<std::string> warnings;
  auto gpus = probe_gpus(fixture("mixed"), warnings);
  REQUIRE(gpus.size() == 3);
  CHECK(gpus[0].type == "nvidia_l40s");
  CHECK(gpus[1].type == "amd_instinct_mi210");
  CHECK(gpus[2].minor == 1);
  CHECK(probe_gpus(fixture("none"), warnings).empty());
  CHECK(probe_gpus("/nonexistent/root", warnings).empty());
}

TEST_CASE("probe: malformed files degrade to warnings") {
  hq::test::TempDir dir;
  std::string gpu = dir.path() + "/proc/driver/nvidia/gpus/0000:01:00.0";
  std::filesystem::create_directories(gpu);
  std::ofstream(gpu + "/information") << "\x7f\x45\x4c\x46 garbage without fields\n";
  std::string cpus = dir.path() + "/sys/bus/pci/drivers/nvidia/0000:01:00.0";
  std::filesystem::create_directories(cpus);
  std::ofstream(cpus + "/local_cpulist") << "7-3\n";
  std::filesystem::create_directories(dir.path() + "/proc/driver/nvidia/gpus/0000:02:00.0");  // no information
  std::vector<std::string> warnings;
  auto gpus = probe_gpus(dir.path(), warnings);
  REQUIRE(gpus.size() == 1);
  CHECK(gpus[0].type.empty());
  CHECK(gpus[0].minor == -1);
  CHECK(gpus[0].local_cpus.empty());
  CHECK(mentions(warnings, "Device name not found"));
  CHECK(mentions(warnings, "Minor number not found"));
  CHECK(mentions(warnings, "bad CPU list"));
  CHECK(mentions(warnings, "0000:02:00.0"));
}
