// sacct's columns and lines (see sacct_format.hpp).
#include "core/sacct_format.hpp"

#include <cstdio>
#include <cstdlib>

#include "core/units.hpp"

namespace hq {

const std::vector<SacctColumn>& sacct_fields() {
  static const std::vector<SacctColumn> table = {
      {"Account", 10}, {"AdminComment", 15}, {"AllocCPUS", 10}, {"AllocNodes", 10}, {"AllocTRES", 10},
      {"AssocID", 7}, {"AveCPU", 10}, {"AveCPUFreq", 10}, {"AveDiskRead", 14}, {"AveDiskWrite", 14},
      {"AvePages", 10}, {"AveRSS", 10}, {"AveVMSize", 10}, {"BlockID", 16}, {"Cluster", 10}, {"Comment", 14},
      {"Constraints", 19}, {"ConsumedEnergy", 14}, {"ConsumedEnergyRaw", 17}, {"Container", 19},
      {"CPUTime", 10}, {"CPUTimeRAW", 10}, {"DBIndex", -10}, {"DerivedExitCode", 15}, {"Elapsed", 10},
      {"ElapsedRaw", 10}, {"Eligible", 19}, {"End", 19}, {"ExitCode", 8}, {"Flags", 19}, {"GID", 6},
      {"Group", 9}, {"JobID", -12}, {"JobIDRaw", -12}, {"JobName", 10}, {"Layout", 9}, {"MaxDiskRead", 12},
      {"MaxDiskReadNode", 15}, {"MaxDiskReadTask", 15}, {"MaxDiskWrite", 12}, {"MaxDiskWriteNode", 16},
      {"MaxDiskWriteTask", 16}, {"MaxPages", 8}, {"MaxPagesNode", 12}, {"MaxPagesTask", 14}, {"MaxRSS", 10},
      {"MaxRSSNode", 10}, {"MaxRSSTask", 10}, {"MaxVMSize", 10}, {"MaxVMSizeNode", 14}, {"MaxVMSizeTask", 14},
      {"McsLabel", 12}, {"MinCPU", 10}, {"MinCPUNode", 10}, {"MinCPUTask", 10}, {"NCPUS", 10}, {"NNodes", 8},
      {"NodeList", 15}, {"NTasks", 8}, {"Partition", 10}, {"Priority", 10}, {"QOS", 10}, {"QOSRAW", 6},
      {"Reason", 22}, {"ReqCPUFreq", 10}, {"ReqCPUFreqGov", 13}, {"ReqCPUFreqMax", 13}, {"ReqCPUFreqMin", 13},
      {"ReqCPUS", 8}, {"ReqMem", 10}, {"ReqNodes", 8}, {"ReqTRES", 10}, {"Reservation", 20},
      {"ReservationId", 8}, {"Reserved", 10}, {"ResvCPU", 10}, {"ResvCPURAW", 10}, {"Start", 19},
      {"State", 10}, {"Submit", 19}, {"SubmitLine", 20}, {"Suspended", 10}, {"SystemComment", 15},
      {"SystemCPU", 10}, {"Timelimit", 10}, {"TimelimitRaw", 10}, {"TotalCPU", 10}, {"TRESUsageInAve", 14},
      {"TRESUsageInMax", 14}, {"TRESUsageInMaxNode", 18}, {"TRESUsageInMaxTask", 18}, {"TRESUsageInMin", 14},
      {"TRESUsageInMinNode", 18}, {"TRESUsageInMinTask", 18}, {"TRESUsageInTot", 14}, {"TRESUsageOutAve", 15},
      {"TRESUsageOutMax", 15}, {"TRESUsageOutMaxNode", 19}, {"TRESUsageOutMaxTask", 19},
      {"TRESUsageOutMin", 15}, {"TRESUsageOutMinNode", 19}, {"TRESUsageOutMinTask", 19},
      {"TRESUsageOutTot", 15}, {"UID", 6}, {"User", 9}, {"UserCPU", 10}, {"WCKey", 10}, {"WCKeyID", 10},
      {"WorkDir", 20},
      // Later Slurm's (24.11+), after 22.05's names so that no prefix of theirs changes meaning.
      {"SLUID", 14}, {"OriginalSLUID", 14},
  };
  return table;
}

namespace {

bool iprefix(std::string_view prefix, std::string_view name) {
  return prefix.size() <= name.size() && iequals(prefix, name.substr(0, prefix.size()));
}

}  // namespace

Result<std::vector<SacctColumn>> parse_sacct_format(std::string_view list) {
  std::vector<SacctColumn> out;
  for (std::string_view item : split(list, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    bool width_set = false;
    int width = 0;
    if (size_t pct = item.find('%'); pct != std::string_view::npos) {
      width_set = true;
      width = std::atoi(std::string(item.substr(pct + 1)).c_str());  // atoi, as sacct: "%x" is 0
      item = item.substr(0, pct);
    }
    if (iprefix(item, "ALL")) {
      for (SacctColumn c : sacct_fields()) out.push_back({c.name, width_set ? width : c.width});
      continue;
    }
    const SacctColumn* found = nullptr;
    for (const auto& c : sacct_fields())
      if (iprefix(item, c.name)) {
        found = &c;
        break;
      }
    if (!found) {
      if (iequals(item, "AllocGRES")) return invalid("AllocGRES has been removed, please use AllocTRES");
      if (iequals(item, "ReqGRES")) return invalid("ReqGRES has been removed, please use ReqTRES");
      return invalid("Invalid field requested: \"" + std::string(item) + "\"");
    }
    out.push_back({found->name, width_set ? width : found->width});
  }
  return out;
}

namespace {

// print_fields_str in fixed width: cut to the width with '+' as the last character kept,
// right-justified (left for a negative width), one space after.
void fixed_cell(std::string& out, std::string_view value, int width, bool cut_mark) {
  size_t abs_width = static_cast<size_t>(std::abs(width));
  std::string cell(value.substr(0, abs_width));
  if (cut_mark && value.size() > abs_width && abs_width > 0) cell.back() = '+';
  std::string pad(abs_width - cell.size(), ' ');
  out += width < 0 ? cell + pad : pad + cell;
  out += ' ';
}

void parsable_cell(std::string& out, std::string_view value, const SacctStyle& style, bool last) {
  out += value;
  if (!(last && style.mode == SacctPrint::kParsable2)) out += style.delimiter;
}

}  // namespace

std::string sacct_header(const std::vector<SacctColumn>& cols, const SacctStyle& style) {
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (style.mode == SacctPrint::kFixed) fixed_cell(out, cols[i].name, cols[i].width, false);
    else parsable_cell(out, cols[i].name, style, i + 1 == cols.size());
  }
  out += '\n';
  if (style.mode != SacctPrint::kFixed) return out;
  for (const auto& c : cols) out += std::string(static_cast<size_t>(std::abs(c.width)), '-') + ' ';
  out += '\n';
  return out;
}

std::string sacct_line(const std::vector<SacctColumn>& cols, const SacctStyle& style,
                       const std::function<std::string(std::string_view)>& value) {
  std::string out;
  for (size_t i = 0; i < cols.size(); ++i) {
    std::string v = value(cols[i].name);
    if (style.mode == SacctPrint::kFixed) fixed_cell(out, v, cols[i].width, true);
    else parsable_cell(out, v, style, i + 1 == cols.size());
  }
  out += '\n';
  return out;
}

SacctWindow sacct_default_window(bool have_jobs, bool have_states, Time now, Time midnight, Time start_given,
                                 Time end_given) {
  SacctWindow w{start_given, end_given};
  if (have_states) {
    if (!w.start && !have_jobs) w.start = now;
    if (w.start && !w.end) w.end = w.start;
  } else if (!have_jobs && !w.start) {
    w.start = midnight;
  }
  return w;
}

Result<std::vector<std::string>> parse_sacct_states(std::string_view list) {
  static const std::vector<std::pair<std::string_view, std::string_view>> kStates = {
      {"BF", "BOOT_FAIL"},  {"CA", "CANCELLED"},     {"CD", "COMPLETED"}, {"DL", "DEADLINE"},
      {"F", "FAILED"},      {"NF", "NODE_FAIL"},     {"OOM", "OUT_OF_MEMORY"}, {"PD", "PENDING"},
      {"PR", "PREEMPTED"},  {"R", "RUNNING"},        {"RQ", "REQUEUED"},  {"RS", "RESIZING"},
      {"RV", "REVOKED"},    {"S", "SUSPENDED"},      {"TO", "TIMEOUT"},
  };
  std::vector<std::string> out;
  for (std::string_view item : split(list, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    std::string found;
    for (const auto& [code, name] : kStates)
      if (iequals(item, code) || iequals(item, name)) found = std::string(name);
    if (found.empty()) return invalid("Invalid state: " + std::string(item));
    out.push_back(found);
  }
  return out;
}

std::string sacct_exit_code(int32_t exit_code, int32_t signal, bool derived) {
  if (!derived && exit_code >= 128) exit_code -= 128;  // sacct's print.c: a shell's 128+N reads N
  return std::to_string(exit_code) + ":" + std::to_string(signal);
}

std::string sacct_duration(Duration seconds) {
  if (seconds < 0) return "INVALID";
  return format_limit(seconds);
}

std::string sacct_cpu_time(int64_t usec) {
  if (usec < 0) return "";
  int64_t secs = usec / 1000000, subsec = (usec % 1000000) / 1000;
  int64_t s = secs % 60, m = (secs / 60) % 60, h = (secs / 3600) % 24, d = secs / 86400;
  char buf[64];
  if (d) std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h, (long long)m, (long long)s);
  else if (h) std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", (long long)h, (long long)m, (long long)s);
  else if (subsec) std::snprintf(buf, sizeof buf, "%02lld:%02lld.%03lld", (long long)m, (long long)s, (long long)subsec);
  else std::snprintf(buf, sizeof buf, "00:%02lld:%02lld", (long long)m, (long long)s);
  return buf;
}

std::string sacct_bytes(int64_t bytes) {
  if (bytes <= 0) return "0";
  static constexpr const char* kUnits = "\0KMGTP";
  double num = static_cast<double>(bytes);
  int unit = 0;
  // Slurm's CONVERT_NUM_UNIT_EXACT: on while no precision is lost (halves still count).
  while (num >= 1024 && static_cast<uint64_t>(num) % 512 == 0 && unit < 5) {
    num /= 1024;
    ++unit;
  }
  char buf[64];
  auto whole = static_cast<uint64_t>(num);
  std::string suffix = unit ? std::string(1, kUnits[unit]) : "";
  if (static_cast<double>(whole) == num) std::snprintf(buf, sizeof buf, "%llu%s", (unsigned long long)whole, suffix.c_str());
  else std::snprintf(buf, sizeof buf, "%.2f%s", num, suffix.c_str());
  return buf;
}

}  // namespace hq
