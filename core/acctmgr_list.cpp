// sacctmgr list/show: the field table (Slurm's names, shortest prefixes, headers and widths,
// in its order, first match wins), each entity's default format, its rows and their values.
#include <algorithm>
#include <cstdio>
#include <functional>

#include "core/acctmgr_internal.hpp"
#include "core/sacct_format.hpp"
#include "core/units.hpp"

namespace hq::acctmgr {
namespace {

struct Field {
  std::vector<std::pair<std::string_view, size_t>> names;  // (name, shortest prefix)
  std::string_view header;
  int width;
};

// sacctmgr's _get_print_field table, in its order.
const std::vector<Field>& fields() {
  static const std::vector<Field> kFields = {
      {{{"Account", 3}, {"Acct", 4}}, "Account", 10},
      {{{"AdminLevel", 2}}, "Admin", 9},
      {{{"Associations", 2}}, "Assocs", 10},
      {{{"TRES", 2}}, "TRES", 20},
      {{{"ClusterNodes", 8}}, "Cluster Nodes", 20},
      {{{"Clusters", 2}}, "Cluster", 10},
      {{{"Coordinators", 2}}, "Coord Accounts", 20},
      {{{"ControlHost", 8}}, "ControlHost", 15},
      {{{"ControlPort", 8}}, "ControlPort", 12},
      {{{"CPUCount", 2}}, "CPU Cnt", 7},
      {{{"DefaultAccount", 8}}, "Def Acct", 10},
      {{{"DefaultQOS", 8}}, "Def QOS", 9},
      {{{"Description", 3}}, "Descr", 20},
      {{{"Duration", 2}}, "Duration", 13},
      {{{"EventRaw", 6}}, "EventRaw", 8},
      {{{"Event", 2}}, "Event", 7},
      {{{"Flags", 2}}, "Flags", 20},
      {{{"GraceTime", 3}}, "GraceTime", 10},
      {{{"GrpCPUs", 6}}, "GrpCPUs", 8},
      {{{"GrpCPUMins", 7}}, "GrpCPUMins", 11},
      {{{"GrpTRES", 7}}, "GrpTRES", 13},
      {{{"GrpTRESMins", 7}}, "GrpTRESMins", 13},
      {{{"GrpTRESRunMins", 7}}, "GrpTRESRunMins", 13},
      {{{"GrpJobs", 4}}, "GrpJobs", 7},
      {{{"GrpMemory", 4}}, "GrpMem", 7},
      {{{"GrpNodes", 4}}, "GrpNodes", 8},
      {{{"GrpSubmitJobs", 4}}, "GrpSubmit", 9},
      {{{"GrpWall", 4}}, "GrpWall", 11},
      {{{"ID", 2}}, "ID", 6},
      {{{"MaxCPUMinsPerJob", 7}}, "MaxCPUMins", 11},
      {{{"MaxCPUsPerJob", 7}}, "MaxCPUs", 8},
      {{{"MaxTRES", 7}, {"MaxTRESPerJob", 11}}, "MaxTRES", 13},
      {{{"MaxTRESPerNode", 11}}, "MaxTRESPerNode", 14},
      {{{"MaxTRESMinsPerJob", 8}}, "MaxTRESMins", 13},
      {{{"MaxTRESRunMinsPerAccount", 18}, {"MaxTRESRunMinsPerAcct", 18}, {"MaxTRESRunMinsPA", 15}},
       "MaxTRESRunMinsPA", 15},
      {{{"MaxTRESRunMinsPerUser", 8}, {"MaxTRESRunMinsPU", 8}}, "MaxTRESRunMinsPU", 15},
      {{{"MaxTRESPerAccount", 11}, {"MaxTRESPerAcct", 11}, {"MaxTRESPA", 9}}, "MaxTRESPA", 13},
      {{{"MaxTRESPerUser", 11}, {"MaxTRESPU", 9}}, "MaxTRESPU", 13},
      {{{"MaxJobs", 4}}, "MaxJobs", 7},
      {{{"MaxJobsPerAccount", 11}, {"MaxJobsPerAcct", 11}, {"MaxJobsPA", 9}}, "MaxJobsPA", 9},
      {{{"MaxJobsPerUser", 11}, {"MaxJobsPU", 9}}, "MaxJobsPU", 9},
      {{{"MaxNodesPerJob", 4}}, "MaxNodes", 8},
      {{{"MaxSubmitJobs", 4}}, "MaxSubmit", 9},
      {{{"MaxSubmitJobsPerAccount", 17}, {"MaxSubmitJobsPerAcct", 17}, {"MaxSubmitJobsPA", 15}, {"MaxSubmitPA", 11}},
       "MaxSubmitPA", 11},
      {{{"MaxSubmitJobsPerUser", 10}, {"MaxSubmitJobsPU", 10}, {"MaxSubmitPU", 6}}, "MaxSubmitPU", 11},
      {{{"MaxWallDurationPerJob", 4}}, "MaxWall", 11},
      {{{"MinTRESPerJob", 7}}, "MinTRES", 13},
      {{{"Name", 2}}, "Name", 10},
      {{{"NodeNames", 5}}, "NodeName", -15},
      {{{"Organization", 1}}, "Org", 20},
      {{{"ParentID", 7}}, "ParentID", 8},
      {{{"ParentName", 7}}, "ParentName", 10},
      {{{"Partition", 4}}, "Partition", 10},
      {{{"PreemptMode", 8}}, "PreemptMode", 11},
      {{{"Preempt", 7}}, "Preempt", 10},
      {{{"PreemptExemptTime", 8}}, "PreemptExemptTime", 19},
      {{{"Priority", 3}}, "Priority", 10},
      {{{"QOSLevel", 3}}, "QOS", 20},
      {{{"Reason", 1}}, "Reason", 30},
      {{{"RPC", 1}}, "RPC", 5},
      {{{"Share", 1}, {"FairShare", 2}}, "Share", 9},
      {{{"StateRaw", 6}}, "StateRaw", 8},
      {{{"State", 1}}, "State", 6},
      {{{"TimeEnd", 6}, {"End", 2}}, "TimeEnd", 19},
      {{{"TimeStart", 7}, {"Start", 3}}, "TimeStart", 19},
      {{{"Type", 2}}, "Type", 8},
      {{{"UsageFactor", 6}}, "UsageFactor", 11},
      {{{"UsageThreshold", 6}}, "UsageThres", 10},
      {{{"User", 1}}, "User", 10},
  };
  return kFields;
}

constexpr int kMaxWidth = 4096;

// "name%N" words into columns; Slurm's "Unknown field 'x'" (exit 1) otherwise.
Result<std::vector<SacctColumn>> columns(const std::vector<std::string>& words, bool tree) {
  std::vector<SacctColumn> out;
  for (const auto& word : words) {
    std::string name = word;
    int width = 0;
    if (size_t pct = name.find('%'); pct != std::string::npos) {
      width = std::atoi(name.c_str() + pct + 1);
      width = std::clamp(width, -kMaxWidth, kMaxWidth);  // the controller prints: no width it would choke on
      name.resize(pct);
    }
    const Field* hit = nullptr;
    for (const auto& f : fields()) {
      for (const auto& [n, min] : f.names)
        if (key_is(name, n, min)) hit = &f;
      if (hit) break;
    }
    if (!hit) return invalid("Unknown field '" + name + "'\n");
    int w = width ? width : (tree && hit->header == "Account" ? -20 : hit->width);
    out.push_back({hit->header, w});
  }
  return out;
}

std::vector<std::string> split_format(std::string_view list) {
  std::vector<std::string> out;
  for (auto p : split(list, ',')) out.emplace_back(p);
  return out;
}

std::string count_cell(int64_t v) { return v == kNoLimit ? "" : std::to_string(v); }
std::string wall_cell(int64_t v) { return v == kNoLimit ? "" : format_wall_minutes(v); }

std::string sorted_comma_list(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return comma_list(names);
}

int depth_of(const AcctModel& m, const AcctAssoc& a) {
  int d = a.user.empty() ? 0 : 1;
  const AcctAssoc* at = a.user.empty() ? &a : m.account_assoc(a.cluster, a.account);
  for (int i = 0; at && !at->parent.empty() && i < 64; ++i) {
    ++d;
    at = m.account_assoc(at->cluster, at->parent);
  }
  return d;
}

// A field of an association as shown (`a` from AcctModel::inherited, once per row).
std::string assoc_value(const AcctModel& m, const AcctAssoc& a, std::string_view h, bool tree) {
  const AcctLimits& l = a.limits;
  if (h == "Cluster") return a.cluster;
  if (h == "Account") return tree ? std::string(static_cast<size_t>(depth_of(m, a)), ' ') + a.account : a.account;
  if (h == "User") return a.user;
  if (h == "Partition") return a.partition;
  if (h == "Share") return a.shares == kSharesParent ? "parent" : std::to_string(a.shares);
  if (h == "Priority") return count_cell(a.priority);
  if (h == "GrpJobs") return count_cell(l.grp_jobs);
  if (h == "GrpSubmit") return count_cell(l.grp_submit);
  if (h == "GrpWall") return wall_cell(l.grp_wall);
  if (h == "GrpTRES") return format_tres(l.grp_tres);
  if (h == "GrpTRESMins") return format_tres(l.grp_tres_mins);
  if (h == "GrpTRESRunMins") return format_tres(l.grp_tres_run_mins);
  if (h == "MaxJobs") return count_cell(l.max_jobs);
  if (h == "MaxSubmit") return count_cell(l.max_submit);
  if (h == "MaxWall") return wall_cell(l.max_wall);
  if (h == "MaxTRES") return format_tres(l.max_tres);
  if (h == "MaxTRESPerNode") return format_tres(l.max_tres_per_node);
  if (h == "MaxTRESMins") return format_tres(l.max_tres_mins);
  if (h == "QOS") return sorted_comma_list(a.qos);
  if (h == "Def QOS") return a.def_qos;
  if (h == "ParentName") return a.user.empty() ? a.parent : "";
  if (h == "ID") return std::to_string(a.id);
  if (h == "ParentID") {
    const AcctAssoc* p = a.user.empty() ? m.account_assoc(a.cluster, a.parent) : m.account_assoc(a.cluster, a.account);
    return p ? std::to_string(p->id) : "";
  }
  if (h == "MaxCPUs" || h == "MaxCPUMins" || h == "GrpCPUs" || h == "GrpCPUMins") {
    const TresList& t = h == "MaxCPUs" ? l.max_tres : h == "GrpCPUs" ? l.grp_tres
                        : h == "MaxCPUMins"                        ? l.max_tres_mins
                                                                   : l.grp_tres_mins;
    for (const auto& [n, v] : t)
      if (n == "cpu") return std::to_string(v);
    return "";
  }
  if (h == "MaxNodes" || h == "GrpNodes" || h == "GrpMem") {
    const TresList& t = h == "MaxNodes" ? l.max_tres : l.grp_tres;
    for (const auto& [n, v] : t)
      if (n == (h == "GrpMem" ? "mem" : "node")) return std::to_string(v);
    return "";
  }
  return "";
}

// Associations in Slurm's tree order: under each account its users, then its sub-accounts,
// each by name.
void tree_order(const AcctModel& m, const std::string& cluster, const std::string& account,
                std::vector<const AcctAssoc*>& out, int depth) {
  const AcctAssoc* self = m.account_assoc(cluster, account);
  if (!self || depth > 64) return;
  out.push_back(self);
  std::vector<const AcctAssoc*> users, subs;
  for (const auto& [id, a] : m.assocs) {
    if (a.cluster != cluster) continue;
    if (!a.user.empty() && a.account == account) users.push_back(&a);
    else if (a.user.empty() && a.parent == account && a.account != account) subs.push_back(&a);
  }
  auto by_name = [](const AcctAssoc* x, const AcctAssoc* y) {
    return x->user != y->user ? x->user < y->user : x->partition < y->partition;
  };
  std::sort(users.begin(), users.end(), by_name);
  std::sort(subs.begin(), subs.end(), [](const AcctAssoc* x, const AcctAssoc* y) { return x->account < y->account; });
  for (const auto* u : users) out.push_back(u);
  for (const auto* s : subs) tree_order(m, cluster, s->account, out, depth + 1);
}

std::vector<const AcctAssoc*> all_assocs(const AcctModel& m) {
  std::vector<const AcctAssoc*> out;
  for (const auto& [name, c] : m.clusters) tree_order(m, name, "root", out, 0);
  return out;
}

bool assoc_matches(const AssocCond& c, const AcctAssoc& a) {
  auto ok = [](const std::vector<std::string>& want, const std::string& v) { return want.empty() || contains(want, v); };
  return ok(c.clusters, a.cluster) && ok(c.accounts, a.account) && ok(c.partitions, a.partition) &&
         ok(c.parents, a.parent) && (c.users.empty() || (!a.user.empty() && contains(c.users, a.user)));
}

struct Printer {
  Ctx& cx;
  std::vector<SacctColumn> cols;
  SacctStyle style;
  bool start(const std::vector<std::string>& format, bool tree) {
    auto c = columns(format, tree);
    if (!c) {
      cx.io.fail(c.status().message());
      return false;
    }
    cols = *c;
    style.mode = cx.options.parsable2 ? SacctPrint::kParsable2
                 : cx.options.parsable ? SacctPrint::kParsable
                                       : SacctPrint::kFixed;
    if (!cx.options.noheader) cx.io.out += sacct_header(cols, style);
    return true;
  }
  void row(const std::function<std::string(std::string_view)>& value) { cx.io.out += sacct_line(cols, style, value); }
};

void list_assoc(Ctx& cx, const std::vector<Word>& words) {
  AssocCond cond;
  for (const auto& w : words) {
    if (!w.has_value && key_is(w.key, "where", 5)) continue;
    if (!set_assoc_cond(cond, w)) cx.io.fail(" Unknown condition: " + w.key + (w.has_value ? "=" + w.value : "") + "\n");
  }
  if (cx.io.rc) return;
  std::vector<std::string> format = cond.formats;
  if (format.empty()) {
    format = split_format("Cluster,Account,User,Part");
    if (!cond.wop)
      for (auto& f : split_format("Share,Priority,GrpJ,GrpTRES,GrpS,GrpWall,GrpTRESMins,MaxJ,MaxTRES,MaxTRESPerN,MaxS,"
                                  "MaxW,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins"))
        format.push_back(f);
  }
  Printer p{cx, {}, {}};
  if (!p.start(format, cond.tree)) return;
  cx.listed.kind = "associations";
  for (const auto* a : all_assocs(cx.model)) {
    if (!assoc_matches(cond, *a)) continue;
    if (cond.only_defaults && !a->user.empty()) {
      auto u = cx.model.users.find(a->user);
      if (u == cx.model.users.end() || u->second.default_account != a->account) continue;
    }
    AcctAssoc shown = cx.model.inherited(*a);
    cx.list_assoc_record(shown);
    p.row([&](std::string_view h) { return assoc_value(cx.model, shown, h, cond.tree); });
  }
}

void list_user(Ctx& cx, const std::vector<Word>& words) {
  AssocCond cond;
  std::vector<std::string> names, def_accts;
  std::optional<AdminLevel> admin;
  bool with_assoc = cx.options.with_assoc, with_coord = false;
  for (const auto& w : words) {
    if (!w.has_value && key_is(w.key, "where", 5)) continue;
    if (!w.has_value && key_is(w.key, "WithAssoc", 5)) with_assoc = true;
    else if (!w.has_value && key_is(w.key, "WithCoordinators", 5)) with_coord = true;
    else if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Users", 1))
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
    else if (key_is(w.key, "DefaultAccount", 8))
      for (auto& n : name_list(w.value)) def_accts.push_back(n);
    else if (key_is(w.key, "AdminLevel", 2)) admin = parse_admin_level(unquoted(w.value));
    else if (!set_assoc_cond(cond, w))
      cx.io.fail(" Unknown condition: " + w.key + "=" + w.value + "\n Use keyword 'set' to modify value\n");
  }
  if (cx.io.rc) return;
  std::vector<std::string> format = cond.formats;
  if (format.empty()) {
    format = split_format("U,DefaultA,Ad");
    if (with_coord) format.push_back("Coord");
    if (with_assoc)
      for (auto& f : split_format("Cl,Acc,Part,Share,Priority,MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS"))
        format.push_back(f);
  }
  Printer p{cx, {}, {}};
  if (!p.start(format, false)) return;
  cx.listed.kind = "users";
  cx.listed.with_assoc = with_assoc;
  cx.listed.with_coord = with_coord;
  std::vector<uint32_t> order = lft_order(cx.model);
  for (const auto& kv : cx.model.users) {
    const std::string& name = kv.first;
    const AcctUser& u = kv.second;
    if (!names.empty() && !contains(names, name)) continue;
    if (!def_accts.empty() && !contains(def_accts, u.default_account)) continue;
    if (admin && u.admin != *admin) continue;
    auto user_value = [&](std::string_view h) -> std::string {
      if (h == "User") return u.name;
      if (h == "Def Acct") return u.default_account;
      if (h == "Admin") return std::string(admin_level_name(u.admin));
      if (h == "Coord Accounts") {
        std::vector<std::string> accts;
        for (const auto& [an, a] : cx.model.accounts)
          if (contains(a.coordinators, name)) accts.push_back(an);
        return sorted_comma_list(accts);
      }
      return "";
    };
    auto record_user = [&] {
      if (!cx.options.records) return;
      cx.listed.records.users[name] = u;
      if (with_coord) cx.listed.coords[name] = user_coordinates(cx.model, name);
    };
    if (!with_assoc) {
      record_user();
      p.row(user_value);
      continue;
    }
    std::vector<const AcctAssoc*> mine;
    for (uint32_t id : order) {
      const AcctAssoc& a = cx.model.assocs.at(id);
      if (a.user == name && assoc_matches(cond, a)) mine.push_back(&a);
    }
    if (!mine.empty()) record_user();  // as the text: a user none of whose associations match is not listed
    for (const auto* a : mine) {
      AcctAssoc shown = cx.model.inherited(*a);
      cx.list_assoc_record(shown);
      p.row([&](std::string_view h) {
        std::string v = user_value(h);
        return v.empty() && h != "Def Acct" && h != "Coord Accounts" ? assoc_value(cx.model, shown, h, false) : v;
      });
    }
  }
}

void list_account(Ctx& cx, const std::vector<Word>& words) {
  AssocCond cond;
  std::vector<std::string> names, descrs, orgs;
  bool with_assoc = cx.options.with_assoc, with_coord = false;
  for (const auto& w : words) {
    if (!w.has_value && key_is(w.key, "where", 5)) continue;
    if (!w.has_value && key_is(w.key, "WithAssoc", 5)) with_assoc = true;
    else if (!w.has_value && key_is(w.key, "WithCoordinators", 5)) with_coord = true;
    else if (!w.has_value && key_is(w.key, "WithDeleted", 5)) continue;
    else if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Accounts", 1) || key_is(w.key, "Acct", 4))
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
    else if (key_is(w.key, "Descriptions", 1))
      for (auto& n : name_list(w.value)) descrs.push_back(n);
    else if (key_is(w.key, "Organizations", 1))
      for (auto& n : name_list(w.value)) orgs.push_back(n);
    else if (!set_assoc_cond(cond, w))
      cx.io.fail(" Unknown condition: " + w.key + "=" + w.value + "\n Use keyword 'set' to modify value\n");
  }
  if (cx.io.rc) return;
  std::vector<std::string> format = cond.formats;
  if (format.empty()) {
    format = split_format("Acc,Des,O");
    if (with_assoc)
      for (auto& f : split_format("Cl,ParentN,U,Share,Priority,GrpJ,GrpN,GrpCPUs,GrpMEM,GrpS,GrpWall,GrpCPUMins,MaxJ,"
                                  "MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS"))
        format.push_back(f);
    if (with_coord) format.push_back("Coord");
  }
  Printer p{cx, {}, {}};
  if (!p.start(format, false)) return;
  cx.listed.kind = "accounts";
  cx.listed.with_assoc = with_assoc;
  cx.listed.with_coord = with_coord;
  std::vector<const AcctAssoc*> tree = with_assoc ? all_assocs(cx.model) : std::vector<const AcctAssoc*>{};
  for (const auto& kv : cx.model.accounts) {
    const std::string& name = kv.first;
    const AcctAccount& a = kv.second;
    if (!names.empty() && !contains(names, name)) continue;
    if (!descrs.empty() && !contains(descrs, a.description)) continue;
    if (!orgs.empty() && !contains(orgs, a.organization)) continue;
    auto acct_value = [&](std::string_view h) -> std::string {
      if (h == "Account") return a.name;
      if (h == "Descr") return a.description;
      if (h == "Org") return a.organization;
      if (h == "Coord Accounts") return sorted_comma_list(a.coordinators);
      return "";
    };
    if (cx.options.records) {
      cx.listed.records.accounts[name] = a;
      if (with_coord) cx.listed.coords[name] = account_coordinators(cx.model, name);
    }
    if (!with_assoc) {
      p.row(acct_value);
      continue;
    }
    for (const auto* as : tree) {
      if (as->account != name || !assoc_matches(cond, *as)) continue;
      AcctAssoc shown = cx.model.inherited(*as);
      cx.list_assoc_record(shown);
      p.row([&](std::string_view h) {
        std::string v = acct_value(h);
        return h == "Account" || h == "Descr" || h == "Org" || h == "Coord Accounts" ? v
                                                                                    : assoc_value(cx.model, shown, h, false);
      });
    }
  }
}

void list_cluster(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> names, format;
  bool wolimits = false;
  for (const auto& w : words) {
    if (!w.has_value && key_is(w.key, "where", 5)) continue;
    if (!w.has_value && key_is(w.key, "WOLimits", 3)) wolimits = true;
    else if (w.has_value && key_is(w.key, "Format", 1))
      for (auto& f : split_format(unquoted(w.value))) format.push_back(f);
    else if (!w.has_value || key_is(w.key, "Names", 1) || key_is(w.key, "Clusters", 1))
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
    else cx.io.fail(" Unknown condition: " + w.key + "=" + w.value + "\n");
  }
  if (cx.io.rc) return;
  if (format.empty()) {
    format = split_format("Cl,Controlh,Controlp,RPC");
    if (!wolimits)
      for (auto& f : split_format("Fa,GrpJ,GrpTRES,GrpS,MaxJ,MaxTRES,MaxS,MaxW,QOS,DefaultQOS")) format.push_back(f);
  }
  Printer p{cx, {}, {}};
  if (!p.start(format, false)) return;
  cx.listed.kind = "clusters";
  for (const auto& kv : cx.model.clusters) {
    const std::string& name = kv.first;
    const AcctCluster& c = kv.second;
    if (!names.empty() && !contains(names, name)) continue;
    const AcctAssoc* root = cx.model.account_assoc(name, "root");
    AcctAssoc shown = root ? cx.model.inherited(*root) : AcctAssoc{};
    if (cx.options.records) cx.listed.records.clusters[name] = c;
    if (root) cx.list_assoc_record(shown);
    p.row([&](std::string_view h) -> std::string {
      if (h == "Cluster") return c.name;
      if (h == "ControlHost") return c.control_host;
      if (h == "ControlPort") return c.control_port ? std::to_string(c.control_port) : "0";
      if (h == "RPC") return std::to_string(c.rpc ? c.rpc : 9728);
      return root ? assoc_value(cx.model, shown, h, false) : "";
    });
  }
}

void list_tres(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> format;
  for (const auto& w : words)
    if (w.has_value && key_is(w.key, "Format", 1))
      for (auto& f : split_format(unquoted(w.value))) format.push_back(f);
  if (format.empty()) format = split_format("Type,Name%15,ID");
  Printer p{cx, {}, {}};
  if (!p.start(format, false)) return;
  cx.listed.kind = "tres";
  struct Row {
    const char *type, *name;
    int id;
  };
  static const Row kRows[] = {{"cpu", "", 1},       {"mem", "", 2},     {"energy", "", 3}, {"node", "", 4},
                              {"billing", "", 5},   {"fs", "disk", 6},  {"vmem", "", 7},   {"pages", "", 8},
                              {"gres", "gpu", 1001}};
  for (const auto& r : kRows)
    p.row([&](std::string_view h) -> std::string {
      if (h == "Type") return r.type;
      if (h == "Name") return r.name;
      if (h == "ID") return std::to_string(r.id);
      return "";
    });
}

// slurmdbd's lineage of `a`.
std::string lineage(const AcctModel& m, const AcctAssoc& a) {
  std::vector<std::string> path;
  const AcctAssoc* at = a.user.empty() ? &a : m.parent_of(a);
  for (int i = 0; at && !at->parent.empty() && i < 64; ++i, at = m.parent_of(*at)) path.push_back(at->account);
  std::string out = "/";
  for (auto it = path.rbegin(); it != path.rend(); ++it) out += *it + "/";
  if (!a.user.empty()) out += "0-" + a.user + "/";
  if (!a.partition.empty()) out += a.partition + "/";
  return out;
}

bool is_default_assoc(const AcctModel& m, const AcctAssoc& a) {
  if (a.user.empty()) return !a.parent.empty();
  auto u = m.users.find(a.user);
  return u != m.users.end() && u->second.default_account == a.account;
}

}  // namespace

void Ctx::list_assoc_record(const AcctAssoc& shown) {
  if (!options.records) return;
  AcctAssoc& a = listed.records.assocs[shown.id] = shown;
  auto id_of = [&](const std::string& q) {
    auto it = model.qos.find(q);
    return it == model.qos.end() ? UINT32_MAX : it->second.id;
  };
  std::stable_sort(a.qos.begin(), a.qos.end(), [&](const std::string& x, const std::string& y) { return id_of(x) < id_of(y); });
  listed.assoc_order.push_back(shown.id);
  listed.facts[shown.id] = {lineage(model, shown), is_default_assoc(model, shown)};
}

void show_it(Ctx& cx, const std::vector<std::string>& args) {
  if (args.size() < 2) {
    return cx.io.fail(
        "No valid entity in list command\nInput line must include \"Account\", \"Association\", \"Cluster\", "
        "\"Configuration\",\n\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n"
        "\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n");
  }
  const std::string& e = args[1];
  auto words = parse_words(args, 2);
  if (key_is(e, "Accounts", 2) || key_is(e, "Acct", 4)) return list_account(cx, words);
  if (key_is(e, "Associations", 2)) return list_assoc(cx, words);
  if (key_is(e, "Clusters", 2)) return list_cluster(cx, words);
  if (key_is(e, "QOS", 1)) return list_qos(cx, words);
  if (key_is(e, "Users", 1)) return list_user(cx, words);
  if (key_is(e, "tres", 2)) return list_tres(cx, words);
  if (key_is(e, "Events", 1)) return list_events(cx, words);
  show_it(cx, {args[0]});
}

// Shared with acctmgr_qos.cpp.
bool print_rows(Ctx& cx, const std::vector<std::string>& format, const std::vector<std::function<std::string(std::string_view)>>& rows) {
  Printer p{cx, {}, {}};
  if (!p.start(format, false)) return false;
  for (const auto& r : rows) p.row(r);
  return true;
}

}  // namespace hq::acctmgr
