// sacctmgr's command dispatch and its add verbs (see acctmgr.hpp); modify/delete are in
// acctmgr_change.cpp, list/show in acctmgr_list.cpp, QOS in acctmgr_qos.cpp.
#include "core/acctmgr.hpp"
#include "core/acctmgr_coord.hpp"

#include <cstdio>

#include "core/acctmgr_internal.hpp"
#include "core/units.hpp"

namespace hq::acctmgr {
namespace {

std::string padded(std::string_view s, int width) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%-*.*s", width, width, std::string(s).c_str());
  return buf;
}

std::vector<std::string> target_clusters(const AcctModel& m, const std::vector<std::string>& given, Io& io) {
  if (given.empty()) {
    std::vector<std::string> all;
    for (const auto& [name, c] : m.clusters) all.push_back(name);
    if (all.empty()) io.fail("  Can't add accounts, no cluster defined yet.\n Please contact your administrator.\n");
    return all;
  }
  for (const auto& c : given)
    if (!m.clusters.count(c)) {
      io.fail(" This cluster '" + c + "' doesn't exist.\n        Contact your admin to add it to accounting.\n");
      return {};
    }
  return given;
}

void add_account(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> names, clusters;
  std::optional<std::string> descr, org;
  AssocSet set;
  bool limit_set = false;  // Slurm prints the settings block after any Key=Value
  for (const auto& w : words) {
    if (!w.has_value && (key_is(w.key, "Where", 5) || key_is(w.key, "Set", 3))) continue;
    limit_set = limit_set || w.has_value;
    if (!w.has_value || key_is(w.key, "Accounts", 1) || key_is(w.key, "Names", 1) || key_is(w.key, "Acct", 4)) {
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
    } else if (key_is(w.key, "Clusters", 1)) {
      for (auto& n : name_list(w.value)) clusters.push_back(n);
    } else if (key_is(w.key, "Description", 1)) {
      descr = to_lower(unquoted(w.value));
    } else if (key_is(w.key, "Organization", 1)) {
      org = to_lower(unquoted(w.value));
    } else {
      auto known = set_assoc_rec(set, w, cx.model);
      if (!known) {
        if (stops(cx.io, known.status())) return;
        continue;
      }
      if (!*known) cx.io.fail(" Unknown option: " + w.key + (w.has_value ? "=" + w.value : "") +
                              "\n Use keyword 'where' to modify condition\n");
    }
  }
  if (cx.io.rc) return;
  if (names.empty()) return cx.io.fail(" Need name of account to add.\n");
  std::string parent = set.parent.value_or("root");
  auto cl = target_clusters(cx.model, clusters, cx.io);
  if (cx.io.rc) return;
  std::string acct_str, assoc_str;
  for (const auto& name : names) {
    if (!cx.next.accounts.count(name)) {
      AcctAccount a{name, descr.value_or(name), org.value_or(parent != "root" ? parent : name), {}};
      cx.next.accounts[name] = a;
      acct_str += "  " + name + "\n";
    }
    for (const auto& c : cl) {
      if (cx.next.account_assoc(c, name)) continue;
      if (!cx.next.account_assoc(c, parent)) {
        cx.io.fail(" Parent account '" + parent + "' doesn't exist on cluster " + c +
                   "\n        Contact your admin to add this account.\n");
        continue;
      }
      AcctAssoc a;
      a.cluster = c;
      a.account = name;
      a.parent = parent;
      apply_assoc_set(a, set, cx.next);
      cx.next.add_assoc(a);
      assoc_str += "  A = " + padded(name, 10) + " C = " + padded(c, 10) + "\n";
    }
  }
  if (acct_str.empty() && assoc_str.empty()) return nothing(cx.io, " Nothing new added.\n");
  if (assoc_str.empty()) {
    cx.next = cx.model;
    return cx.io.fail(" No associations created.\n");
  }
  if (!acct_str.empty()) {
    cx.io.out += " Adding Account(s)\n" + acct_str + " Settings\n";
    cx.io.out += "  Description     = " + descr.value_or("Account Name") + "\n";
    cx.io.out += "  Organization    = " + org.value_or("Parent/Account Name") + "\n";
  }
  cx.io.out += " Associations\n" + assoc_str;
  if (limit_set) {
    set.parent = parent;
    cx.io.out += " Settings\n" + print_assoc_set(set);
  }
}

void add_user(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> names;
  std::optional<std::string> def_acct;
  std::optional<AdminLevel> admin;
  AssocSet set;
  AssocCond cond;
  bool limit_set = false;  // as Slurm: whether the last other Key=Value was a setting or condition
  for (const auto& w : words) {
    if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Users", 1)) {
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
    } else if (key_is(w.key, "AdminLevel", 2)) {
      admin = parse_admin_level(unquoted(w.value));
      if (!admin) admin = AdminLevel::kNone;
    } else if (key_is(w.key, "DefaultAccount", 8)) {
      if (def_acct) {
        cx.io.fail(" Already listed DefaultAccount " + *def_acct + "\n");
        continue;
      }
      def_acct = to_lower(unquoted(w.value));
      cond.accounts.push_back(*def_acct);
    } else if (key_is(w.key, "DefaultWCKey", 8) || key_is(w.key, "WCKeys", 1)) {
      continue;
    } else {
      auto known = set_assoc_rec(set, w, cx.model);
      if (!known) {
        if (stops(cx.io, known.status())) return;
        continue;
      }
      limit_set = *known || set_assoc_cond(cond, w);
      if (!limit_set) cx.io.fail(" Unknown option: " + w.key + "=" + w.value + "\n");
    }
  }
  if (cx.io.rc) return;
  if (names.empty()) return cx.io.fail(" Need name of user to add.\n");
  if (cond.accounts.empty()) return cx.io.fail(" Need name of account to add user to.\n");
  auto cl = target_clusters(cx.model, cond.clusters, cx.io);
  if (cx.io.rc) return;
  std::vector<std::string> parts = cond.partitions.empty() ? std::vector<std::string>{""} : cond.partitions;
  std::string user_str, assoc_str;
  bool first = true;
  for (const auto& name : names) {
    std::string local_def = def_acct.value_or(cond.accounts.front());
    if (!cx.next.users.count(name)) {
      if (first && def_acct && !cx.next.accounts.count(*def_acct)) {
        cx.io.fail(" This account '" + *def_acct + "' doesn't exist.\n        Contact your admin to add this account.\n");
        continue;
      }
      cx.next.users[name] = AcctUser{name, local_def, admin.value_or(AdminLevel::kNone)};
      user_str += "  " + name + "\n";
    }
    for (const auto& acct : cond.accounts) {
      if (first && !cx.next.accounts.count(acct)) {
        cx.io.fail(" This account '" + acct + "' doesn't exist.\n        Contact your admin to add this account.\n");
        continue;
      }
      for (const auto& c : cl) {
        if (!cx.next.account_assoc(c, acct)) {
          if (first)
            cx.io.fail(" This account '" + acct + "' doesn't exist on cluster " + c +
                       "\n        Contact your admin to add this account.\n");
          continue;
        }
        for (const auto& p : parts) {
          if (cx.next.user_assoc(c, acct, name, p)) continue;
          AcctAssoc a;
          a.cluster = c;
          a.account = acct;
          a.user = name;
          a.partition = p;
          a.parent = acct;
          apply_assoc_set(a, set, cx.next);
          cx.next.add_assoc(a);
          assoc_str += "  U = " + padded(name, 9) + " A = " + padded(acct, 10) + " C = " + padded(c, 10) +
                       (p.empty() ? "" : " P = " + padded(p, 10)) + "\n";
          if (cx.next.users[name].default_account.empty()) cx.next.users[name].default_account = acct;
        }
      }
    }
    first = false;
  }
  if (user_str.empty() && assoc_str.empty()) {
    cx.next = cx.model;
    return nothing(cx.io, " Nothing new added.\n");
  }
  if (assoc_str.empty()) {
    cx.next = cx.model;
    return cx.io.fail(" No associations or wckeys created.\n");
  }
  if (!user_str.empty()) {
    cx.io.out += " Adding User(s)\n" + user_str;
    if (def_acct || admin) cx.io.out += " Settings =\n";
    if (def_acct) cx.io.out += "  Default Account = " + *def_acct + "\n";
    if (admin) cx.io.out += "  Admin Level     = " + std::string(admin_level_name(*admin)) + "\n";
  }
  cx.io.out += " Associations =\n" + assoc_str;
  if (limit_set) cx.io.out += " Non Default Settings\n" + print_assoc_set(set);
}

void add_cluster(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> names;
  for (const auto& w : words) {
    if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Clusters", 1)) {
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
    } else {
      cx.io.fail(" Unknown option: " + w.key + "=" + w.value + "\n");
    }
  }
  if (cx.io.rc) return;
  if (names.empty()) return cx.io.fail(" Need name of cluster to add.\n");
  std::string str;
  for (const auto& n : names) {
    if (cx.next.clusters.count(n)) {
      nothing(cx.io, (" This cluster " + n + " already exists.  Not adding.\n").c_str());
      continue;
    }
    register_cluster(cx.next, n, "", 0);
    str += "  Name           = " + n + "\n";
  }
  if (str.empty()) return;
  cx.io.out += " Adding Cluster(s)\n" + str;
}

void add_coordinator(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> users, accounts;
  for (const auto& w : words) {
    if (!w.has_value && (key_is(w.key, "Where", 5) || key_is(w.key, "Set", 3))) continue;
    if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Users", 1)) {
      for (auto& n : name_list(w.has_value ? w.value : w.key)) users.push_back(n);
    } else if (key_is(w.key, "Accounts", 1) || key_is(w.key, "Acct", 4)) {
      for (auto& n : name_list(w.value)) accounts.push_back(n);
    } else {
      cx.io.fail(" Unknown option: " + w.key + "=" + w.value + "\n");
    }
  }
  if (cx.io.rc) return;
  if (users.empty() || accounts.empty())
    return cx.io.fail(" You need to specify conditions to add the coordinator.\n");
  std::string user_str, acct_str;
  for (const auto& u : users) {
    if (!cx.next.users.count(u)) return cx.io.fail(" Error with request: User not found: " + u + "\n");
    user_str += "  " + u + "\n";
  }
  for (const auto& a : accounts) {
    auto it = cx.next.accounts.find(a);
    if (it == cx.next.accounts.end()) return cx.io.fail(" Error with request: Account not found: " + a + "\n");
    acct_str += "  " + a + "\n";
    for (auto& [sub, acct] : cx.next.accounts) {
      bool under = false;
      for (const auto& [cn, c] : cx.next.clusters) under = under || cx.next.account_under(cn, sub, a);
      if (!under) continue;
      for (const auto& u : users)
        if (!contains(acct.coordinators, u)) acct.coordinators.push_back(u);
    }
  }
  cx.io.out += " Adding Coordinator User(s)\n" + user_str + " To Account(s) and all sub-accounts\n" + acct_str;
}

void add_it(Ctx& cx, const std::vector<std::string>& args) {
  auto bad = [&] {
    cx.io.fail(
        "No valid entity in add command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", "
        "\"Federation\", \"QOS\", \"Resource\", or \"User\"\n");
  };
  if (args.size() < 2) return bad();
  const std::string& e = args[1];
  auto words = parse_words(args, 2);
  if (key_is(e, "Account", 1) || key_is(e, "Acct", 4)) return add_account(cx, words);
  if (key_is(e, "Cluster", 2)) return add_cluster(cx, words);
  if (key_is(e, "Coordinator", 2)) return add_coordinator(cx, words);
  if (key_is(e, "QOS", 1)) return add_qos(cx, words);
  if (key_is(e, "User", 1)) return add_user(cx, words);
  bad();
}

bool is_write(std::string_view verb) {
  return key_is(verb, "add", 3) || key_is(verb, "create", 3) || key_is(verb, "modify", 1) ||
         key_is(verb, "update", 1) || key_is(verb, "delete", 3) || key_is(verb, "remove", 3);
}

bool may_write(const AcctModel& m, const AcctMgrActor& actor) {
  if (actor.admin) return true;
  auto it = m.users.find(actor.user);
  return it != m.users.end() && it->second.admin != AdminLevel::kNone;
}

}  // namespace

}  // namespace hq::acctmgr

namespace hq {

AcctMgrResult run_acctmgr(const AcctModel& model, const std::vector<std::string>& words,
                          const AcctMgrOptions& options, const AcctMgrActor& actor) {
  acctmgr::Ctx cx{model, model, options, {}, {}, {}, {}};
  auto finish = [&] {
    AcctMgrResult r;
    r.out = std::move(cx.io.out);
    r.err = std::move(cx.io.err);
    r.rc = cx.io.rc;
    r.changed = !(cx.next.clusters == model.clusters && cx.next.accounts == model.accounts &&
                               cx.next.users == model.users && cx.next.assocs == model.assocs &&
                               cx.next.qos == model.qos);
    r.model = std::move(cx.next);
    r.file_name = std::move(cx.file_name);
    r.file_text = std::move(cx.file_text);
    if (cx.options.records && !cx.listed.kind.empty()) r.listed = std::move(cx.listed);
    return r;
  };
  if (words.empty()) {
    cx.io.rc = 1;
    return finish();
  }
  const std::string& verb = words[0];
  if (acctmgr::is_write(verb)) {
    if (options.readonly) {
      cx.io.fail("Can't run this command in readonly mode.\n");
      return finish();
    }
    if (!acctmgr::may_write(model, actor) && !is_coordinator(model, actor.user)) {
      cx.io.fail(" Error with request: Access/permission denied\n");
      return finish();
    }
  }
  using acctmgr::key_is;
  if (key_is(verb, "add", 3) || key_is(verb, "create", 3)) acctmgr::add_it(cx, words);
  else if (key_is(verb, "show", 3) || key_is(verb, "list", 3)) acctmgr::show_it(cx, words);
  else if (key_is(verb, "modify", 1) || key_is(verb, "update", 1)) acctmgr::modify_it(cx, words);
  else if (key_is(verb, "delete", 3) || key_is(verb, "remove", 3)) acctmgr::delete_it(cx, words);
  else if (key_is(verb, "dump", 3)) acctmgr::dump_it(cx, words);
  else cx.io.fail("invalid keyword: " + verb + "\n");
  // A coordinator's change is taken only where all of it is theirs to make.
  if (acctmgr::is_write(verb) && !acctmgr::may_write(model, actor))
    if (Status s = coordinator_change(model, cx.next, actor.user); !s) {
      cx.next = model;
      cx.io = {};
      cx.file_name.clear();
      cx.file_text.clear();
      cx.io.fail(" Error with request: Access/permission denied\n " + s.message() + "\n");
    }
  return finish();
}

}  // namespace hq
