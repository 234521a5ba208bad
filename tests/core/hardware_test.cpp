#include <doctest/doctest.h>

#include "core/hardware.hpp"

using namespace hq;

TEST_CASE("GPU type names follow Slurm: lower case, spaces to underscores, dashes kept") {
  CHECK(gpu_type_name("NVIDIA H100 80GB HBM3") == "nvidia_h100_80gb_hbm3");
  CHECK(gpu_type_name("  NVIDIA A100-SXM4-40GB \n") == "nvidia_a100-sxm4-40gb");
  CHECK(gpu_type_name("AMD Instinct MI300X") == "amd_instinct_mi300x");
  CHECK(gpu_type_name("") == "");
}

TEST_CASE("NVIDIA information files: the fields hq uses, whatever the spacing - junk is ignored") {
  auto info = parse_nvidia_information(
      "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 10\nGPU UUID: \t GPU-9221d5d1\n"
      "Bus Location: \t 0000:62:00.0\nDevice Minor: \t 5\nGPU Excluded: \t No\n");
  CHECK(info.model == "NVIDIA H100 80GB HBM3");
  CHECK(info.uuid == "GPU-9221d5d1");
  CHECK(info.bus_location == "0000:62:00.0");
  CHECK(info.minor == 5);
  auto junk = parse_nvidia_information("no colon here\nDevice Minor: minus one\n\x01\x02:\n");
  CHECK(junk.model.empty());
  CHECK(junk.minor == -1);
}

TEST_CASE("CPU lists parse, sort, merge, and reject what is not a list") {
  CHECK(*parse_cpulist("0-3,8,10-11\n") == std::vector<int32_t>{0, 1, 2, 3, 8, 10, 11});
  CHECK(*parse_cpulist("5,1-2,2") == std::vector<int32_t>{1, 2, 5});
  CHECK(parse_cpulist("")->empty());
  CHECK(!parse_cpulist("3-1"));
  CHECK(!parse_cpulist("a-b"));
  CHECK(!parse_cpulist("1,,2"));
  CHECK(parse_cpulist("0-99999999").status().message().find("bad CPU list") != std::string::npos);
  CHECK(parse_cpulist("0-60000,0-60000").status().message().find("more than 65536 CPUs") != std::string::npos);
  CHECK(format_cpulist({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  CHECK(format_cpulist({}) == "");
}

TEST_CASE("GPUs are ordered by PCI address as numbers") {
  CHECK(pci_less("0000:0f:00.0", "0000:18:00.0"));
  CHECK(pci_less("0000:18:00.0", "0000:DB:00.0"));
  CHECK(!pci_less("0000:db:00.0", "0000:18:00.0"));
  CHECK(pci_less("0000:18:00.0", "card3"));  // unparsable names last
  std::vector<Gpu> gpus(3);
  gpus[0].pci = "0000:c1:00.0";
  gpus[1].pci = "0000:41:00.0";
  gpus[2].pci = "0000:81:00.0";
  sort_gpus(gpus);
  CHECK(gpus[0].pci == "0000:41:00.0");
  CHECK(gpus[2].pci == "0000:c1:00.0");
}

TEST_CASE("gres lists: summary by type in order, parsing with clear errors") {
  std::vector<Gpu> gpus(4);
  gpus[0].type = gpus[2].type = "nvidia_l40s";
  gpus[1].type = "amd_instinct_mi210";
  gpus[3].type = "";
  CHECK(gres_summary(gpus) == "gpu:nvidia_l40s:2,gpu:amd_instinct_mi210:1,gpu:1");
  CHECK(gres_summary({}) == "");
  auto g = parse_gres("gpu:nvidia_h100_80gb_hbm3:8,gpu:2");
  REQUIRE(g);
  REQUIRE(g->size() == 2);
  CHECK((*g)[0].type == "nvidia_h100_80gb_hbm3");
  CHECK((*g)[0].count == 8);
  CHECK((*g)[1].type == "");
  CHECK((*g)[1].count == 2);
  CHECK(parse_gres("")->empty());
  CHECK(parse_gres("fpga:2").status().message().find("only 'gpu'") != std::string::npos);
  CHECK(!parse_gres("gpu:h100:x"));
  CHECK(!parse_gres("gpu::2"));
  CHECK(!parse_gres("gpu"));
}

TEST_CASE("slurmd -C report and [[node]] block from a model") {
  NodeHardware hw;
  hw.hostname = "gpu01";
  hw.cpu = CpuTopology{1, 2, 32, 2, 128, 2, 2063912};
  hw.uptime_s = 12 * 86400 + 3 * 3600 + 4 * 60 + 5;
  Gpu gpu;
  gpu.type = "nvidia_h100_80gb_hbm3";
  hw.gpus.assign(8, gpu);
  CHECK(slurmd_report(hw) ==
        "NodeName=gpu01 CPUs=128 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=2 RealMemory=2063912 "
        "Gres=gpu:nvidia_h100_80gb_hbm3:8\n"
        "Found gpu:nvidia_h100_80gb_hbm3:8 with Autodetect=nvidia (Substring of gpu name may be used instead)\n"
        "UpTime=12-03:04:05\n");
  CHECK(node_toml(hw).find("gres = \"gpu:nvidia_h100_80gb_hbm3:8\"") != std::string::npos);
  hw.gpus.clear();
  CHECK(slurmd_report(hw).find("Gres") == std::string::npos);
  CHECK(format_uptime(59) == "0-00:00:59");
  CHECK(format_uptime(-5) == "0-00:00:00");
}
