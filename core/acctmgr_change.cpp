// sacctmgr modify/update and delete/remove of accounts, users, clusters and coordinators, with
// the object lines slurmdbd returns ("C = hqbench    A = physics of root").
#include <algorithm>
#include <cstdio>

#include "core/acctmgr_internal.hpp"
#include "core/units.hpp"

namespace hq::acctmgr {
namespace {

std::string fmt(const char* f, const std::string& a, const std::string& b, const std::string& c = "") {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a.c_str(), b.c_str(), c.c_str());
  return buf;
}

// "C = %-10s A = %s of %s" for an account's association; a user's with `acct_width`.
std::string assoc_object(const AcctAssoc& a, int acct_width) {
  if (a.user.empty())
    return a.parent.empty() ? fmt("C = %-10s A = %s", a.cluster, a.account)
                            : fmt("C = %-10s A = %s of %s", a.cluster, a.account, a.parent);
  std::string s = acct_width == 20 ? fmt("C = %-10s A = %-20s U = %-9s", a.cluster, a.account, a.user)
                                   : fmt("C = %-10s A = %-10s U = %-9s", a.cluster, a.account, a.user);
  if (!a.partition.empty()) s += " P = " + a.partition;
  return s;
}

struct Split {
  std::vector<Word> where, set;
};
Split split_set(const std::vector<Word>& words) {
  Split s;
  bool in_set = false;
  for (const auto& w : words) {
    if (!w.has_value && key_is(w.key, "set", 3)) {
      in_set = true;
      continue;
    }
    if (!w.has_value && key_is(w.key, "where", 5)) {
      in_set = false;
      continue;
    }
    (in_set ? s.set : s.where).push_back(w);
  }
  return s;
}

// The where-words of account/user commands: bare names go to `names`.
bool read_cond(Ctx& cx, const std::vector<Word>& where, AssocCond& cond, std::vector<std::string>& names,
               bool user_entity) {
  for (const auto& w : where) {
    if (!w.has_value || key_is(w.key, "Names", 1) ||
        (user_entity ? key_is(w.key, "Users", 1) : (key_is(w.key, "Accounts", 1) || key_is(w.key, "Acct", 4)))) {
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
    } else if (!set_assoc_cond(cond, w)) {
      cx.io.fail(" Unknown condition: " + w.key + "=" + w.value + "\n Use keyword 'set' to modify value\n");
    }
  }
  return cx.io.rc == 0;
}

bool in(const std::vector<std::string>& want, const std::string& v) { return want.empty() || contains(want, v); }

void modify_account(Ctx& cx, const std::vector<Word>& words) {
  Split sp = split_set(words);
  AssocCond cond;
  std::vector<std::string> names;
  if (!read_cond(cx, sp.where, cond, names, false)) return;
  std::optional<std::string> descr, org;
  AssocSet set;
  for (const auto& w : sp.set) {
    if (key_is(w.key, "Description", 1)) descr = to_lower(unquoted(w.value));
    else if (key_is(w.key, "Organization", 1)) org = to_lower(unquoted(w.value));
    else if (!take_assoc_setting(cx, set, w)) return;
  }
  if (cx.io.rc) return;
  if (!descr && !org && !set.any()) return cx.io.fail(" You didn't give me anything to set\n");
  if (descr || org) {
    std::string str;
    for (auto& [n, a] : cx.next.accounts) {
      if (!in(names, n)) continue;
      if (descr) a.description = *descr;
      if (org) a.organization = *org;
      str += "  " + n + "\n";
    }
    if (str.empty()) nothing(cx.io, " Nothing modified\n");
    else cx.io.out += " Modified accounts...\n" + str;
  }
  if (!set.any()) return;
  if (set.parent) {
    for (const auto& n : names)
      if (n == *set.parent) return cx.io.fail(" Error with request: You can't make an account be a child of it's self\n");
  }
  std::string str;
  for (uint32_t id : lft_order(cx.next)) {
    AcctAssoc& a = cx.next.assocs.at(id);
    if (!a.user.empty() || !in(names, a.account) || !in(cond.clusters, a.cluster) || a.account == "root") continue;
    std::string object = assoc_object(a, 20);  // as it was: Slurm names the old parent
    if (set.parent) {
      if (!cx.next.account_assoc(a.cluster, *set.parent) || cx.next.account_under(a.cluster, *set.parent, a.account))
        continue;
      if (a.parent != *set.parent) a.placed = cx.next.next_assoc_id++;  // slurmdbd puts it first under its new parent
      a.parent = *set.parent;
    }
    apply_assoc_set(a, set, cx.next);
    str += "  " + object + "\n";
  }
  if (str.empty()) return nothing(cx.io, " Nothing modified\n");
  cx.io.out += " Modified account associations...\n" + str;
}

void modify_user(Ctx& cx, const std::vector<Word>& words) {
  Split sp = split_set(words);
  AssocCond cond;
  std::vector<std::string> names;
  if (!read_cond(cx, sp.where, cond, names, true)) return;
  std::optional<std::string> def_acct;
  std::optional<AdminLevel> admin;
  AssocSet set;
  for (const auto& w : sp.set) {
    if (key_is(w.key, "DefaultAccount", 8)) def_acct = to_lower(unquoted(w.value));
    else if (key_is(w.key, "AdminLevel", 2)) admin = parse_admin_level(unquoted(w.value)).value_or(AdminLevel::kNone);
    else if (key_is(w.key, "DefaultWCKey", 8) || key_is(w.key, "NewName", 2)) continue;
    else if (!take_assoc_setting(cx, set, w)) return;
  }
  if (cx.io.rc) return;
  if (!def_acct && !admin && !set.any()) return cx.io.fail(" You didn't give me anything to set\n");
  if (def_acct || admin) {
    std::string str;
    for (auto& kv : cx.next.users) {
      const std::string& n = kv.first;
      AcctUser& u = kv.second;
      if (!in(names, n)) continue;
      if (def_acct) {
        bool has = false;
        for (const auto& [id, a] : cx.next.assocs) has = has || (a.user == n && a.account == *def_acct);
        if (!has) {
          std::string lines;
          for (const auto& [cn, c] : cx.next.clusters) lines += "  U = " + n + " C = " + cn + "\n";
          nothing(cx.io, (" Can't modify because these users aren't associated with new default account '" + *def_acct +
                          "'...\n" + lines).c_str());
          cx.next = cx.model;
          return;
        }
        u.default_account = *def_acct;
      }
      if (admin) u.admin = *admin;
      str += "  " + n + "\n";
    }
    if (str.empty()) nothing(cx.io, " Nothing modified\n");
    else cx.io.out += " Modified users...\n" + str;
  }
  if (!set.any()) return;
  std::string str;
  for (uint32_t id : lft_order(cx.next)) {
    AcctAssoc& a = cx.next.assocs.at(id);
    if (a.user.empty() || !in(names, a.user) || !in(cond.accounts, a.account) || !in(cond.clusters, a.cluster) ||
        !in(cond.partitions, a.partition))
      continue;
    apply_assoc_set(a, set, cx.next);
    str += "  " + assoc_object(a, 20) + "\n";
  }
  if (str.empty()) return nothing(cx.io, " Nothing modified\n");
  cx.io.out += " Modified user associations...\n" + str;
}

// Refuses a delete that would remove the association of an active job (slurmdbd's answer,
// one line per job); true when it did (the model is left as it was).
bool refused_for_active_jobs(Ctx& cx, const std::vector<const AcctAssoc*>& removed) {
  std::string lines;
  for (const AcctActiveJob& j : cx.options.active_jobs) {
    bool hit = std::any_of(removed.begin(), removed.end(), [&](const AcctAssoc* a) {
      return a->cluster == j.cluster && a->account == j.account && a->user == j.user;
    });
    if (hit)
      lines += fmt("  JobID = %-10s C = %-10s A = %-10s", std::to_string(j.id), j.cluster, j.account) +
               fmt(" U = %-9s%s\n", j.user, "");
  }
  if (lines.empty()) return false;
  cx.next = cx.model;
  cx.io.fail(" Error with request: Job(s) active, cancel job(s) before remove\n" + lines);
  return true;
}

void delete_user(Ctx& cx, const std::vector<Word>& words) {
  AssocCond cond;
  std::vector<std::string> names;
  if (!read_cond(cx, split_set(words).where, cond, names, true)) return;
  if (names.empty() && !cond.any) return cx.io.fail(" No conditions given to remove, not executing.\n");
  bool whole_users = cond.accounts.empty() && cond.partitions.empty() && cond.clusters.empty();
  std::string str;
  std::vector<uint32_t> gone;
  for (uint32_t id : lft_order(cx.next)) {
    const AcctAssoc& a = cx.next.assocs.at(id);
    if (a.user.empty() || !in(names, a.user) || !in(cond.accounts, a.account) || !in(cond.clusters, a.cluster) ||
        !in(cond.partitions, a.partition))
      continue;
    gone.push_back(id);
    if (!whole_users) str += "  " + assoc_object(a, 10) + "\n";
  }
  std::vector<const AcctAssoc*> removed;
  for (auto id : gone) removed.push_back(&cx.model.assocs.at(id));
  if (refused_for_active_jobs(cx, removed)) return;
  for (auto id : gone) cx.next.assocs.erase(id);
  if (whole_users) {
    for (auto it = cx.next.users.begin(); it != cx.next.users.end();) {
      if (in(names, it->first) && (!names.empty())) {
        str += "  " + it->first + "\n";
        for (auto& [an, acct] : cx.next.accounts) std::erase(acct.coordinators, it->first);
        it = cx.next.users.erase(it);
      } else {
        ++it;
      }
    }
  } else {
    // A user left without the association of their default account takes another one.
    for (auto& kv : cx.next.users) {
      AcctUser& u = kv.second;
      auto mine = cx.next.user_assocs(cx.next.clusters.empty() ? "" : cx.next.clusters.begin()->first, kv.first);
      bool has_def = std::any_of(mine.begin(), mine.end(), [&](const AcctAssoc* a) { return a->account == u.default_account; });
      if (!has_def && !mine.empty()) u.default_account = mine.front()->account;
    }
  }
  if (str.empty()) return nothing(cx.io, " Nothing deleted\n");
  cx.io.out += (whole_users ? " Deleting users...\n" : " Deleting user associations...\n") + str;
}

// Slurm 22.05 removes the named accounts' associations with everything under them (sub-accounts'
// and users' associations) but only the named account records, and prints those; users keep
// existing, their default account emptied where it went.
void delete_account(Ctx& cx, const std::vector<Word>& words) {
  AssocCond cond;
  std::vector<std::string> names;
  if (!read_cond(cx, split_set(words).where, cond, names, false)) return;
  if (names.empty() && !cond.any) return cx.io.fail(" No conditions given to remove, not executing.\n");
  std::string str;
  std::vector<std::string> gone_accounts;
  for (const auto& kv : cx.model.assocs) {
    const AcctAssoc& a = kv.second;
    if (!a.user.empty() || !in(names, a.account) || !in(cond.clusters, a.cluster) || a.account == "root") continue;
    if (!contains(gone_accounts, a.account)) {
      str += "  " + a.account + "\n";
      gone_accounts.push_back(a.account);
    }
    std::erase_if(cx.next.assocs, [&](const auto& kv) {
      return kv.second.cluster == a.cluster && cx.model.account_under(a.cluster, kv.second.account, a.account);
    });
  }
  std::vector<const AcctAssoc*> removed;
  for (const auto& [id, a] : cx.model.assocs)
    if (!cx.next.assocs.count(id)) removed.push_back(&a);
  if (refused_for_active_jobs(cx, removed)) return;
  // Accounts left without any association lose their coordinators; the named ones go.
  for (auto it = cx.next.accounts.begin(); it != cx.next.accounts.end();) {
    const std::string& n = it->first;
    bool used = std::any_of(cx.next.assocs.begin(), cx.next.assocs.end(), [&](const auto& kv) { return kv.second.account == n; });
    if (used || n == "root") {
      ++it;
      continue;
    }
    it->second.coordinators.clear();
    for (auto& [un, u] : cx.next.users)
      if (u.default_account == n) u.default_account.clear();
    it = contains(gone_accounts, n) ? cx.next.accounts.erase(it) : std::next(it);
  }
  if (str.empty()) return nothing(cx.io, " Nothing deleted\n");
  cx.io.out += " Deleting accounts...\n" + str;
}

void delete_coordinator(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> users, accounts;
  for (const auto& w : split_set(words).where) {
    if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Users", 1))
      for (auto& n : name_list(w.has_value ? w.value : w.key)) users.push_back(n);
    else if (key_is(w.key, "Accounts", 1) || key_is(w.key, "Acct", 4))
      for (auto& n : name_list(w.value)) accounts.push_back(n);
    else cx.io.fail(" Unknown condition: " + w.key + "=" + w.value + "\n");
  }
  if (cx.io.rc) return;
  if (users.empty() && accounts.empty()) return cx.io.fail(" You need to specify a user list here.\n");
  for (const auto& a : accounts)
    if (!cx.next.accounts.count(a)) return cx.io.fail(" You specified a non-existent account '" + a + "'.\n");
  std::string head;
  if (!users.empty()) {
    head += " Removing Coordinators with user name\n";
    for (const auto& u : users) head += "  " + u + "\n";
  }
  if (!accounts.empty()) {
    head += " From Account(s)\n";
    for (const auto& a : accounts) head += "  " + a + "\n";
  } else {
    head += " From all accounts\n";
  }
  cx.io.out += head;
  std::string str;
  for (auto& [n, a] : cx.next.accounts) {
    bool under = accounts.empty();
    for (const auto& top : accounts)
      for (const auto& [cn, c] : cx.model.clusters) under = under || cx.model.account_under(cn, n, top);
    if (!under) continue;
    for (auto it = a.coordinators.begin(); it != a.coordinators.end();) {
      if (in(users, *it)) {
        if (contains(accounts, n) || accounts.empty()) str += fmt("  U = %-9s A = %-10s", *it, n) + "\n";
        it = a.coordinators.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (str.empty()) return nothing(cx.io, " Nothing removed\n");
  cx.io.out += " Removed Coordinators (sub accounts not listed)...\n" + str;
}

void delete_cluster(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> names;
  for (const auto& w : split_set(words).where)
    if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Clusters", 1))
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
  if (names.empty()) return cx.io.fail(" No conditions given to remove, not executing.\n");
  std::string str;
  for (const auto& n : names) {
    if (!cx.next.clusters.erase(n)) continue;
    std::erase_if(cx.next.assocs, [&](const auto& kv) { return kv.second.cluster == n; });
    str += "  " + n + "\n";
  }
  if (str.empty()) return nothing(cx.io, " Nothing deleted\n");
  cx.io.out += " Deleting clusters...\n" + str;
}

}  // namespace

bool take_assoc_setting(Ctx& cx, AssocSet& set, const Word& w) {
  auto known = set_assoc_rec(set, w, cx.model);
  if (!known) return !stops(cx.io, known.status());
  if (!*known) cx.io.fail(" Unknown option: " + w.key + "=" + w.value + "\n Use keyword 'where' to modify condition\n");
  return true;
}

void modify_it(Ctx& cx, const std::vector<std::string>& args) {
  auto bad = [&] {
    cx.io.fail("No valid entity in modify command\nInput line must include \"Account\", \"Cluster\", \"Federation\", "
               "\"Job\", \"QOS\", \"Resource\", or \"User\"\n");
  };
  if (args.size() < 2) return bad();
  const std::string& e = args[1];
  auto words = parse_words(args, 2);
  if (key_is(e, "Accounts", 1) || key_is(e, "Acct", 4)) return modify_account(cx, words);
  if (key_is(e, "QOSs", 1)) return modify_qos(cx, words);
  if (key_is(e, "Users", 1)) return modify_user(cx, words);
  bad();
}

void delete_it(Ctx& cx, const std::vector<std::string>& args) {
  auto bad = [&] {
    cx.io.fail("No valid entity in delete command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", "
               "\"Federation\", \"QOS\", \"Resource\", \"User\", or \"WCKey\"\n");
  };
  if (args.size() < 2) return bad();
  const std::string& e = args[1];
  auto words = parse_words(args, 2);
  if (key_is(e, "Accounts", 1) || key_is(e, "Acct", 4)) return delete_account(cx, words);
  if (key_is(e, "Clusters", 2)) return delete_cluster(cx, words);
  if (key_is(e, "Coordinators", 2)) return delete_coordinator(cx, words);
  if (key_is(e, "QOSs", 1)) return delete_qos(cx, words);
  if (key_is(e, "Users", 1)) return delete_user(cx, words);
  bad();
}

}  // namespace hq::acctmgr
