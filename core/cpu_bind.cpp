#include "core/cpu_bind.hpp"

#include <cstdio>

#include <algorithm>
#include <cctype>
#include <optional>
#include <tuple>

#include "core/hardware.hpp"
#include "core/units.hpp"

namespace hq {

namespace {

// "0x3" (or "3"): the CPUs whose bits are set.
Result<std::vector<int32_t>> parse_mask(std::string_view hex) {
  if (hex.rfind("0x", 0) == 0 || hex.rfind("0X", 0) == 0) hex.remove_prefix(2);
  if (hex.empty() || hex.size() > 256) return invalid("--cpu-bind=mask_cpu needs hexadecimal masks");
  std::vector<int32_t> cpus;
  for (size_t i = 0; i < hex.size(); ++i) {
    char c = hex[hex.size() - 1 - i];
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (v < 0) return invalid("--cpu-bind=mask_cpu: '" + std::string(hex) + "' is not a hexadecimal mask");
    for (int bit = 0; bit < 4; ++bit)
      if (v & (1 << bit)) cpus.push_back(static_cast<int32_t>(i * 4 + bit));
  }
  std::sort(cpus.begin(), cpus.end());
  if (cpus.empty()) return invalid("--cpu-bind=mask_cpu: a mask selects no CPU");
  return cpus;
}

// map_cpu's list: a CPU per local task, in order, repeats allowed ("0,2*3" is 0,2,2,2).
Result<std::vector<int32_t>> parse_cpu_map(std::string_view list) {
  constexpr size_t kMaxEntries = 4096;  // a CPU per local task: more than any node runs
  std::vector<int32_t> out;
  for (std::string_view item : split(list, ',')) {
    size_t star = item.find('*');
    auto cpu = parse_int(item.substr(0, star), 0, 65535);
    Result<int64_t> times = star == std::string_view::npos ? Result<int64_t>(int64_t{1}) : parse_int(item.substr(star + 1), 1, 4096);
    if (!cpu || !times) return invalid("--cpu-bind=map_cpu: '" + std::string(item) + "' is not a CPU number");
    if (out.size() + static_cast<size_t>(*times) > kMaxEntries)
      return invalid("--cpu-bind=map_cpu: more than " + std::to_string(kMaxEntries) + " CPUs listed");
    out.insert(out.end(), static_cast<size_t>(*times), static_cast<int32_t>(*cpu));
  }
  return out;
}

std::string lower(std::string_view t) {
  std::string out(t);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "map_cpu:<list>" (also mapcpu, and '=' for ':'): the list, or nullopt when `t` is not `name`.
std::optional<std::string_view> listed(std::string_view t, std::string_view name) {
  std::string l = lower(t.substr(0, std::min(t.size(), name.size() + 1)));
  std::string squeezed(name);
  squeezed.erase(std::remove(squeezed.begin(), squeezed.end(), '_'), squeezed.end());
  for (const std::string& n : {std::string(name), squeezed})
    if (l.size() > n.size() && l.compare(0, n.size(), n) == 0 && (l[n.size()] == ':' || l[n.size()] == '='))
      return t.substr(n.size() + 1);
  if (lower(t) == name || lower(t) == squeezed) return std::string_view{};
  return std::nullopt;
}

Status parse_bind_token(std::string_view t, CpuBind& b) {
  static const std::pair<std::string_view, CpuBindKind> kWords[] = {
      {"none", CpuBindKind::kNone},      {"no", CpuBindKind::kNone},         {"cores", CpuBindKind::kCores},
      {"core", CpuBindKind::kCores},     {"threads", CpuBindKind::kThreads}, {"thread", CpuBindKind::kThreads},
      {"sockets", CpuBindKind::kSockets}, {"socket", CpuBindKind::kSockets}, {"ldoms", CpuBindKind::kLdoms},
      {"ldom", CpuBindKind::kLdoms},     {"rank_ldom", CpuBindKind::kLdoms}, {"rank", CpuBindKind::kRank}};
  std::string l = lower(t);
  if (l == "q" || l == "quiet" || l == "v" || l == "verbose") {
    b.verbose = l[0] == 'v';
    return Status::ok();
  }
  if (l == "one_thread") return Status::ok();
  for (const auto& [word, kind] : kWords)
    if (l == word) {
      b.kind = kind;
      return Status::ok();
    }
  if (auto list = listed(t, "map_cpu")) {
    if (list->empty()) return invalid("missing list for \"--cpu-bind=map_cpu:<list>\"");
    auto cpus = parse_cpu_map(*list);
    if (!cpus) return cpus.status();
    b.kind = CpuBindKind::kMap;
    b.map = std::move(cpus).value();
    return Status::ok();
  }
  if (auto list = listed(t, "mask_cpu")) {
    if (list->empty()) return invalid("missing list for \"--cpu-bind=mask_cpu:<list>\"");
    b.kind = CpuBindKind::kMask;
    b.masks.clear();
    if (list->size() > 65536) return invalid("--cpu-bind=mask_cpu: the list is too long");
    for (std::string_view m : split(*list, ',')) {
      auto cpus = parse_mask(m);
      if (!cpus) return cpus.status();
      b.masks.push_back(std::move(cpus).value());
    }
    return Status::ok();
  }
  if (listed(t, "map_ldom") || listed(t, "mask_ldom")) {
    b.kind = CpuBindKind::kLdoms;
    return Status::ok();
  }
  return invalid("unrecognized --cpu-bind argument \"" + std::string(t) + "\"");
}

bool within(const std::vector<int32_t>& cpus, const std::vector<int32_t>& allowed) {
  return std::all_of(cpus.begin(), cpus.end(), [&](int32_t c) { return std::binary_search(allowed.begin(), allowed.end(), c); });
}

}  // namespace

Result<CpuBind> parse_cpu_bind(std::string_view text) {
  CpuBind b;
  // Tokens are split at commas not followed by a digit, so "verbose,map_cpu:0,2" is two.
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    bool end = i == text.size() || (text[i] == ',' && !(i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))));
    if (!end) continue;
    std::string_view tok = text.substr(start, i - start);
    start = i + 1;
    if (tok.empty()) continue;
    if (Status s = parse_bind_token(tok, b); !s) return s;
  }
  return b;
}

std::vector<int32_t> choose_cpus(const std::vector<int32_t>& pool, const std::map<int32_t, int32_t>& in_use,
                                 int32_t n, const std::vector<int32_t>& preferred) {
  std::vector<std::tuple<int32_t, int32_t, int32_t>> ranked;  // (jobs on it, not preferred, id)
  for (int32_t cpu : pool) {
    auto it = in_use.find(cpu);
    bool pref = std::binary_search(preferred.begin(), preferred.end(), cpu);
    ranked.emplace_back(it == in_use.end() ? 0 : it->second, pref ? 0 : 1, cpu);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<int32_t> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int32_t>(out.size()) < n; ++i) out.push_back(std::get<2>(ranked[i]));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int32_t> choose_cores(const std::vector<int32_t>& pool, const std::map<int32_t, int32_t>& in_use, int32_t n,
                                  const std::vector<int32_t>& preferred, const std::vector<std::vector<int32_t>>& cores) {
  std::vector<int32_t> sorted = pool;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::tuple<int32_t, int32_t, size_t>> ranked;  // (jobs on its CPUs, not preferred, core)
  for (size_t c = 0; c < cores.size(); ++c) {
    const auto& core = cores[c];
    if (core.empty() || !std::all_of(core.begin(), core.end(), [&](int32_t cpu) {
          return std::binary_search(sorted.begin(), sorted.end(), cpu);
        }))
      continue;
    int32_t jobs = 0;
    bool pref = false;
    for (int32_t cpu : core) {
      if (auto it = in_use.find(cpu); it != in_use.end()) jobs += it->second;
      pref = pref || std::binary_search(preferred.begin(), preferred.end(), cpu);
    }
    ranked.emplace_back(jobs, pref ? 0 : 1, c);
  }
  std::sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), cores[std::get<2>(a)].front()) <
           std::tie(std::get<0>(b), std::get<1>(b), cores[std::get<2>(b)].front());
  });
  std::vector<int32_t> out;
  for (const auto& r : ranked) {
    if (static_cast<int32_t>(out.size()) >= n) break;
    const auto& core = cores[std::get<2>(r)];
    out.insert(out.end(), core.begin(), core.end());
  }
  if (static_cast<int32_t>(out.size()) != n) return choose_cpus(pool, in_use, n, preferred);  // not whole cores
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int32_t> first_threads(const std::vector<int32_t>& cpus, const std::vector<std::vector<int32_t>>& cores) {
  if (cores.empty()) return cpus;
  std::vector<int32_t> out;
  for (const auto& core : cores) {
    int32_t lowest = -1;
    for (int32_t cpu : core)
      if (std::binary_search(cpus.begin(), cpus.end(), cpu) && (lowest < 0 || cpu < lowest)) lowest = cpu;
    if (lowest >= 0) out.push_back(lowest);
  }
  std::sort(out.begin(), out.end());
  return out.empty() ? cpus : out;
}

Result<std::vector<int32_t>> affinity_for(const CpuBind& bind, const std::vector<int32_t>& allocated) {
  auto outside = [&](const std::string& what) {
    return invalid("--cpu-bind=" + what + ", which is not allocated to the job (" + format_cpulist(allocated) + ")");
  };
  switch (bind.kind) {
    case CpuBindKind::kNone: return std::vector<int32_t>{};
    case CpuBindKind::kMap:
      for (int32_t cpu : bind.map)
        if (!within({cpu}, allocated)) return outside("map_cpu names CPU " + std::to_string(cpu));
      return bind.map;
    case CpuBindKind::kMask:
      if (!within(bind.masks.front(), allocated)) return outside("mask_cpu names CPUs " + format_cpulist(bind.masks.front()));
      return bind.masks.front();
    default: return allocated;
  }
}

Result<std::vector<int32_t>> task_affinity(const CpuBind& bind, const std::vector<int32_t>& step_cpus, uint32_t local,
                                           int32_t cpus_per_task) {
  auto outside = [&](const std::string& what) {
    return invalid("--cpu-bind=" + what + ", which is not one of the step's CPUs here (" + format_cpulist(step_cpus) + ")");
  };
  if (step_cpus.empty()) return std::vector<int32_t>{};
  size_t n = step_cpus.size();
  switch (bind.kind) {
    case CpuBindKind::kNone: return std::vector<int32_t>{};
    case CpuBindKind::kCores:
    case CpuBindKind::kThreads: {
      size_t per = static_cast<size_t>(std::clamp<int32_t>(cpus_per_task, 1, static_cast<int32_t>(n)));
      std::vector<int32_t> out;
      for (size_t k = 0; k < per; ++k) out.push_back(step_cpus[(local * per + k) % n]);
      std::sort(out.begin(), out.end());
      return out;
    }
    case CpuBindKind::kRank: return std::vector<int32_t>{step_cpus[local % n]};
    case CpuBindKind::kMap: {
      int32_t cpu = bind.map[local % bind.map.size()];
      if (!within({cpu}, step_cpus)) return outside("map_cpu names CPU " + std::to_string(cpu));
      return std::vector<int32_t>{cpu};
    }
    case CpuBindKind::kMask: {
      const auto& cpus = bind.masks[local % bind.masks.size()];
      if (!within(cpus, step_cpus)) return outside("mask_cpu names CPUs " + format_cpulist(cpus));
      return cpus;
    }
    default: return step_cpus;
  }
}

std::string cpu_mask_hex(const std::vector<int32_t>& cpus) {
  std::vector<uint8_t> nibbles;
  for (int32_t c : cpus) {
    if (c < 0) continue;
    size_t at = static_cast<size_t>(c) / 4;
    if (nibbles.size() <= at) nibbles.resize(at + 1, 0);
    nibbles[at] |= static_cast<uint8_t>(1u << (c % 4));
  }
  while (!nibbles.empty() && nibbles.back() == 0) nibbles.pop_back();
  if (nibbles.empty()) return "0";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = nibbles.size(); i-- > 0;) out += kHex[nibbles[i]];
  return out;
}

CpuBindReport cpu_bind_report(const CpuBind& bind, std::string_view node, uint32_t global, uint32_t local,
                              const std::vector<int32_t>& mask) {
  // Slurm's names: the unit a task is bound to, then how its mask was made (a computed
  // binding is a MASK; task/affinity turns cores, threads, sockets and ldoms into masks).
  std::string units, type = "MASK", action = " set";
  switch (bind.kind) {
    case CpuBindKind::kNone: type = "NONE", action.clear(); break;
    case CpuBindKind::kCores: units = "-cores"; break;
    case CpuBindKind::kThreads: units = "-threads"; break;
    case CpuBindKind::kSockets: units = "-sockets"; break;
    case CpuBindKind::kLdoms: units = "-ldoms"; break;
    case CpuBindKind::kRank: type = "RANK"; break;
    case CpuBindKind::kMap: type = "MAP "; break;
    case CpuBindKind::kMask:
    case CpuBindKind::kDefault: break;
  }
  char ids[32];
  std::snprintf(ids, sizeof ids, "%2u %2u", global, local);
  CpuBindReport r;
  r.head = "cpu-bind" + units + "=" + type + " - " + std::string(node) + ", task " + ids + " [";
  r.tail = "]: mask 0x" + cpu_mask_hex(mask) + action + "\n";
  return r;
}

}  // namespace hq
