// A coordinator's changes, checked (see acctmgr_coord.hpp).
#include "core/acctmgr_coord.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/acctmgr.hpp"

namespace hq {
namespace {

Status refused(const std::string& why) { return denied("coordinator: " + why); }

// The accounts `user` coordinates (a coordinator of an account coordinates its subtree too).
std::vector<std::string> coordinated(const AcctModel& m, const std::string& user) {
  std::vector<std::string> out;
  for (const auto& [name, account] : m.accounts)
    if (std::find(account.coordinators.begin(), account.coordinators.end(), user) != account.coordinators.end())
      out.push_back(name);
  return out;
}

// `account` on `cluster` is one of `roots` or below one (`strictly`: below).
bool within(const AcctModel& m, const std::string& cluster, const std::string& account,
            const std::vector<std::string>& roots, bool strictly) {
  for (const auto& root : roots) {
    if (strictly && account == root) continue;
    if (m.account_under(cluster, account, root)) return true;
  }
  return false;
}

// Slurm 24.05: a coordinator may not raise an association's job limits above its parent's.
Status within_parent_limits(const AcctModel& m, const AcctAssoc& a) {
  const AcctAssoc* parent = m.parent_of(a);
  if (!parent) return refused("the root association is not a coordinator's to change");
  const AcctLimits mine = a.limits, theirs = m.inherited(*parent).limits;
  const std::pair<const char*, int64_t AcctLimits::*> limits[] = {
      {"MaxJobs", &AcctLimits::max_jobs},   {"MaxSubmitJobs", &AcctLimits::max_submit}, {"MaxWall", &AcctLimits::max_wall},
      {"GrpJobs", &AcctLimits::grp_jobs},   {"GrpSubmitJobs", &AcctLimits::grp_submit}, {"GrpWall", &AcctLimits::grp_wall}};
  const std::string who = " of association (" + a.account + (a.user.empty() ? "" : ", " + a.user) + ") is above its parent's ";
  for (const auto& [name, field] : limits) {
    int64_t value = mine.*field, cap = theirs.*field;
    if (value != kNoLimit && cap != kNoLimit && value > cap)
      return refused(std::string(name) + "=" + std::to_string(value) + who + std::to_string(cap));
  }
  // Each TRES of a TRES limit, against the same TRES of the parent's (one it does not set: no cap).
  const std::pair<const char*, TresList AcctLimits::*> tres_limits[] = {
      {"GrpTRES", &AcctLimits::grp_tres},       {"GrpTRESMins", &AcctLimits::grp_tres_mins},
      {"GrpTRESRunMins", &AcctLimits::grp_tres_run_mins}, {"MaxTRES", &AcctLimits::max_tres},
      {"MaxTRESPerNode", &AcctLimits::max_tres_per_node}, {"MaxTRESMins", &AcctLimits::max_tres_mins}};
  for (const auto& [name, field] : tres_limits)
    for (const auto& entry : mine.*field) {  // not a structured binding: clang 14 captures none in a lambda
      const std::string& tres = entry.first;
      const TresList& caps = theirs.*field;
      auto cap = std::find_if(caps.begin(), caps.end(), [&](const auto& c) { return c.first == tres; });
      if (entry.second >= 0 && cap != caps.end() && cap->second >= 0 && entry.second > cap->second)
        return refused(std::string(name) + "=" + format_tres({entry}) + who + format_tres({*cap}));
    }
  return Status::ok();
}

Status check_users(const AcctModel& before, const AcctModel& after) {
  for (const auto& [name, user] : after.users) {
    auto old = before.users.find(name);
    if (old == before.users.end()) {
      if (user.admin != AdminLevel::kNone) return refused("a new user may not have an admin level (" + name + ")");
    } else if (!(old->second == user)) {
      return refused("user " + name + "'s record is an administrator's to change");
    }
  }
  for (const auto& [name, user] : before.users)
    if (!after.users.count(name)) return refused("user " + name + " is an administrator's to remove");
  return Status::ok();
}

Status check_accounts(const AcctModel& before, const AcctModel& after, const std::vector<std::string>& roots) {
  auto under = [&](const AcctModel& m, const std::string& account, bool strictly) {
    for (const auto& [id, a] : m.assocs)
      if (a.user.empty() && a.account == account) return within(m, a.cluster, account, roots, strictly);
    return false;
  };
  for (const auto& [name, account] : after.accounts) {
    auto old = before.accounts.find(name);
    if (old == before.accounts.end() ? !under(after, name, true) : !(old->second == account) && !under(before, name, false))
      return refused("account " + name + " is not below an account you coordinate");
  }
  for (const auto& [name, account] : before.accounts)
    if (!after.accounts.count(name) && !under(before, name, true))
      return refused("account " + name + " is not below an account you coordinate");
  return Status::ok();
}

Status check_assocs(const AcctModel& before, const AcctModel& after, const std::vector<std::string>& roots) {
  for (const auto& [id, a] : after.assocs) {
    auto old = before.assocs.find(id);
    if (old != before.assocs.end() && old->second == a) continue;
    // A new account's own association hangs below the coordinated one; a user's is in it.
    if (!within(after, a.cluster, a.account, roots, a.user.empty() && old == before.assocs.end()))
      return refused("association (" + a.account + (a.user.empty() ? "" : ", " + a.user) +
                     ") is not in an account you coordinate");
    if (Status s = within_parent_limits(after, a); !s) return s;
  }
  for (const auto& [id, a] : before.assocs)
    if (!after.assocs.count(id) && !within(before, a.cluster, a.account, roots, a.user.empty()))
      return refused("association (" + a.account + (a.user.empty() ? "" : ", " + a.user) +
                     ") is not in an account you coordinate");
  return Status::ok();
}

}  // namespace

bool is_coordinator(const AcctModel& m, const std::string& user) { return !coordinated(m, user).empty(); }

Status coordinator_change(const AcctModel& before, const AcctModel& after, const std::string& user) {
  std::vector<std::string> roots = coordinated(before, user);
  if (roots.empty()) return refused(user + " coordinates no account");
  if (!(before.clusters == after.clusters)) return refused("clusters are an administrator's to change");
  if (!(before.qos == after.qos)) return refused("QOS are an administrator's to change");
  if (Status s = check_users(before, after); !s) return s;
  if (Status s = check_accounts(before, after, roots); !s) return s;
  return check_assocs(before, after, roots);
}

namespace {

bool coordinates(const AcctModel& m, const std::string& account, const std::string& user) {
  auto it = m.accounts.find(account);
  return it != m.accounts.end() && std::find(it->second.coordinators.begin(), it->second.coordinators.end(), user) !=
                                       it->second.coordinators.end();
}

// Whether `user` coordinates `account` only as an account above it does (sacctmgr gives a
// coordinator every sub-account too; those are not "direct").
bool inherited(const AcctModel& m, const std::string& account, const std::string& user) {
  for (const auto& [cluster, c] : m.clusters)
    if (const AcctAssoc* a = m.account_assoc(cluster, account); a && !a->parent.empty() && coordinates(m, a->parent, user))
      return true;
  return false;
}

// Whether `account` is below `ancestor` (not it) on some cluster.
bool below(const AcctModel& m, const std::string& account, const std::string& ancestor) {
  if (account == ancestor) return false;
  for (const auto& [name, c] : m.clusters)
    if (m.account_under(name, account, ancestor)) return true;
  return false;
}

}  // namespace

std::vector<AcctListed::Coord> user_coordinates(const AcctModel& m, const std::string& user) {
  std::vector<AcctListed::Coord> out;
  auto has = [&](const std::string& name) {
    return std::any_of(out.begin(), out.end(), [&](const AcctListed::Coord& c) { return c.name == name; });
  };
  for (const auto& [name, a] : m.accounts) {  // each account named, then those below it
    if (!coordinates(m, name, user) || inherited(m, name, user)) continue;
    out.push_back({name, true});
    for (const auto& [sub, b] : m.accounts)
      if (below(m, sub, name) && coordinates(m, sub, user) && !has(sub)) out.push_back({sub, !inherited(m, sub, user)});
  }
  return out;
}

std::vector<AcctListed::Coord> account_coordinators(const AcctModel& m, const std::string& account) {
  std::vector<AcctListed::Coord> out;
  auto it = m.accounts.find(account);
  if (it == m.accounts.end()) return out;
  for (const std::string& u : it->second.coordinators) out.push_back({u, !inherited(m, account, u)});
  return out;
}

}  // namespace hq
