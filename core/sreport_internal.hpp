// What the sreport files share: keyword matching, the usage worked out from job records and
// capacity (as slurmdbd's hourly rollup would store it), and Slurm's print_fields printing.
// Internal to core/sreport*.cpp. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/sreport.hpp"

namespace hq {

// xstrncasecmp(word, key, MAX(strlen(word), min)) == 0.
bool sreport_key(std::string_view word, std::string_view key, size_t min);

// ---- usage (sreport_usage.cpp) ----
// One TRES of the cluster summed over the window's rolled-up hours (as_mysql_rollup.c).
struct TresTotals {
  int64_t alloc = 0, down = 0, pdown = 0, idle = 0, over = 0, plan = 0;
  int64_t count_sum = 0, rows = 0;
  int64_t reported() const { return alloc + down + pdown + idle + plan; }
  int64_t count() const { return rows ? count_sum / rows : 0; }
};
using ClusterUsage = std::map<std::string, TresTotals>;  // TRES with usage rows only
ClusterUsage cluster_usage(const SreportData& d, Time start, Time end, Time now);

// Where the rolled-up part of [start, end) ends: hours count once they are over by `now`.
Time rolled_end(Time start, Time end, Time now);
// Seconds of `j`'s run inside [from, to) (a running job runs until `now`).
int64_t run_seconds(const UsageJob& j, Time from, Time to, Time now);

// Per association (account, user): TRES-seconds allocated in the window; only associations
// whose jobs ran in it.
using AssocKey = std::pair<std::string, std::string>;
std::map<AssocKey, SreportTres> assoc_usage(const SreportData& d, Time start, Time end, Time now);

// True when `list` is empty or holds `v` (Users=, Accounts=, ...).
bool listed(const std::vector<std::string>& list, const std::string& v);
// The accounts at and below each of `roots`.
std::set<std::string> account_subtree(const SreportData& d, const std::vector<std::string>& roots);

// ---- printing (sreport_print.cpp) ----
enum class FieldKind { kStr, kTime, kUint };
struct PrintField {
  std::string name;
  int len = 0;  // < 0: left-justified
  FieldKind kind = FieldKind::kStr;
  int id = 0;   // which column (the report's own numbering)
};
// One printed value: a string, a time (value and the total percent formats divide by) or a
// number.
struct Cell {
  std::string str;
  bool null = false;
  uint64_t value = 0, total = 0;
};

class FieldPrinter {
 public:
  FieldPrinter(const SreportCmd& cmd, std::string& out) : cmd_(cmd), out_(out) {}
  void header(const std::vector<PrintField>& fields);
  void row(const std::vector<PrintField>& fields, const std::vector<Cell>& cells);

 private:
  void cell(const PrintField& f, const Cell& c, bool last);
  const SreportCmd& cmd_;
  std::string& out_;
};

// slurmdb_report_print_time's text for `value` seconds (of `total`, for the percent forms).
std::string time_text(SreportTime t, uint64_t value, uint64_t total);
// sreport_set_usage_col_width: 8, one more per digit from 1e8 on, 9 more for the */Per forms.
int usage_width(uint64_t number, SreportTime t);
// "Seconds", "Minutes", ..., "Minutes/Percentage of Total".
std::string time_format_string(SreportTime t);
// The 80 dashes, the title line(s) and the dashes again, unless -n.
std::string title_block(const SreportCmd& cmd, const std::string& title_lines);
// "2026-11-24T00:00:00 - 2026-11-24T23:59:59" in the caller's local time.
std::string window_text(const SreportCmd& cmd);

}  // namespace hq
