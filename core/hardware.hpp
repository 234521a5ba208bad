// What a node has: CPU topology, memory and GPUs, as a plain model that the probe
// (cmd/agent/probe.cpp, gpu_probe.cpp) fills and the rest of hq reads. Also the pure
// parsers and formatters around it: NVIDIA's procfs `information` file, sysfs CPU lists,
// Slurm's GPU type names, the `slurmd -C` report and a `[[node]]` TOML block.
// Plain values; thread-safe (no shared state).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

constexpr int32_t kMaxNodeGpus = 255;  // GPUs one node may have (config and registration)

struct CpuTopology {
  int32_t boards = 1;
  int32_t sockets = 1;           // in all, over every board
  int32_t cores_per_socket = 1;
  int32_t threads_per_core = 1;
  int32_t cpus = 1;              // processing units
  int32_t numa_nodes = 1;
  int64_t mem_mib = 0;
  std::vector<std::vector<int32_t>> core_cpus;  // each core's CPUs (OS numbers); empty: not known
};

enum class GpuVendor { kNvidia, kAmd };
std::string_view gpu_vendor_name(GpuVendor v);  // "nvidia", "amd"

struct Gpu {
  GpuVendor vendor = GpuVendor::kNvidia;
  std::string type;              // Slurm's type name, e.g. nvidia_h100_80gb_hbm3
  std::string pci;               // 0000:62:00.0 (lower case)
  std::string device;            // /dev/nvidia5, /dev/dri/renderD128
  int32_t minor = -1;            // NVIDIA device minor; -1: unknown
  std::string uuid;              // GPU-... where known
  std::vector<int32_t> local_cpus;  // CPUs next to the GPU; empty: unknown
};

struct NodeHardware {
  std::string hostname;
  CpuTopology cpu;
  std::vector<Gpu> gpus;         // by PCI address
  int64_t uptime_s = 0;
  std::vector<std::string> warnings;  // what the probe could not read, and what it did instead
};

// Slurm's rule: lower case, spaces to '_' ("NVIDIA H100 80GB HBM3" -> nvidia_h100_80gb_hbm3).
std::string gpu_type_name(std::string_view model);

// The fields hq uses from /proc/driver/nvidia/gpus/<pci>/information.
struct NvidiaInformation {
  std::string model, uuid, bus_location;
  int32_t minor = -1;
};
NvidiaInformation parse_nvidia_information(std::string_view text);

// "0-31,64-95" -> {0..31, 64..95}, sorted and distinct; an error names what is wrong.
Result<std::vector<int32_t>> parse_cpulist(std::string_view text);
std::string format_cpulist(const std::vector<int32_t>& cpus);

// Orders PCI addresses as numbers (domain:bus:device.function), whatever their case.
bool pci_less(const std::string& a, const std::string& b);
// Sorts GPUs by PCI address: deterministic, whatever order the directories came in.
void sort_gpus(std::vector<Gpu>& gpus);

// One gres entry: "gpu:TYPE:N", or "gpu:N" untyped.
std::string gres_entry(const std::string& type, int32_t count);
// "gpu:nvidia_h100_80gb_hbm3:8", types joined by ',' in order of first appearance; "" for none.
std::string gres_summary(const std::vector<Gpu>& gpus);
// One entry of a `gres` list: "gpu:N" or "gpu:TYPE:N".
struct GresCount {
  std::string type;              // "" for untyped
  int32_t count = 0;
  bool operator==(const GresCount&) const = default;
};
// "gpu:nvidia_h100_80gb_hbm3:8,gpu:2" -> entries; an error names the bad entry.
Result<std::vector<GresCount>> parse_gres(std::string_view text);

// "12-03:04:05" (days unpadded).
std::string format_uptime(int64_t seconds);
// Exactly `slurmd -C`: the NodeName line, one "Found gpu:..." line per type, UpTime.
std::string slurmd_report(const NodeHardware& hw);
// A `[[node]]` block for the cluster config.
std::string node_toml(const NodeHardware& hw);

}  // namespace hq
