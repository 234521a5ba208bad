#include "cmd/agent/gpu_probe.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/units.hpp"

namespace hq::cmd {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxFile = 64 * 1024;  // sysfs and procfs files are small; cap what is read

bool read_text(const fs::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(kMaxFile, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(in.gcount()));
  return true;
}

// Directory entries, sorted; none (and no error) when the directory is missing.
std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

void read_local_cpus(const fs::path& file, Gpu& gpu, std::vector<std::string>& warnings) {
  std::string text;
  if (!read_text(file, text)) {
    warnings.push_back("GPU " + gpu.pci + ": no " + file.string() + ": CPU affinity unknown");
    return;
  }
  auto cpus = parse_cpulist(text);
  if (!cpus) warnings.push_back("GPU " + gpu.pci + ": " + file.string() + ": " + cpus.status().message());
  else gpu.local_cpus = std::move(cpus).value();
}

void probe_nvidia(const fs::path& root, std::vector<Gpu>& gpus, std::vector<std::string>& warnings) {
  for (const fs::path& dir : entries(root / "proc/driver/nvidia/gpus")) {
    std::string name = dir.filename().string();
    if (name.size() <= 4) continue;  // as Slurm: skips "." and ".."
    Gpu gpu;
    gpu.vendor = GpuVendor::kNvidia;
    gpu.pci = to_lower(name);
    std::string text;
    if (!read_text(dir / "information", text)) {
      warnings.push_back("NVIDIA GPU " + gpu.pci + ": cannot read " + (dir / "information").string() + "; skipped");
      continue;
    }
    NvidiaInformation info = parse_nvidia_information(text);
    if (info.model.empty()) warnings.push_back("NVIDIA GPU " + gpu.pci + ": Device name not found");
    gpu.type = gpu_type_name(info.model);
    gpu.uuid = info.uuid;
    gpu.minor = info.minor;
    if (info.minor >= 0) gpu.device = "/dev/nvidia" + std::to_string(info.minor);
    else warnings.push_back("NVIDIA GPU " + gpu.pci + ": Device file and Minor number not found");
    read_local_cpus(root / "sys/bus/pci/drivers/nvidia" / name / "local_cpulist", gpu, warnings);
    gpus.push_back(std::move(gpu));
  }
}

// card0, card1, ... but not the connectors (card0-DP-1).
bool is_card(const std::string& name) {
  return name.size() > 4 && name.rfind("card", 0) == 0 &&
         std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The PCI address of a DRM device: PCI_SLOT_NAME in its uevent, else where the link points.
std::string pci_of(const fs::path& device) {
  std::string uevent;
  if (read_text(device / "uevent", uevent))
    for (std::string_view line : split(uevent, '\n'))
      if (line.rfind("PCI_SLOT_NAME=", 0) == 0) return to_lower(trim(line.substr(14)));
  std::error_code ec;
  fs::path target = fs::canonical(device, ec);
  return ec ? "" : to_lower(target.filename().string());
}

void probe_amd(const fs::path& root, std::vector<Gpu>& gpus, std::vector<std::string>& warnings) {
  for (const fs::path& card : entries(root / "sys/class/drm")) {
    if (!is_card(card.filename().string())) continue;
    fs::path device = card / "device";
    std::string vendor;
    if (!read_text(device / "vendor", vendor) || trim(vendor) != "0x1002") continue;
    Gpu gpu;
    gpu.vendor = GpuVendor::kAmd;
    gpu.pci = pci_of(device);
    if (gpu.pci.empty()) {
      warnings.push_back("AMD GPU " + card.filename().string() + ": PCI address unknown");
      gpu.pci = card.filename().string();
    }
    std::string product;
    if (read_text(device / "product_name", product) && !trim(product).empty()) gpu.type = gpu_type_name(trim(product));
    for (const fs::path& node : entries(device / "drm")) {
      std::string n = node.filename().string();
      if (n.rfind("renderD", 0) == 0) {
        gpu.device = "/dev/dri/" + n;
        break;
      }
    }
    if (gpu.device.empty()) warnings.push_back("AMD GPU " + gpu.pci + ": no render node under " + (device / "drm").string());
    read_local_cpus(device / "local_cpulist", gpu, warnings);
    gpus.push_back(std::move(gpu));
  }
}

}  // namespace

std::vector<Gpu> probe_gpus(const std::string& root, std::vector<std::string>& warnings) {
  fs::path base = root.empty() ? fs::path("/") : fs::path(root);
  std::vector<Gpu> gpus;
  try {
    probe_nvidia(base, gpus, warnings);
    probe_amd(base, gpus, warnings);
  } catch (const std::exception& e) {  // filesystem errors we did not foresee: keep what we found
    warnings.push_back(std::string("GPU probe stopped early: ") + e.what());
  }
  sort_gpus(gpus);
  return gpus;
}

}  // namespace hq::cmd
