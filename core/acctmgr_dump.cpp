// sacctmgr dump CLUSTER [File=NAME]: a cluster's associations, accounts and users as
// Slurm 22.05's flat file (sacctmgr's file_functions.c): its comment block, a Cluster line,
// then for each account from root down a "Parent - 'NAME'" line followed by its users' and
// sub-accounts' lines, each with its options in Slurm's order. The file goes to the client,
// which writes it; each line is also told on stderr ("sacctmgr: ..."), as Slurm's info().
// Pure; thread-safe.
#include <algorithm>

#include "core/acctmgr_internal.hpp"
#include "core/units.hpp"

namespace hq::acctmgr {
namespace {

constexpr std::string_view kHeader =
    "# To edit this file start with a cluster line for the new cluster\n"
    "# Cluster - 'cluster_name':MaxTRESPerJob=node=50\n"
    "# Followed by Accounts you want in this fashion (root is created by default)...\n"
    "# Parent - 'root'\n"
    "# Account - 'cs':MaxTRESPerJob=node=5:MaxJobs=4:MaxTRESMinsPerJob=cpu=20:FairShare=399:"
    "MaxWallDurationPerJob=40:Description='Computer Science':Organization='LC'\n"
    "# Any of the options after a ':' can be left out and they can be in any order.\n"
    "# If you want to add any sub accounts just list the Parent THAT HAS ALREADY\n"
    "# BEEN CREATED before the account line in this fashion...\n"
    "# Parent - 'cs'\n"
    "# Account - 'test':MaxTRESPerJob=node=1:MaxJobs=1:MaxTRESMinsPerJob=cpu=1:FairShare=1:"
    "MaxWallDurationPerJob=1:Description='Test Account':Organization='Test'\n"
    "# To add users to a account add a line like this after a Parent - 'line'\n"
    "# User - 'lipari':MaxTRESPerJob=node=2:MaxJobs=3:MaxTRESMinsPerJob=cpu=4:FairShare=1:"
    "MaxWallDurationPerJob=1\n";

constexpr int64_t kFairshareParent = 2147483647;  // how Slurm's dump writes Fairshare=parent

// A user's QOS as changes from what its account gives ("+high,-normal"), as Slurm keeps a
// `qos+=`/`qos-=`; an account's as its whole list.
std::string qos_text(const AcctModel& m, const AcctAssoc& a) {
  if (a.qos.empty()) return "";
  const AcctAssoc* parent = m.parent_of(a);
  if (a.user.empty() || !parent) return comma_list(a.qos);
  std::vector<std::string> above = m.effective_qos(*parent), changes;
  for (const auto& q : a.qos)
    if (std::find(above.begin(), above.end(), q) == above.end()) changes.push_back("+" + q);
  for (const auto& q : above)
    if (std::find(a.qos.begin(), a.qos.end(), q) == a.qos.end()) changes.push_back("-" + q);
  return comma_list(changes);
}

// Slurm's print_file_add_limits_to_line: the association's own settings, in its order.
std::string limits_text(const AcctModel& m, const AcctAssoc& a) {
  std::string out;
  auto count = [&](const char* name, int64_t v) {
    if (v != kNoLimit) out += std::string(":") + name + "=" + std::to_string(v);
  };
  auto tres = [&](const char* name, const TresList& t) {
    if (!t.empty()) out += std::string(":") + name + "=" + format_tres(t);
  };
  if (!a.def_qos.empty()) out += ":DefaultQOS='" + a.def_qos + "'";
  out += ":Fairshare=" + std::to_string(a.shares == kSharesParent ? kFairshareParent : a.shares);
  const AcctLimits& l = a.limits;
  tres("GrpTRESMins", l.grp_tres_mins);
  tres("GrpTRESRunMins", l.grp_tres_run_mins);
  tres("GrpTRES", l.grp_tres);
  count("GrpJobs", l.grp_jobs);
  count("GrpSubmitJobs", l.grp_submit);
  count("GrpWall", l.grp_wall);
  tres("MaxTRESMinsPerJob", l.max_tres_mins);
  tres("MaxTRESPerJob", l.max_tres);
  tres("MaxTRESPerNode", l.max_tres_per_node);
  count("MaxJobs", l.max_jobs);
  count("MaxSubmitJobs", l.max_submit);
  count("MaxWallDurationPerJob", l.max_wall);
  count("Priority", a.priority);
  if (std::string q = qos_text(m, a); !q.empty()) out += ":QOS='" + q + "'";
  return out;
}

// A user's line: its default account, admin level, the accounts it coordinates, then its
// association's settings.
std::string user_line(const AcctModel& m, const AcctAssoc& a) {
  std::string line = "User - '" + a.user + "'";
  if (auto u = m.users.find(a.user); u != m.users.end()) {
    if (!u->second.default_account.empty()) line += ":DefaultAccount='" + u->second.default_account + "'";
    if (u->second.admin != AdminLevel::kNone) line += ":AdminLevel='" + std::string(admin_level_name(u->second.admin)) + "'";
  }
  // The accounts it was made coordinator of: those whose parent it does not coordinate too
  // (adding a coordinator covers the sub-accounts; Slurm's dump lists the direct ones).
  auto coordinates_account = [&](const std::string& account) {
    auto acct = m.accounts.find(account);
    return acct != m.accounts.end() &&
           std::find(acct->second.coordinators.begin(), acct->second.coordinators.end(), a.user) !=
               acct->second.coordinators.end();
  };
  std::vector<std::string> coordinates;
  for (const auto& [name, acct] : m.accounts) {
    if (!coordinates_account(name)) continue;
    const AcctAssoc* own = m.account_assoc(a.cluster, name);
    const AcctAssoc* parent = own ? m.parent_of(*own) : nullptr;
    if (!parent || !coordinates_account(parent->account)) coordinates.push_back(name);
  }
  if (!coordinates.empty()) line += ":Coordinator='" + comma_list(coordinates) + "'";
  if (!a.partition.empty()) line += ":Partition='" + a.partition + "'";
  return line + limits_text(m, a);
}

std::string account_line(const AcctModel& m, const AcctAssoc& a) {
  std::string line = "Account - '" + a.account + "'";
  if (auto acct = m.accounts.find(a.account); acct != m.accounts.end())
    line += ":Description='" + acct->second.description + "':Organization='" + acct->second.organization + "'";
  return line + limits_text(m, a);
}

// The associations right below account `account` on `cluster`: its users (by name, then
// partition), then its sub-accounts (by name), as Slurm's sorted hierarchy.
std::vector<const AcctAssoc*> children(const AcctModel& m, const std::string& cluster, const std::string& account) {
  std::vector<const AcctAssoc*> users, accounts;
  for (const auto& [id, a] : m.assocs) {
    if (a.cluster != cluster) continue;
    if (!a.user.empty() && a.account == account) users.push_back(&a);
    else if (a.user.empty() && a.parent == account && a.account != account) accounts.push_back(&a);
  }
  std::sort(users.begin(), users.end(), [](const AcctAssoc* x, const AcctAssoc* y) {
    return x->user != y->user ? x->user < y->user : x->partition < y->partition;
  });
  std::sort(accounts.begin(), accounts.end(), [](const AcctAssoc* x, const AcctAssoc* y) { return x->account < y->account; });
  users.insert(users.end(), accounts.begin(), accounts.end());
  return users;
}

// "Parent - 'ACCOUNT'" and the lines of what is below it, then the same for each
// sub-account that has something below it, depth first.
void dump_below(const AcctModel& m, const std::string& cluster, const std::string& account, std::vector<std::string>& lines,
                int depth) {
  auto below = children(m, cluster, account);
  if (below.empty() || depth > 64) return;
  lines.push_back("Parent - '" + account + "'");
  for (const AcctAssoc* a : below) lines.push_back(a->user.empty() ? account_line(m, *a) : user_line(m, *a));
  for (const AcctAssoc* a : below)
    if (a->user.empty()) dump_below(m, cluster, a->account, lines, depth + 1);
}

}  // namespace

void dump_it(Ctx& cx, const std::vector<std::string>& args) {
  std::string cluster, file;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string_view w = args[i];
    size_t eq = w.find('=');
    std::string key = to_lower(w.substr(0, eq == std::string_view::npos ? 0 : eq));
    std::string value(eq == std::string_view::npos ? w : w.substr(eq + 1));
    if (!value.empty() && (value.front() == '\'' || value.front() == '"') && value.back() == value.front() && value.size() > 1)
      value = value.substr(1, value.size() - 2);
    if (key == "file") file = value;
    else if (key.empty() || key == "cluster" || key == "clusters" || key == "name" || key == "names") cluster = value;
    else return cx.io.fail(" Unknown option: " + std::string(w) + "\n");
  }
  if (cluster.empty()) return cx.io.fail(" We need a cluster to dump.\n");
  const AcctAssoc* root = cx.model.account_assoc(cluster, "root");
  if (!cx.model.clusters.count(cluster) || !root) return cx.io.fail(" Cluster " + cluster + " doesn't exist.\n");
  if (file.empty()) {
    file = "./" + cluster + ".cfg";
    cx.io.out += " No filename given, using " + file + ".\n";
  }
  std::vector<std::string> lines = {"Cluster - '" + cluster + "'" + limits_text(cx.model, *root)};
  dump_below(cx.model, cluster, "root", lines, 0);
  std::string text(kHeader);
  for (const auto& line : lines) {
    text += line + "\n";
    cx.io.err += "sacctmgr: " + line + "\n";
  }
  cx.file_name = file;
  cx.file_text = std::move(text);
}

}  // namespace hq::acctmgr
