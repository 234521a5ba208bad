// sreport's reports as Slurm 22.05 prints them (sreport/cluster_reports.c, user_reports.c,
// job_reports.c and the api/*_report_functions.c behind them): the columns a Format= picks,
// which rows, in which order, with which totals for the percent forms, and the usage
// column widths worked out from the data. Pure; thread-safe.
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <set>

#include "core/sreport_internal.hpp"

namespace hq {
namespace {

enum Col { kCluster, kAccount, kLogin, kProper, kTresName, kUsed, kEnergy, kAlloc, kDown, kPDown, kIdle, kOver, kPlan,
           kReported, kCount, kWckey };

bool per_format(SreportTime t) {
  return t == SreportTime::kSecPer || t == SreportTime::kMinPer || t == SreportTime::kHourPer;
}

// cluster_reports.c/_setup_print_fields_list: Format= words to columns (`%N` sets a width;
// the usage columns' widths are worked out later).
std::vector<PrintField> cluster_fields(const SreportCmd& cmd, const std::vector<std::string>& words, SreportOutput& diag) {
  struct Key { const char* key; size_t min; const char* name; int len; Col col; FieldKind kind; };
  static const Key keys[] = {
      {"Accounts", 2, "Account", 15, kAccount, FieldKind::kStr},   {"allocated", 2, "Allocated", 12, kAlloc, FieldKind::kTime},
      {"Cluster", 2, "Cluster", 9, kCluster, FieldKind::kStr},     {"down", 1, "Down", 10, kDown, FieldKind::kTime},
      {"idle", 1, "Idle", 12, kIdle, FieldKind::kTime},            {"Login", 1, "Login", 9, kLogin, FieldKind::kStr},
      {"overcommitted", 1, "Over Comm", 9, kOver, FieldKind::kTime}, {"PlannedDown", 2, "PLND Down", 10, kPDown, FieldKind::kTime},
      {"Proper", 2, "Proper Name", 15, kProper, FieldKind::kStr},  {"reported", 3, "Reported", 12, kReported, FieldKind::kTime},
      {"reserved", 3, "Planned", 9, kPlan, FieldKind::kTime},      {"planned", 4, "Planned", 9, kPlan, FieldKind::kTime},
      {"TresCount", 5, "TRES Count", 10, kCount, FieldKind::kUint}, {"cpucount", 2, "TRES Count", 10, kCount, FieldKind::kUint},
      {"count", 2, "TRES Count", 10, kCount, FieldKind::kUint},    {"TresName", 5, "TRES Name", 14, kTresName, FieldKind::kStr},
      {"Used", 1, "Used", 10, kUsed, FieldKind::kTime},            {"WCKey", 2, "WCKey", 15, kWckey, FieldKind::kStr},
      {"Energy", 1, "Energy", 10, kEnergy, FieldKind::kTime}};
  std::vector<PrintField> out;
  for (const std::string& w : words) {
    std::string word = w;
    int newlen = 0;
    if (size_t pct = word.find('%'); pct != std::string::npos) newlen = std::atoi(word.c_str() + pct + 1), word.resize(pct);
    const Key* k = nullptr;
    for (const Key& key : keys) {
      // user_reports.c takes Accounts and Proper from their first letter
      size_t min = cmd.kind == SreportKind::kTopUsage && (key.col == kAccount || key.col == kProper) ? 1 : key.min;
      if (sreport_key(word, key.key, min)) { k = &key; break; }
    }
    if (!k) {
      diag.err += " Unknown field '" + word + "'\n";
      diag.rc = 1;
      continue;
    }
    int len = k->len;
    if (k->col == kAccount && cmd.tree) len = -20;
    if (newlen) len = newlen;
    out.push_back({k->name, len, k->kind, k->col});
  }
  (void)per_format;
  return out;
}

std::vector<std::string> words_or(const SreportCmd& cmd, const std::string& fallback) {
  if (!cmd.formats.empty()) return cmd.formats;
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= fallback.size()) {
    size_t comma = fallback.find(',', at);
    out.push_back(fallback.substr(at, comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

std::string usage_line(const SreportCmd& cmd) {
  if (cmd.time == SreportTime::kPercent) return "Usage reported in Percentage of Total\n";
  return std::string("Usage reported in ") + (cmd.tres_text.empty() ? "CPU " : "TRES ") + time_format_string(cmd.time) + "\n";
}

std::string secs_suffix(const SreportCmd& cmd) { return " (" + std::to_string(cmd.end - cmd.start) + " secs)\n"; }

bool our_cluster(const SreportCmd& cmd, const SreportData& d) {
  return cmd.clusters.empty() || std::find(cmd.clusters.begin(), cmd.clusters.end(), d.cluster) != cmd.clusters.end();
}

int64_t get(const SreportTres& t, const std::string& name) {
  auto it = t.find(name);
  return it == t.end() ? 0 : it->second;
}

// ---- cluster Utilization ----
SreportOutput utilization(const SreportCmd& cmd, const SreportData& d, Time now, SreportOutput o) {
  std::string fallback = cmd.tres_text.empty() ? "Cl,al,d,planned,i,res,rep" : "Cl,TresName,al,d,planned,i,res,rep";
  std::vector<PrintField> fields = cluster_fields(cmd, words_or(cmd, fallback), o);
  ClusterUsage usage = our_cluster(cmd, d) ? cluster_usage(d, cmd.start, cmd.end, now) : ClusterUsage{};
  std::vector<std::pair<std::string, const TresTotals*>> rows;
  for (const std::string& t : cmd.tres)
    if (auto it = usage.find(t); it != usage.end()) rows.emplace_back(t, &it->second);
  auto value_of = [](int col, const TresTotals& t) -> int64_t {
    switch (col) {
      case kAlloc: return t.alloc;
      case kDown: return t.down;
      case kPDown: return t.pdown;
      case kIdle: return t.idle;
      case kOver: return t.over;
      case kPlan: return t.plan;
      case kReported: return t.reported();
      default: return 0;
    }
  };
  for (PrintField& f : fields) {
    if (f.kind != FieldKind::kTime) continue;
    int64_t most = 0;
    for (const auto& [name, t] : rows) most = std::max(most, value_of(f.id, *t));
    f.len = usage_width(static_cast<uint64_t>(most), cmd.time);
  }
  o.out += title_block(cmd, "Cluster Utilization " + window_text(cmd) + "\n" + usage_line(cmd));
  FieldPrinter p(cmd, o.out);
  p.header(fields);
  for (const auto& [name, t] : rows) {
    uint64_t reported = static_cast<uint64_t>(t->reported());
    uint64_t whole = static_cast<uint64_t>((cmd.end - cmd.start) * t->count());
    if (name == "energy" && !t->count()) whole = reported;
    std::vector<Cell> cells;
    for (const PrintField& f : fields) {
      Cell c{"", false, 0, reported};
      if (f.id == kCluster) c.str = d.cluster;
      else if (f.id == kTresName) c.str = name;
      else if (f.id == kCount) c.value = static_cast<uint64_t>(t->count());
      else if (f.kind == FieldKind::kTime && f.id != kUsed && f.id != kEnergy) c.value = static_cast<uint64_t>(value_of(f.id, *t));
      else c.null = true;
      if (f.id == kReported) c.total = whole;
      cells.push_back(c);
    }
    p.row(fields, cells);
  }
  return o;
}

// ---- association rows (AccountUtilizationByUser, UserUtilizationByAccount, TopUsage) ----
struct AssocRow {
  std::string account, user;
  int depth = 0;        // tree indentation of the Account cell
  SreportTres used;     // TRES-seconds
  std::string accounts;  // TopUsage Group: the user's accounts
};

// Cells of one association row for one TRES line.
std::vector<Cell> assoc_cells(const std::vector<PrintField>& fields, const SreportCmd& cmd, const SreportData& d,
                              const AssocRow& r, const std::string& tres, const ClusterUsage& cu) {
  auto reported = [&](const std::string& t) -> uint64_t {
    auto it = cu.find(t);
    return it == cu.end() ? 0 : static_cast<uint64_t>(it->second.reported());
  };
  std::vector<Cell> cells;
  for (const PrintField& f : fields) {
    Cell c;
    switch (f.id) {
      case kCluster: c.str = d.cluster; break;
      case kAccount:
        c.str = r.accounts.empty() ? r.account : r.accounts;
        if (cmd.tree) c.str = std::string(static_cast<size_t>(r.depth), ' ') + c.str;
        break;
      case kLogin: c.null = r.user.empty(), c.str = r.user; break;
      case kProper: {
        auto it = d.proper_names.find(r.user);
        c.null = r.user.empty();
        if (it != d.proper_names.end()) c.str = it->second;
        break;
      }
      case kTresName: c.str = tres; break;
      case kUsed: c.value = static_cast<uint64_t>(get(r.used, tres)), c.total = reported(tres); break;
      case kEnergy: c.value = static_cast<uint64_t>(get(r.used, "energy")), c.total = reported("energy"); break;
      default: c.null = true; break;
    }
    cells.push_back(c);
  }
  return cells;
}

// sreport_set_usage_column_width over `first` (the first row, or the top user).
void set_usage_widths(std::vector<PrintField>& fields, const SreportCmd& cmd, const AssocRow* first) {
  bool energy = std::any_of(fields.begin(), fields.end(), [](const PrintField& f) { return f.id == kEnergy; });
  int64_t most = 0, most_energy = 0;
  if (first) {
    if (energy) {
      most = get(first->used, "cpu"), most_energy = get(first->used, "energy");
    } else {
      for (const std::string& t : cmd.tres) most = std::max(most, get(first->used, t));
    }
  }
  for (PrintField& f : fields) {
    if (f.id == kUsed) f.len = usage_width(static_cast<uint64_t>(most), cmd.time);
    if (f.id == kEnergy) f.len = usage_width(static_cast<uint64_t>(most_energy), cmd.time);
  }
}

SreportOutput print_assoc_report(const SreportCmd& cmd, const SreportData& d, const std::string& title,
                                 std::vector<PrintField> fields, const std::vector<AssocRow>& rows,
                                 const AssocRow* widest, const ClusterUsage& cu, SreportOutput o) {
  set_usage_widths(fields, cmd, widest);
  o.out += title_block(cmd, title + " " + window_text(cmd) + secs_suffix(cmd) + usage_line(cmd));
  FieldPrinter p(cmd, o.out);
  p.header(fields);
  for (const AssocRow& r : rows)
    for (const std::string& t : cmd.tres) p.row(fields, assoc_cells(fields, cmd, d, r, t, cu));
  return o;
}

std::vector<PrintField> assoc_fields(const SreportCmd& cmd, const std::string& plain, const std::string& with_tres,
                                     SreportOutput& o) {
  return cluster_fields(cmd, words_or(cmd, cmd.tres_text.empty() ? plain : with_tres), o);
}

// AccountUtilizationByUser: the tree depth first, a level's users (by name) before its
// sub-accounts (by name); accounts sum the users below them.
SreportOutput account_by_user(const SreportCmd& cmd, const SreportData& d, Time now, SreportOutput o) {
  auto fields = assoc_fields(cmd, "Cluster,Ac,Login,Proper,Used,Energy", "Cluster,Ac,Login,Proper,TresName,Used", o);
  ClusterUsage cu = our_cluster(cmd, d) ? cluster_usage(d, cmd.start, cmd.end, now) : ClusterUsage{};
  auto used = assoc_usage(d, cmd.start, cmd.end, now);
  std::set<std::string> allowed = cmd.accounts.empty() ? std::set<std::string>{} : account_subtree(d, cmd.accounts);
  auto in_scope = [&](const UsageAssoc& a) { return cmd.accounts.empty() || allowed.count(a.account); };
  // Account totals from their users' usage.
  std::map<std::string, std::string> parent;
  for (const UsageAssoc& a : d.assocs)
    if (a.user.empty()) parent[a.account] = a.parent;
  std::map<std::string, SreportTres> acct_used;
  for (const UsageAssoc& a : d.assocs) {
    auto it = a.user.empty() ? used.end() : used.find({a.account, a.user});
    if (it == used.end()) continue;
    for (std::string acct = a.account; !acct.empty(); acct = parent.count(acct) ? parent[acct] : "")
      for (const auto& [t, v] : it->second) acct_used[acct][t] += v;
    }
  std::vector<AssocRow> rows;
  if (!cu.empty()) {
    if (!cmd.users.empty()) {
      std::vector<const UsageAssoc*> mine;
      for (const UsageAssoc& a : d.assocs)
        if (!a.user.empty() && listed(cmd.users, a.user) && in_scope(a) && used.count({a.account, a.user})) mine.push_back(&a);
      std::stable_sort(mine.begin(), mine.end(), [](auto* x, auto* y) { return x->user < y->user; });
      for (auto* a : mine) rows.push_back({a->account, a->user, 1, used[{a->account, a->user}], ""});
    } else {
      std::vector<std::string> tops = cmd.accounts.empty() ? std::vector<std::string>{"root"} : cmd.accounts;
      std::sort(tops.begin(), tops.end());
      std::function<void(const std::string&, int)> walk = [&](const std::string& acct, int depth) {
        if (!acct_used.count(acct) || !in_scope({0, acct, "", ""})) return;
        rows.push_back({acct, "", depth, acct_used[acct], ""});
        std::vector<const UsageAssoc*> users;
        std::vector<std::string> subs;
        for (const UsageAssoc& a : d.assocs) {
          if (!a.user.empty() && a.account == acct && used.count({a.account, a.user})) users.push_back(&a);
          if (a.user.empty() && a.parent == acct) subs.push_back(a.account);
        }
        std::stable_sort(users.begin(), users.end(), [](auto* x, auto* y) { return x->user < y->user; });
        std::sort(subs.begin(), subs.end());
        for (auto* u : users) rows.push_back({u->account, u->user, depth + 1, used[{u->account, u->user}], ""});
        for (const std::string& s : subs) walk(s, depth + 1);
      };
      for (const std::string& t : tops) walk(t, 0);
    }
  }
  return print_assoc_report(cmd, d, "Cluster/Account/User Utilization", fields, rows, rows.empty() ? nullptr : &rows[0], cu,
                            std::move(o));
}

// sort_user_dec: more of `tres` first (unless -s name), then by name; stable.
void sort_users(std::vector<AssocRow>& rows, const SreportCmd& cmd, const std::string& tres) {
  std::stable_sort(rows.begin(), rows.end(), [&](const AssocRow& x, const AssocRow& y) {
    if (!cmd.sort_by_name) {
      int64_t a = get(x.used, tres), b = get(y.used, tres);
      if (a != b) return a > b;
    }
    return x.user < y.user;
  });
}

// UserUtilizationByAccount: each user association that ran jobs, most CPU first.
SreportOutput user_by_account(const SreportCmd& cmd, const SreportData& d, Time now, SreportOutput o) {
  auto fields = assoc_fields(cmd, "Cluster,Login,Proper,Ac,Used,Energy", "Cluster,Login,Proper,Ac,TresName,Used", o);
  ClusterUsage cu = our_cluster(cmd, d) ? cluster_usage(d, cmd.start, cmd.end, now) : ClusterUsage{};
  auto used = assoc_usage(d, cmd.start, cmd.end, now);
  std::vector<const UsageAssoc*> by_id;
  for (const UsageAssoc& a : d.assocs) by_id.push_back(&a);
  std::stable_sort(by_id.begin(), by_id.end(), [](auto* x, auto* y) { return x->id < y->id; });
  std::vector<AssocRow> rows;
  if (!cu.empty())
    for (auto* a : by_id)
      if (!a->user.empty() && listed(cmd.users, a->user) && listed(cmd.accounts, a->account) && used.count({a->account, a->user}))
        rows.push_back({a->account, a->user, 0, used[{a->account, a->user}], ""});
  sort_users(rows, cmd, "cpu");
  return print_assoc_report(cmd, d, "Cluster/User/Account Utilization", fields, rows, rows.empty() ? nullptr : &rows[0], cu,
                            std::move(o));
}

// user TopUsage: users (or, with Group, each user's associations together), most of the
// first -T TRES first, at most TopCount of them.
SreportOutput top_usage(const SreportCmd& cmd, const SreportData& d, Time now, SreportOutput o) {
  std::vector<PrintField> fields = assoc_fields(cmd, "Cl,L,P,A,U,Energy", "Cl,L,P,A,TresName,Used", o);
  ClusterUsage cu = our_cluster(cmd, d) ? cluster_usage(d, cmd.start, cmd.end, now) : ClusterUsage{};
  auto used = assoc_usage(d, cmd.start, cmd.end, now);
  std::vector<const UsageAssoc*> mine;
  for (const UsageAssoc& a : d.assocs)
    if (!a.user.empty() && listed(cmd.users, a.user) && listed(cmd.accounts, a.account) && used.count({a.account, a.user}))
      mine.push_back(&a);
  std::stable_sort(mine.begin(), mine.end(), [](auto* x, auto* y) { return x->user < y->user; });
  std::vector<AssocRow> rows;
  if (!cu.empty()) {
    for (auto* a : mine) {
      if (cmd.group && !rows.empty() && rows.back().user == a->user) {
        AssocRow& r = rows.back();
        r.accounts += ", " + a->account;
        for (const auto& [t, v] : used[{a->account, a->user}]) r.used[t] += v;
        continue;
      }
      rows.push_back({a->account, a->user, 0, used[{a->account, a->user}], cmd.group ? a->account : ""});
    }
  }
  sort_users(rows, cmd, cmd.tres.front());
  if (rows.size() > cmd.top_count) rows.resize(cmd.top_count);
  return print_assoc_report(cmd, d, "Top " + std::to_string(cmd.top_count) + " Users", fields, rows,
                            rows.empty() ? nullptr : &rows[0], cu, std::move(o));
}

}  // namespace

SreportOutput sizes_by_account(const SreportCmd& cmd, const SreportData& d, Time now, SreportOutput o);

SreportOutput render_sreport(const SreportCmd& cmd, const SreportData& data, Time now) {
  SreportOutput o;
  switch (cmd.kind) {
    case SreportKind::kUtilization: return utilization(cmd, data, now, std::move(o));
    case SreportKind::kAccountByUser: return account_by_user(cmd, data, now, std::move(o));
    case SreportKind::kUserByAccount: return user_by_account(cmd, data, now, std::move(o));
    case SreportKind::kTopUsage: return top_usage(cmd, data, now, std::move(o));
    case SreportKind::kSizesByAccount: return sizes_by_account(cmd, data, now, std::move(o));
  }
  return o;
}

SreportOutput run_sreport(const std::vector<std::string>& args, const SreportData& data, Time now, int64_t utc_offset) {
  SreportParse p = parse_sreport(args, now, utc_offset);
  if (!p.cmd) return p.diag;
  SreportOutput r = render_sreport(*p.cmd, data, now);
  r.err = p.diag.err + r.err;
  r.out = p.diag.out + r.out;
  r.rc = std::max(p.diag.rc, r.rc);
  return r;
}

}  // namespace hq
