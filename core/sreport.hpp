// sreport (`hq report`): Slurm 22.05's usage reports over an accounting window, byte for
// byte: cluster Utilization, AccountUtilizationByUser (and its first-letter aliases such as
// AccountUtilizationByQOS), UserUtilizationByAccount, user TopUsage and job SizesByAccount,
// with -t/-T/-n/-p/-P/-s and the conditions (Start=, End=, Users=, Accounts=, Format=, Tree,
// Group, TopCount=, Grouping=, FlatView, PrintJobCount, AcctAsParent). The command line
// (sreport_args.cpp), the usage worked out from job records and capacity as slurmdbd's
// hourly rollup would (sreport_usage.cpp), the printing (sreport_print.cpp) and the reports
// (sreport_reports.cpp). Rules and Slurm sources: tests/fixtures/slurm/sreport/FORMAT.md.
// Pure (no clock: `now` and the caller's UTC offset are inputs); thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/time.hpp"

namespace hq {

enum class SreportTime { kSeconds, kMinutes, kHours, kPercent, kSecPer, kMinPer, kHourPer };
enum class SreportKind { kUtilization, kAccountByUser, kUserByAccount, kTopUsage, kSizesByAccount };

// One command line, parsed and its window normalised (Slurm's hour rounding and defaults).
struct SreportCmd {
  SreportKind kind = SreportKind::kUtilization;
  bool header = true;  // -n: false
  int parsable = 0;    // 1: -p (a '|' after every field), 2: -P (between fields)
  SreportTime time = SreportTime::kMinutes;
  std::vector<std::string> tres{"cpu"};  // -T, in the order given (ALL: Slurm's id order)
  std::string tres_text;                 // -T as typed ("" without -T)
  bool node_tres = false;                // -T named node (not through ALL)
  bool sort_by_name = false;             // -s name
  Time start = 0, end = 0;               // [start, end)
  int64_t utc_offset = 0;                // the caller's, for the title's times
  std::vector<std::string> users, accounts, clusters, partitions, formats;
  bool tree = false, group = false, flat_view = false, acct_as_parent = false, job_count = false;
  uint32_t top_count = 10;
  std::vector<uint32_t> grouping{50, 250, 500, 1000};
};

// What the command prints and its exit code.
struct SreportOutput {
  std::string out, err;
  int rc = 0;
};

// The command line after the program name. `cmd` is empty when nothing is reported (usage,
// an error that stops sreport); `diag` holds what was printed so far (stderr, exit code),
// including the errors after which Slurm still reports (an unknown condition, -t bogus).
struct SreportParse {
  std::optional<SreportCmd> cmd;
  SreportOutput diag;
};
SreportParse parse_sreport(const std::vector<std::string>& args, Time now, int64_t utc_offset);

// TRES counts by Slurm's name (cpu, mem in MB, energy, node, billing, fs/disk, vmem, pages,
// gres/gpu).
using SreportTres = std::map<std::string, int64_t>;

// The cluster's size from `start` to `end` (0: still so).
struct CapacitySpan {
  Time start = 0, end = 0;
  SreportTres tres;
};
// A node out of service (Down) or planned out (PLND Down) from `start` to `end` (0: still).
struct NodeDownSpan {
  Time start = 0, end = 0;
  bool planned = false;
  SreportTres tres;
};
// A job's record: its association, when it was eligible, ran (0: not started / still
// running) and what it held.
struct UsageJob {
  std::string account, user, partition;
  Time eligible = 0, start = 0, end = 0;
  int64_t cpus_req = 0;
  SreportTres tres;
};
// An association in slurmdbd's tree order (lft): an account's (user empty, `parent` its
// parent account) or a user's in an account.
struct UsageAssoc {
  uint32_t id = 0;  // slurmdbd's id: UserUtilizationByAccount lists ties in id order
  std::string account, user, parent;
};

struct SreportData {
  std::string cluster;
  std::vector<CapacitySpan> capacity;
  std::vector<NodeDownSpan> down;
  std::vector<UsageJob> jobs;
  std::vector<UsageAssoc> assocs;
  std::map<std::string, std::string> proper_names;  // user -> gecos up to the first ','
};

// The report `cmd` asks for, over `data`; hours count once rolled up (ended by `now`).
SreportOutput render_sreport(const SreportCmd& cmd, const SreportData& data, Time now);

// The whole command: parse, then report (the parse's diagnostics first).
SreportOutput run_sreport(const std::vector<std::string>& args, const SreportData& data, Time now,
                          int64_t utc_offset);

// Slurm's TRES table in id order (cpu, mem, energy, node, billing, fs/disk, vmem, pages, gres/gpu).
const std::vector<std::string>& sreport_tres_names();

}  // namespace hq
