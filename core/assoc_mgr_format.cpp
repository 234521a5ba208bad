#include "core/assoc_mgr_format.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/units.hpp"

namespace hq {
namespace {

// Slurm's TRES columns here (ids 1..8), then hq's gres/gpu; `kind` is the TresCounts slot (-1 none).
struct TresCol {
  const char* name;
  int kind;
};
constexpr TresCol kTres[] = {{"cpu", kTresCpu},   {"mem", kTresMem}, {"energy", -1}, {"node", kTresNode},
                             {"billing", kTresBilling}, {"fs/disk", -1}, {"vmem", -1}, {"pages", -1},
                             {"gres/gpu", kTresGpu}};

int64_t limit_of(const TresList& limits, const char* name) {
  for (const auto& [n, v] : limits)
    if (n == name) return v;
  return kNoLimit;
}

// "GrpTRES=cpu=N(2),mem=8192(0),..." with use, or only the TRES with a limit without.
std::string tres_line(const char* label, const TresList& limits, const TresCounts* used, bool gpu) {
  std::string out = std::string(label) + "=";
  bool comma = false;
  for (const TresCol& t : kTres) {
    if (t.kind == kTresGpu && !gpu) continue;
    int64_t lim = limit_of(limits, t.name);
    if (!used && lim == kNoLimit) continue;
    out += (comma ? "," : "") + std::string(t.name) + "=" + (lim == kNoLimit ? "N" : std::to_string(lim));
    if (used) out += "(" + std::to_string(t.kind < 0 ? 0 : (*used)[static_cast<size_t>(t.kind)]) + ")";
    comma = true;
  }
  return out;
}

std::string count_limit(const char* label, int64_t limit, int64_t used) {
  return std::string(label) + "=" + (limit == kNoLimit ? "N" : std::to_string(limit)) + "(" + std::to_string(used) + ")";
}

std::string max_limit(const char* label, int64_t limit, int64_t used, bool with_used = true) {
  if (limit == kNoLimit) return std::string(label) + "=";
  return std::string(label) + "=" + std::to_string(limit) + (with_used ? "(" + std::to_string(used) + ")" : "");
}

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[128];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

bool wanted(const std::vector<std::string>& list, const std::string& v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

std::string uid_text(int64_t uid) { return std::to_string(uid < 0 ? 4294967294LL : uid); }

// Nested-set left values, as slurmdbd numbers the tree (users, then sub-accounts by name).
std::map<uint32_t, int64_t> lft_values(const AcctModel& m, const std::string& cluster) {
  std::map<std::string, std::vector<const AcctAssoc*>> users, subs;
  const AcctAssoc* root = nullptr;
  for (const auto& [id, a] : m.assocs) {
    if (a.cluster != cluster) continue;
    if (!a.user.empty()) users[a.account].push_back(&a);
    else if (a.parent.empty()) root = &a;
    else subs[a.parent].push_back(&a);
  }
  std::map<uint32_t, int64_t> out;
  int64_t next = 1;
  auto walk = [&](auto&& self, const AcctAssoc& a, int depth) -> void {
    out[a.id] = next;
    next += 1;
    if (a.user.empty() && depth < 64) {
      for (const AcctAssoc* u : users[a.account]) out[u->id] = next, next += 2;
      for (const AcctAssoc* s : subs[a.account]) self(self, *s, depth + 1);
    }
    next += 1;
  };
  if (root) walk(walk, *root, 0);
  return out;
}

void users_section(std::string& out, const AcctModel& m, const std::string& cluster,
                   const std::function<int64_t(const std::string&)>& uid_of, const AssocMgrQuery& q) {
  std::vector<const AcctUser*> shown;
  for (const auto& [name, u] : m.users)
    if (wanted(q.users, name) && !m.user_assocs(cluster, name).empty()) shown.push_back(&u);
  const char* nl = q.one_liner ? "" : "\n";
  if (shown.empty()) {
    out += std::string(nl) + "No users currently cached in Slurm." + nl + "\n";
    return;
  }
  out += std::string(nl) + "User Records" + nl + "\n";
  for (const AcctUser* u : shown)
    out += "UserName=" + u->name + "(" + uid_text(uid_of(u->name)) + ") DefAccount=" + u->default_account +
           " DefWckey= AdminLevel=" + std::string(admin_level_name(u->admin)) + "\n";
}

// "GrpWall=LIMIT(USED)" (N: no limit), the limit and the decayed use in minutes.
std::string wall_used(int64_t limit, double used_seconds) {
  return "GrpWall=" + (limit == kNoLimit ? std::string("N") : std::to_string(limit)) + fmt("(%.2f)", used_seconds / 60.0);
}

void assoc_record(std::string& out, const AcctModel& m, const AcctAssoc& a, const ShareRow* share, const AcctUsage& usage,
                  int64_t lft, const std::function<int64_t(const std::string&)>& uid_of, const std::string& nl, bool gpu) {
  static const AcctUsage::Counts none;
  const AcctUsage::Counts* c = usage.assoc_counts(a.account, a.user, a.partition);
  if (!c) c = &none;
  AcctAssoc shown = m.inherited(a);
  const AcctLimits& l = shown.limits;
  out += "ClusterName=" + a.cluster + " Account=" + a.account + " ";
  out += a.user.empty() ? "UserName= " : "UserName=" + a.user + "(" + uid_text(uid_of(a.user)) + ") ";
  out += "Partition=" + a.partition + " Priority=" + std::to_string(std::max<int64_t>(0, shown.priority)) +
         " ID=" + std::to_string(a.id) + nl;
  int64_t raw = a.shares == kSharesParent ? 1 : a.shares;
  out += "SharesRaw/Norm/Level/Factor=" + std::to_string(raw) +
         fmt("/%.2f/%.0f/%.2f", share ? share->norm_shares : 0, static_cast<double>(raw), share ? share->fair_share : 0) + nl;
  bool root = a.user.empty() && a.parent.empty();
  out += fmt("UsageRaw/Norm/Efctv=%.2f/%.2f/%.2f", share ? share->raw_usage : 0,
             root ? 1.0 : (share ? share->norm_usage : 0), share ? share->effective_usage : 0) + nl;
  const AcctAssoc* parent = a.user.empty() ? m.parent_of(a) : nullptr;
  out += parent ? "ParentAccount=" + parent->account + "(" + std::to_string(parent->id) + ") " : "ParentAccount= ";
  bool is_default = false;
  if (!a.user.empty())
    if (auto u = m.users.find(a.user); u != m.users.end()) is_default = u->second.default_account == a.account;
  out += "Lft=" + std::to_string(lft) + " DefAssoc=" + (is_default ? "Yes" : "No") + nl;
  out += count_limit("GrpJobs", l.grp_jobs, c->jobs) + " GrpJobsAccrue=N(0)" + nl;
  out += count_limit("GrpSubmitJobs", l.grp_submit, c->submitted) + " " + wall_used(l.grp_wall, share ? share->used.wall : 0) + nl;
  out += tres_line("GrpTRES", l.grp_tres, &c->tres, gpu) + nl;
  TresCounts mins = share ? tres_minutes(share->used.tres) : TresCounts{};
  out += tres_line("GrpTRESMins", l.grp_tres_mins, &mins, gpu) + nl;
  out += tres_line("GrpTRESRunMins", l.grp_tres_run_mins, &c->run_mins, gpu) + nl;
  out += max_limit("MaxJobs", l.max_jobs, c->jobs) + " MaxJobsAccrue= " + max_limit("MaxSubmitJobs", l.max_submit, c->submitted) +
         " " + max_limit("MaxWallPJ", l.max_wall, 0, false) + nl;
  out += tres_line("MaxTRESPJ", l.max_tres, nullptr, gpu) + nl;
  out += tres_line("MaxTRESPN", l.max_tres_per_node, nullptr, gpu) + nl;
  out += tres_line("MaxTRESMinsPJ", l.max_tres_mins, nullptr, gpu) + nl;
  out += "MinPrioThresh=\n";
}

void qos_record(std::string& out, const AcctQos& q, const AcctUsage& usage, const std::string& nl, bool one_liner, bool gpu) {
  static const AcctUsage::Counts none;
  const AcctUsage::Counts* c = usage.qos_counts(q.name);
  if (!c) c = &none;
  const AcctLimits& l = q.limits;
  UsedSum used = usage.policy().qos_used(q.name);
  out += "QOS=" + q.name + "(" + std::to_string(q.id) + ")" + nl + fmt("UsageRaw=%.6f", used.billing()) + nl;
  out += count_limit("GrpJobs", l.grp_jobs, c->jobs) + " GrpJobsAccrue=N(0) " +
         count_limit("GrpSubmitJobs", l.grp_submit, c->submitted) + " " + wall_used(l.grp_wall, used.wall) + nl;
  out += tres_line("GrpTRES", l.grp_tres, &c->tres, gpu) + nl;
  TresCounts mins = tres_minutes(used.tres);
  out += tres_line("GrpTRESMins", l.grp_tres_mins, &mins, gpu) + nl;
  out += tres_line("GrpTRESRunMins", l.grp_tres_run_mins, &c->run_mins, gpu) + nl;
  out += max_limit("MaxWallPJ", l.max_wall, 0, false) + nl;
  out += tres_line("MaxTRESPJ", l.max_tres, nullptr, gpu) + nl;
  out += tres_line("MaxTRESPN", l.max_tres_per_node, nullptr, gpu) + nl;
  out += tres_line("MaxTRESMinsPJ", l.max_tres_mins, nullptr, gpu) + nl;
  out += "MinPrioThresh= " + nl;
  out += tres_line("MinTRESPJ", l.min_tres, nullptr, gpu) + nl;
  std::string mode = to_lower(q.preempt_mode) == "cluster" || q.preempt_mode.empty() ? "OFF" : q.preempt_mode;
  std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  out += "PreemptMode=" + mode + (one_liner ? " " : "\n    ") + "Priority=" + std::to_string(q.priority) + nl;
  const std::string inner = one_liner ? " " : "\n        ";
  out += std::string("Account Limits") + (one_liner ? "=" : "");
  auto accounts = usage.qos_accounts(q.name);
  if (accounts.empty()) out += (one_liner ? "" : "\n        ") + std::string("No Accounts");
  for (const auto& [account, u] : accounts) {
    out += (one_liner ? " " : "\n      ") + account + (one_liner ? "={" : inner);
    out += count_limit("MaxJobsPA", l.max_jobs_pa, u.jobs) + " MaxJobsAccruePA=N(0) " +
           count_limit("MaxSubmitJobsPA", l.max_submit_pa, u.submitted) + inner + tres_line("MaxTRESPA", l.max_tres_pa, &u.tres, gpu);
    if (one_liner) out += "}";
  }
  out += nl + "User Limits" + (one_liner ? "=" : "");
  auto users = usage.qos_users(q.name);
  if (users.empty()) out += (one_liner ? "" : "\n        ") + std::string("No Users");
  for (const auto& [uid, u] : users) {
    out += (one_liner ? " " : "\n      ") + std::to_string(uid) + (one_liner ? "={" : inner);
    out += count_limit("MaxJobsPU", l.max_jobs_pu, u.jobs) + " MaxJobsAccruePU=N(0) " +
           count_limit("MaxSubmitJobsPU", l.max_submit_pu, u.submitted) + inner + tres_line("MaxTRESPU", l.max_tres_pu, &u.tres, gpu);
    if (one_liner) out += "}";
  }
  out += "\n";
}

}  // namespace

Result<AssocMgrQuery> parse_assoc_mgr_args(const std::vector<std::string>& words) {
  AssocMgrQuery q;
  bool flags = false;
  bool users = false, assoc = false, qos = false;
  for (const std::string& w : words) {
    size_t eq = w.find('=');
    std::string tag = w.substr(0, eq), value = eq == std::string::npos ? "" : w.substr(eq + 1);
    if (value.empty()) return invalid("No value given for option " + w);
    auto is = [&](std::string_view name) {
      return !tag.empty() && tag.size() <= name.size() && iequals(name.substr(0, tag.size()), tag);
    };
    if (is("accounts")) {
      for (auto& a : split_list(value)) q.accounts.push_back(a);
    } else if (is("flags")) {
      std::string v = to_lower(value);
      users = users || v.find("users") != std::string::npos;
      assoc = assoc || v.find("assoc") != std::string::npos;
      qos = qos || v.find("qos") != std::string::npos;
      if (!users && !assoc && !qos) return invalid("invalid flag '" + value + "', valid options are 'Assoc, QOS, and/or Users'");
      flags = true;
    } else if (is("qos")) {
      for (auto& n : split_list(value)) q.qos.push_back(n);
    } else if (is("users")) {
      for (auto& u : split_list(value)) q.users.push_back(u);
    } else {
      return invalid("invalid entity: " + tag + " for keyword:show assoc_mgr");
    }
  }
  if (flags) q.users_section = users, q.assoc_section = assoc, q.qos_section = qos;
  return q;
}

std::string render_assoc_mgr(const AcctModel& m, const std::string& cluster, const FairShare& shares, const AcctUsage& usage,
                             const std::function<int64_t(const std::string&)>& uid_of, const AssocMgrQuery& q) {
  std::string out = "Current Association Manager state\n";
  const std::string nl = q.one_liner ? " " : "\n    ";
  const char* blank = q.one_liner ? "" : "\n";
  if (q.users_section) users_section(out, m, cluster, uid_of, q);
  if (q.assoc_section) {
    std::map<uint32_t, const ShareRow*> by_id;
    for (const ShareRow& r : shares.rows()) by_id[r.assoc] = &r;
    auto lft = lft_values(m, cluster);
    std::string records;
    for (const auto& [id, a] : m.assocs) {
      if (a.cluster != cluster || !wanted(q.accounts, a.account) || (!a.user.empty() && !wanted(q.users, a.user))) continue;
      auto s = by_id.find(id);
      assoc_record(records, m, a, s == by_id.end() ? nullptr : s->second, usage, lft[id], uid_of, nl, q.gpu_tres);
    }
    out += records.empty() ? std::string(blank) + "No associations currently cached in Slurm." + blank + "\n"
                           : std::string(blank) + "Association Records" + blank + "\n" + records;
  }
  if (q.qos_section) {
    std::vector<const AcctQos*> qos;
    for (const auto& [name, rec] : m.qos)
      if (wanted(q.qos, name)) qos.push_back(&rec);
    std::sort(qos.begin(), qos.end(), [](const AcctQos* a, const AcctQos* b) { return a->id < b->id; });
    std::string records;
    for (const AcctQos* rec : qos) qos_record(records, *rec, usage, nl, q.one_liner, q.gpu_tres);
    out += records.empty() ? std::string(blank) + "No QOS currently cached in Slurm." + blank + "\n"
                           : std::string(blank) + "QOS Records" + blank + "\n" + records;
  }
  return out;
}

}  // namespace hq
