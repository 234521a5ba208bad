// sreport job SizesByAccount as Slurm 22.05 prints it (sreport/job_reports.c and
// api/job_report_functions.c _process_grouped_report): job records (not the rollup) whose
// run, cut to the window, is not empty, put in the size bucket of their count of the one
// reported TRES under the account group that holds them (root by default; Accounts=: those
// accounts with their sub-accounts; AcctAsParent: the children of those or of root;
// FlatView: each job's own account), then TRES-seconds or job counts per bucket and each
// group's share of all grouped jobs. Pure; thread-safe.
#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/sreport_internal.hpp"

namespace hq {
namespace {

struct Group {
  std::string name;
  std::set<std::string> accounts;  // the accounts whose jobs it takes (unused for FlatView)
  std::vector<uint64_t> secs, count;
  uint64_t total_secs = 0, total_count = 0;
};

// The groups the associations make, in tree order (a job goes to the first that holds it).
std::vector<Group> assoc_groups(const SreportCmd& cmd, const SreportData& d) {
  std::vector<Group> out;
  std::vector<std::string> parents = cmd.accounts.empty() ? std::vector<std::string>{"root"} : cmd.accounts;
  for (const UsageAssoc& a : d.assocs) {
    bool take = cmd.acct_as_parent ? a.user.empty() && listed(parents, a.parent) && !a.parent.empty()
                                   : listed(cmd.accounts, a.account);
    if (!take || std::any_of(out.begin(), out.end(), [&](const Group& g) { return g.name == a.account; })) continue;
    out.push_back({a.account, account_subtree(d, {a.account}), {}, {}, 0, 0});
  }
  return out;
}

std::vector<std::string> bucket_names(const SreportCmd& cmd) {
  std::string unit = cmd.tres.front() == "cpu" ? "CPUs" : "TRES";
  std::vector<std::string> out;
  uint32_t last = 0;
  for (uint32_t size : cmd.grouping) {
    out.push_back(std::to_string(last) + "-" + std::to_string(size - 1) + " " + unit);
    last = size;
  }
  if (last) out.push_back(">= " + std::to_string(last) + " " + unit);
  return out;
}

// The bucket of a job holding `n` of the TRES.
size_t bucket_of(const SreportCmd& cmd, int64_t n) {
  size_t i = 0;
  while (i < cmd.grouping.size() && n >= static_cast<int64_t>(cmd.grouping[i])) ++i;
  return i;
}

}  // namespace

SreportOutput sizes_by_account(const SreportCmd& cmd, const SreportData& d, Time now, SreportOutput o) {
  if (cmd.tres.size() > 1) {
    o.err += " Job report only supports a single --tres type.\n Generate a separate report for each TRES type.\n";
    return o.rc = 1, o;
  }
  const std::string& tres = cmd.tres.front();
  std::vector<std::string> names = bucket_names(cmd);
  std::vector<Group> groups = cmd.flat_view ? std::vector<Group>{} : assoc_groups(cmd, d);
  bool ours = cmd.clusters.empty() || listed(cmd.clusters, d.cluster);
  uint64_t cluster_secs = 0, cluster_count = 0;
  for (const UsageJob& j : d.jobs) {
    int64_t elapsed = run_seconds(j, cmd.start, cmd.end, now);
    auto held = j.tres.find(tres);
    if (!ours || elapsed <= 0 || held == j.tres.end() || !listed(cmd.users, j.user) || !listed(cmd.partitions, j.partition))
      continue;
    Group* g = nullptr;
    if (cmd.flat_view) {
      if (!listed(cmd.accounts, j.account)) continue;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.name == j.account; });
      if (it == groups.end()) groups.push_back({j.account, {}, {}, {}, 0, 0}), it = groups.end() - 1;
      g = &*it;
    } else {
      for (Group& x : groups)
        if (x.accounts.count(j.account)) { g = &x; break; }
      if (!g) continue;
    }
    g->secs.resize(names.size()), g->count.resize(names.size());
    size_t b = std::min(bucket_of(cmd, held->second), names.size() - 1);
    uint64_t secs = static_cast<uint64_t>(held->second * elapsed);
    g->secs[b] += secs, g->count[b] += 1, g->total_secs += secs, g->total_count += 1;
    cluster_secs += secs, cluster_count += 1;
  }
  std::erase_if(groups, [](const Group& g) { return g.total_count == 0; });
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.name < b.name; });

  std::vector<PrintField> fields;
  std::vector<std::string> words = cmd.formats.empty() ? std::vector<std::string>{"Cl", "a"} : cmd.formats;
  for (std::string w : words) {
    int newlen = 0;
    if (size_t pct = w.find('%'); pct != std::string::npos) newlen = std::atoi(w.c_str() + pct + 1), w.resize(pct);
    if (sreport_key(w, "Account", 1) || sreport_key(w, "Acct", 4)) fields.push_back({"Account", newlen ? newlen : 9, FieldKind::kStr, 1});
    else if (sreport_key(w, "Cluster", 1)) fields.push_back({"Cluster", newlen ? newlen : 9, FieldKind::kStr, 0});
    else o.err += " Unknown field '" + w + "'\n", o.rc = 1;
  }
  size_t fixed = fields.size();
  int width = cmd.time == SreportTime::kSecPer || cmd.time == SreportTime::kMinPer || cmd.time == SreportTime::kHourPer ? 20 : 13;
  for (const std::string& n : names) fields.push_back({n, width, cmd.job_count ? FieldKind::kUint : FieldKind::kTime, 2});
  fields.push_back({"% of cluster", 12, FieldKind::kStr, 3});

  std::string title = "Job Sizes " + window_text(cmd) + " (" + std::to_string(cmd.end - cmd.start) + " secs)\n";
  if (!cmd.tres_text.empty()) title += "TRES type is " + cmd.tres_text + "\n";
  title += cmd.job_count ? "Units are in number of jobs ran\n" : "Time reported in " + time_format_string(cmd.time) + "\n";
  o.out += title_block(cmd, title);
  FieldPrinter p(cmd, o.out);
  p.header(fields);
  for (const Group& g : groups) {
    std::vector<Cell> cells;
    for (size_t i = 0; i < fixed; ++i) cells.push_back({fields[i].id == 1 ? g.name : d.cluster, false, 0, 0});
    for (size_t b = 0; b < names.size(); ++b)
      cells.push_back(cmd.job_count ? Cell{"", false, g.count[b], 0} : Cell{"", false, g.secs[b], g.total_secs});
    cells.push_back({cmd.job_count ? time_text(SreportTime::kPercent, g.total_count, cluster_count)
                                   : time_text(SreportTime::kPercent, g.total_secs, cluster_secs),
                     false, 0, 0});
    p.row(fields, cells);
  }
  return o;
}

}  // namespace hq
