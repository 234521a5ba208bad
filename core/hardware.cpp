#include "core/hardware.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/units.hpp"

namespace hq {

std::string_view gpu_vendor_name(GpuVendor v) { return v == GpuVendor::kAmd ? "amd" : "nvidia"; }

std::string gpu_type_name(std::string_view model) {
  std::string out = to_lower(trim(model));
  std::replace(out.begin(), out.end(), ' ', '_');
  return out;
}

NvidiaInformation parse_nvidia_information(std::string_view text) {
  NvidiaInformation info;
  for (std::string_view line : split(text, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "Model") info.model = std::string(value);
    else if (key == "GPU UUID") info.uuid = std::string(value);
    else if (key == "Bus Location") info.bus_location = std::string(value);
    else if (key == "Device Minor") {
      if (auto m = parse_int(value, 0, 1 << 20)) info.minor = static_cast<int32_t>(*m);
    }
  }
  return info;
}

Result<std::vector<int32_t>> parse_cpulist(std::string_view text) {
  std::vector<int32_t> cpus;
  text = trim(text);
  if (text.empty()) return cpus;
  constexpr int64_t kMaxCpu = 1 << 20;   // highest CPU number
  constexpr int64_t kMaxCpus = 1 << 16;  // CPUs in one list (bounds memory on hostile input)
  for (std::string_view part : split(text, ',')) {
    auto dash = part.find('-');
    auto lo = parse_int(part.substr(0, dash), 0, kMaxCpu);
    auto hi = dash == std::string_view::npos ? lo : parse_int(part.substr(dash + 1), 0, kMaxCpu);
    if (!lo || !hi || *hi < *lo) return invalid("bad CPU list '" + std::string(text) + "' at '" + std::string(part) + "'");
    if (static_cast<int64_t>(cpus.size()) + (*hi - *lo + 1) > kMaxCpus)
      return invalid("CPU list '" + std::string(text.substr(0, 80)) + "' names more than " + std::to_string(kMaxCpus) + " CPUs");
    for (int64_t c = *lo; c <= *hi; ++c) cpus.push_back(static_cast<int32_t>(c));
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpulist(const std::vector<int32_t>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

namespace {
// 0000:62:00.0 -> (0x0000, 0x62, 0x00, 0x0); anything unparsable sorts last, by text.
std::tuple<bool, unsigned, unsigned, unsigned, unsigned> pci_key(const std::string& pci) {
  unsigned dom = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  bool ok = std::sscanf(pci.c_str(), "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4;
  return {!ok, dom, bus, dev, fn};
}
}  // namespace

bool pci_less(const std::string& a, const std::string& b) {
  auto ka = pci_key(a), kb = pci_key(b);
  return ka != kb ? ka < kb : a < b;
}

void sort_gpus(std::vector<Gpu>& gpus) {
  std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) { return pci_less(a.pci, b.pci); });
}

namespace {
// (type, count) in order of first appearance.
std::vector<std::pair<std::string, int32_t>> gpu_counts(const std::vector<Gpu>& gpus) {
  std::vector<std::pair<std::string, int32_t>> counts;
  for (const Gpu& g : gpus) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == g.type; });
    if (it == counts.end()) counts.emplace_back(g.type, 1);
    else ++it->second;
  }
  return counts;
}
}  // namespace

std::string gres_entry(const std::string& type, int32_t count) {
  return type.empty() ? "gpu:" + std::to_string(count) : "gpu:" + type + ":" + std::to_string(count);
}

std::string gres_summary(const std::vector<Gpu>& gpus) {
  std::string out;
  for (const auto& [type, count] : gpu_counts(gpus)) out += (out.empty() ? "" : ",") + gres_entry(type, count);
  return out;
}

Result<std::vector<GresCount>> parse_gres(std::string_view text) {
  std::vector<GresCount> out;
  if (trim(text).empty()) return out;
  for (std::string_view entry : split(text, ',')) {
    std::vector<std::string_view> f = split(trim(entry), ':');
    auto bad = [&](const std::string& why) { return invalid("bad gres entry '" + std::string(entry) + "': " + why); };
    if (f.size() < 2 || f.size() > 3) return bad("expected gpu:COUNT or gpu:TYPE:COUNT");
    if (f[0] != "gpu") return bad("only 'gpu' is a known generic resource");
    auto count = parse_int(f.back(), 0, 1024);
    if (!count) return bad("the count must be a whole number from 0 to 1024");
    GresCount g{f.size() == 3 ? std::string(f[1]) : "", static_cast<int32_t>(*count)};
    if (f.size() == 3 && g.type.empty()) return bad("empty type");
    out.push_back(std::move(g));
  }
  return out;
}

std::string format_uptime(int64_t seconds) {
  seconds = std::max<int64_t>(0, seconds);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(seconds / 86400),
                static_cast<long long>(seconds / 3600 % 24), static_cast<long long>(seconds / 60 % 60),
                static_cast<long long>(seconds % 60));
  return buf;
}

std::string slurmd_report(const NodeHardware& hw) {
  const CpuTopology& c = hw.cpu;
  std::string out = "NodeName=" + hw.hostname + " CPUs=" + std::to_string(c.cpus) + " Boards=" + std::to_string(c.boards) +
                    " SocketsPerBoard=" + std::to_string(c.sockets / std::max(1, c.boards)) +
                    " CoresPerSocket=" + std::to_string(c.cores_per_socket) +
                    " ThreadsPerCore=" + std::to_string(c.threads_per_core) + " RealMemory=" + std::to_string(c.mem_mib);
  if (!hw.gpus.empty()) out += " Gres=" + gres_summary(hw.gpus);
  out += "\n";
  for (const auto& entry : gpu_counts(hw.gpus)) {
    const std::string& type = entry.first;
    int32_t count = entry.second;
    auto first = std::find_if(hw.gpus.begin(), hw.gpus.end(), [&](const Gpu& g) { return g.type == type; });
    // Named after Slurm's detector for the vendor: nvidia (procfs) and rsmi (AMD).
    std::string detector = first->vendor == GpuVendor::kAmd ? "rsmi" : "nvidia";
    out += "Found " + gres_entry(type, count) + " with Autodetect=" + detector +
           " (Substring of gpu name may be used instead)\n";
  }
  out += "UpTime=" + format_uptime(hw.uptime_s) + "\n";
  return out;
}

std::string node_toml(const NodeHardware& hw) {
  const CpuTopology& c = hw.cpu;
  std::string out = "[[node]]\nnames = \"" + hw.hostname + "\"\ncpus = " + std::to_string(c.cpus) +
                    "\nboards = " + std::to_string(c.boards) +
                    "\nsockets = " + std::to_string(c.sockets) + "\ncores_per_socket = " +
                    std::to_string(c.cores_per_socket) + "\nthreads_per_core = " + std::to_string(c.threads_per_core) +
                    "\nmemory = \"" + std::to_string(c.mem_mib) + "M\"\n";
  if (!hw.gpus.empty()) out += "gres = \"" + gres_summary(hw.gpus) + "\"\n";
  return out;
}

}  // namespace hq
