// sacctmgr's words, association conditions and settings (see acctmgr_words.hpp).
#include "core/acctmgr_words.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace hq::acctmgr {
namespace {

void line(std::string& out, std::string_view label, const std::string& value) {
  out += "  " + std::string(label) + "= " + value + "\n";
}

std::string count_text(int64_t v) { return v == kNoLimit ? "NONE" : std::to_string(v); }

}  // namespace

std::string unquoted(std::string_view v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    v = v.substr(1, v.size() - 2);
  return std::string(v);
}

Result<int64_t> count_setting(const Word& w, std::string_view what) {
  std::string v = unquoted(w.value);
  if (!v.empty() && v[0] == '-') return kNoLimit;
  auto n = parse_int(v, 0, UINT32_MAX - 2);
  if (!n) return value_warning("sacctmgr: error: Invalid value for " + std::string(what) + " (" + v + ")\n");
  return *n;
}

Result<TresList> tres_setting(const Word& w) {
  auto t = parse_tres_list(unquoted(w.value));
  if (!t) return invalid("sacctmgr: error: " + t.status().message() + "\n");
  return t;
}

Result<int64_t> wall_setting(const Word& w, std::string_view what) {
  auto v = parse_wall_minutes(unquoted(w.value));
  if (!v) return invalid(" Bad " + std::string(what) + " time format: " + w.key + "=" + w.value + "\n");
  return v;
}

std::vector<Word> parse_words(const std::vector<std::string>& args, size_t from) {
  std::vector<Word> out;
  for (size_t i = from; i < args.size(); ++i) {
    const std::string& a = args[i];
    Word w;
    size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) {
      w.key = a;
    } else {
      size_t key_end = eq;
      if (a[eq - 1] == '+' || a[eq - 1] == '-') {
        w.op = a[eq - 1];
        key_end = eq - 1;
      }
      w.key = a.substr(0, key_end);
      w.value = a.substr(eq + 1);
      w.has_value = true;
    }
    out.push_back(std::move(w));
  }
  return out;
}

bool key_is(std::string_view word, std::string_view name, size_t min) {
  return word.size() >= min && word.size() <= name.size() && iequals(word, name.substr(0, word.size()));
}

std::vector<std::string> name_list(std::string_view value, bool keep_case) {
  std::vector<std::string> out;
  for (auto& n : split_list(unquoted(value))) {
    std::string name(trim(n));
    if (!keep_case) name = to_lower(name);
    if (!name.empty() && !contains(out, name)) out.push_back(name);
  }
  return out;
}

bool contains(const std::vector<std::string>& list, std::string_view v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

std::string comma_list(const std::vector<std::string>& list) { return comma_joined(list); }

bool set_assoc_cond(AssocCond& c, const Word& w) {
  const std::string& k = w.key;
  auto add = [&](std::vector<std::string>& to) {
    for (auto& n : name_list(w.value)) to.push_back(n);
    c.any = true;
    return true;
  };
  if (!w.has_value) {
    if (key_is(k, "Tree", 4)) return c.tree = true;
    if (key_is(k, "OnlyDefaults", 4)) return c.only_defaults = true;
    if (key_is(k, "WithSubAccounts", 5)) return c.with_subaccounts = true;
    if (key_is(k, "WOLimits", 3)) return c.wolimits = true;
    if (key_is(k, "WOPLimits", 4) || key_is(k, "WOPInfo", 4)) return c.wop = true;
    if (key_is(k, "WithDeleted", 5) || key_is(k, "WithRawQOSLevel", 5)) return true;
    return false;
  }
  if (key_is(k, "Format", 1)) {
    for (auto& f : split_list(unquoted(w.value))) c.formats.push_back(std::string(trim(f)));
    return true;
  }
  if (key_is(k, "Accounts", 2) || key_is(k, "Acct", 4)) return add(c.accounts);
  if (key_is(k, "Clusters", 1)) return add(c.clusters);
  if (key_is(k, "Partitions", 3)) return add(c.partitions);
  if (key_is(k, "Parents", 4)) return add(c.parents);
  if (key_is(k, "QosLevel", 1)) return add(c.qos);
  if (key_is(k, "Users", 1)) return add(c.users);
  return false;
}

bool AssocSet::any() const {
  return shares || grp_jobs || grp_submit || grp_wall || max_jobs || max_submit || max_wall || priority || grp_tres ||
         grp_tres_mins || grp_tres_run_mins || max_tres || max_tres_per_node || max_tres_mins || qos || def_qos ||
         parent;
}

Result<bool> set_assoc_rec(AssocSet& s, const Word& w, const AcctModel& m) {
  if (!w.has_value) return false;
  const std::string& k = w.key;
  auto count = [&](std::optional<int64_t>& to, std::string_view what) { return take(to, count_setting(w, what)); };
  auto tres = [&](std::optional<TresList>& to) { return take(to, tres_setting(w)); };
  auto wall = [&](std::optional<int64_t>& to, std::string_view what) { return take(to, wall_setting(w, what)); };
  if (key_is(k, "DefaultQOS", 8)) {
    std::string q = to_lower(unquoted(w.value));
    if (q != "-1" && !q.empty() && !m.qos.count(q))
      return invalid("You gave a bad default qos '" + q + "'.  Use 'list qos' to get complete list.\n");
    s.def_qos = q == "-1" ? "" : q;
    return true;
  }
  if (key_is(k, "FairShare", 1) || key_is(k, "Shares", 1)) {
    if (iequals(unquoted(w.value), "parent")) {
      s.shares = kSharesParent;
      return true;
    }
    return count(s.shares, "FairShare");
  }
  if (key_is(k, "GrpJobs", 4)) return count(s.grp_jobs, "GrpJobs");
  if (key_is(k, "GrpSubmitJobs", 4)) return count(s.grp_submit, "GrpSubmitJobs");
  if (key_is(k, "GrpTRES", 7)) return tres(s.grp_tres);
  if (key_is(k, "GrpTRESMins", 8)) return tres(s.grp_tres_mins);
  if (key_is(k, "GrpTRESRunMins", 8)) return tres(s.grp_tres_run_mins);
  if (key_is(k, "GrpWall", 4)) return wall(s.grp_wall, "GrpWall");
  if (key_is(k, "MaxJobs", 4)) return count(s.max_jobs, "MaxJobs");
  if (key_is(k, "MaxSubmitJobs", 4)) return count(s.max_submit, "MaxSubmitJobs");
  if (key_is(k, "MaxTRESPerJob", 7)) return tres(s.max_tres);
  if (key_is(k, "MaxTRESPerNode", 11)) return tres(s.max_tres_per_node);
  if (key_is(k, "MaxTRESMinsPerJob", 8)) return tres(s.max_tres_mins);
  if (key_is(k, "MaxWallDurationPerJob", 4)) return wall(s.max_wall, "MaxWall");
  if (key_is(k, "Parent", 2)) {
    s.parent = to_lower(unquoted(w.value));
    return true;
  }
  if (key_is(k, "Priority", 2)) return count(s.priority, "Priority");
  if (key_is(k, "QosLevel", 1)) {
    std::vector<std::string> names = name_list(w.value);
    for (const auto& q : names)
      if (q != "-1" && !m.qos.count(q)) return invalid(" Unknown QOS name: " + q + "\n");
    std::erase(names, "-1");
    s.qos = names;
    s.qos_op = w.op;
    return true;
  }
  return false;
}

void apply_assoc_set(AcctAssoc& a, const AssocSet& s, const AcctModel& m) {
  if (s.shares) a.shares = *s.shares == kNoLimit ? 1 : *s.shares;
  put_setting(a.priority, s.priority);
  put_setting(a.limits.grp_jobs, s.grp_jobs);
  put_setting(a.limits.grp_submit, s.grp_submit);
  put_setting(a.limits.grp_wall, s.grp_wall);
  put_setting(a.limits.max_jobs, s.max_jobs);
  put_setting(a.limits.max_submit, s.max_submit);
  put_setting(a.limits.max_wall, s.max_wall);
  put_setting(a.limits.grp_tres, s.grp_tres);
  put_setting(a.limits.grp_tres_mins, s.grp_tres_mins);
  put_setting(a.limits.grp_tres_run_mins, s.grp_tres_run_mins);
  put_setting(a.limits.max_tres, s.max_tres);
  put_setting(a.limits.max_tres_per_node, s.max_tres_per_node);
  put_setting(a.limits.max_tres_mins, s.max_tres_mins);
  if (s.def_qos) a.def_qos = *s.def_qos;
  if (s.qos) {
    if (s.qos_op == 0) {
      a.qos = *s.qos;
    } else {
      if (a.qos.empty()) a.qos = m.effective_qos(a);  // += and -= work on the list it had from above
      for (const auto& q : *s.qos) {
        std::erase(a.qos, q);
        if (s.qos_op == '+') a.qos.push_back(q);
      }
    }
    std::sort(a.qos.begin(), a.qos.end());
  }
}

std::string print_assoc_set(const AssocSet& s) {
  std::string out;
  if (s.shares) line(out, "Fairshare     ", *s.shares == kSharesParent ? "parent" : count_text(*s.shares));
  if (s.grp_jobs) line(out, "GrpJobs       ", count_text(*s.grp_jobs));
  if (s.grp_submit) line(out, "GrpSubmitJobs ", count_text(*s.grp_submit));
  if (s.grp_tres) line(out, "GrpTRES       ", format_tres(*s.grp_tres));
  if (s.grp_tres_mins) line(out, "GrpTRESMins   ", format_tres(*s.grp_tres_mins));
  if (s.grp_tres_run_mins) line(out, "GrpTRESRunMins", format_tres(*s.grp_tres_run_mins));
  if (s.grp_wall) line(out, "GrpWall       ", *s.grp_wall == kNoLimit ? "NONE" : format_wall_minutes(*s.grp_wall));
  if (s.max_jobs) line(out, "MaxJobs       ", count_text(*s.max_jobs));
  if (s.max_submit) line(out, "MaxSubmitJobs ", count_text(*s.max_submit));
  if (s.max_tres) line(out, "MaxTRES       ", format_tres(*s.max_tres));
  if (s.max_tres_per_node) line(out, "MaxTRESPerNode", format_tres(*s.max_tres_per_node));
  if (s.max_tres_mins) line(out, "MaxTRESMins   ", format_tres(*s.max_tres_mins));
  if (s.max_wall) line(out, "MaxWall       ", *s.max_wall == kNoLimit ? "NONE" : format_wall_minutes(*s.max_wall));
  if (s.parent) line(out, "Parent        ", *s.parent);
  if (s.priority) line(out, "Priority      ", count_text(*s.priority));
  if (s.qos) {
    std::string q;
    for (const auto& n : *s.qos) q += (q.empty() ? "" : ",") + std::string(s.qos_op ? std::string(1, s.qos_op) : "") + n;
    line(out, "QOS           ", q);
  }
  if (s.def_qos) line(out, "DefQOS        ", s.def_qos->empty() ? "NONE" : *s.def_qos);
  return out;
}

}  // namespace hq::acctmgr
