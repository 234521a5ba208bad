// sacctmgr's QOS: add, modify, delete and list, with Slurm's keys (qos_functions.c _set_rec),
// settings block (print_qos_limits) and list columns.
#include <algorithm>
#include <cstdio>

#include "core/acctmgr_internal.hpp"
#include "core/units.hpp"

namespace hq::acctmgr {
namespace {

constexpr std::string_view kQosFlags[] = {"DenyOnLimit",       "EnforceUsageThreshold", "NoDecay",
                                          "NoReserve",         "OverPartQOS",           "PartitionMaxNodes",
                                          "PartitionMinNodes", "PartitionTimeLimit",    "RequiresReservation",
                                          "UsageFactorSafe",   "Relative"};

struct QosSet {
  std::optional<std::string> description, preempt_mode;
  std::optional<int64_t> priority, grace, grp_jobs, grp_submit, grp_wall, max_wall, max_jobs_pu, max_jobs_pa,
      max_submit_pu, max_submit_pa;
  std::optional<double> usage_factor, usage_threshold;
  std::optional<std::vector<std::string>> flags, preempt;
  std::optional<TresList> grp_tres, grp_tres_mins, grp_tres_run_mins, max_tres, max_tres_per_node, max_tres_mins,
      max_tres_pu, max_tres_pa, min_tres, max_tres_run_mins_pu, max_tres_run_mins_pa;
  bool any = false;
};

Result<bool> set_qos(QosSet& s, const Word& w, const AcctModel& m) {
  const std::string& k = w.key;
  std::string v = unquoted(w.value);
  auto mark = [&](Result<bool> r) {
    if (r && *r) s.any = true;
    return r;
  };
  auto count = [&](std::optional<int64_t>& to, std::string_view what) { return mark(take(to, count_setting(w, what))); };
  auto tres = [&](std::optional<TresList>& to) { return mark(take(to, tres_setting(w))); };
  auto wall = [&](std::optional<int64_t>& to, std::string_view what) { return mark(take(to, wall_setting(w, what))); };
  auto real = [&](std::optional<double>& to, std::string_view what) -> Result<bool> {
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end) return value_warning("sacctmgr: error: Invalid value for " + std::string(what) + " (" + v + ")\n");
    to = d;
    return s.any = true;
  };
  if (key_is(k, "Description", 1)) {
    s.description = to_lower(v);
    return s.any = true;
  }
  if (key_is(k, "Flags", 2)) {
    std::vector<std::string> flags;
    for (const auto& f : name_list(v, true)) {
      auto hit = std::find_if(std::begin(kQosFlags), std::end(kQosFlags), [&](std::string_view x) { return iequals(x, f); });
      if (hit == std::end(kQosFlags)) {
        std::string valid;
        for (auto x : kQosFlags) valid += (valid.empty() ? "" : ",") + std::string(x);
        return invalid(" Unknown QOS flag used in:\n  '" + v + "'\n Valid QOS flags are\n  '" + valid + "'\n");
      }
      flags.emplace_back(*hit);
    }
    s.flags = flags;
    return s.any = true;
  }
  if (key_is(k, "GraceTime", 3)) return count(s.grace, "GraceTime");
  if (key_is(k, "GrpJobs", 4)) return count(s.grp_jobs, "GrpJobs");
  if (key_is(k, "GrpSubmitJobs", 4)) return count(s.grp_submit, "GrpSubmitJobs");
  if (key_is(k, "GrpTRES", 7)) return tres(s.grp_tres);
  if (key_is(k, "GrpTRESMins", 8)) return tres(s.grp_tres_mins);
  if (key_is(k, "GrpTRESRunMins", 8)) return tres(s.grp_tres_run_mins);
  if (key_is(k, "GrpWall", 4)) return wall(s.grp_wall, "GrpWall");
  if (key_is(k, "MaxJobsPerAccount", 11) || key_is(k, "MaxJobsPA", 9)) return count(s.max_jobs_pa, "MaxJobsPerAccount");
  if (key_is(k, "MaxJobsPerUser", 4) || key_is(k, "MaxJobsPU", 4)) return count(s.max_jobs_pu, "MaxJobsPerUser");
  if (key_is(k, "MaxSubmitJobsPerAccount", 17) || key_is(k, "MaxSubmitJobsPA", 15))
    return count(s.max_submit_pa, "MaxSubmitJobsPerAccount");
  if (key_is(k, "MaxSubmitJobsPerUser", 4) || key_is(k, "MaxSubmitJobsPU", 4))
    return count(s.max_submit_pu, "MaxSubmitJobsPerUser");
  if (key_is(k, "MaxTRESPerAccount", 11) || key_is(k, "MaxTRESPA", 9)) return tres(s.max_tres_pa);
  if (key_is(k, "MaxTRESPerJob", 7)) return tres(s.max_tres);
  if (key_is(k, "MaxTRESPerNode", 11)) return tres(s.max_tres_per_node);
  if (key_is(k, "MaxTRESPerUser", 11) || key_is(k, "MaxTRESPU", 9)) return tres(s.max_tres_pu);
  if (key_is(k, "MaxTRESMinsPerJob", 8)) return tres(s.max_tres_mins);
  if (key_is(k, "MaxTRESRunMinsPA", 16)) return tres(s.max_tres_run_mins_pa);
  if (key_is(k, "MaxTRESRunMinsPU", 8)) return tres(s.max_tres_run_mins_pu);
  if (key_is(k, "MaxWallDurationPerJob", 4)) return wall(s.max_wall, "MaxWall");
  if (key_is(k, "MinTRESPerJob", 7)) return tres(s.min_tres);
  if (key_is(k, "PreemptMode", 8)) {
    s.preempt_mode = to_lower(v);
    return s.any = true;
  }
  if (key_is(k, "Preempt", 7)) {
    auto names = name_list(v);
    for (const auto& n : names)
      if (!m.qos.count(n)) return invalid(" Unknown QOS name: " + n + "\n");
    s.preempt = names;
    return s.any = true;
  }
  if (key_is(k, "Priority", 3)) return count(s.priority, "Priority");
  if (key_is(k, "UsageFactor", 6)) return real(s.usage_factor, "UsageFactor");
  if (key_is(k, "UsageThreshold", 6)) return real(s.usage_threshold, "UsageThreshold");
  return false;
}

void apply_qos(AcctQos& q, const QosSet& s) {
  if (s.description) q.description = *s.description;
  if (s.priority) q.priority = *s.priority == kNoLimit ? 0 : *s.priority;
  if (s.grace) q.grace_time = *s.grace == kNoLimit ? 0 : *s.grace;
  if (s.usage_factor) q.usage_factor = *s.usage_factor;
  if (s.usage_threshold) q.usage_threshold = *s.usage_threshold;
  if (s.flags) q.flags = *s.flags;
  if (s.preempt) q.preempt = *s.preempt;
  if (s.preempt_mode) q.preempt_mode = *s.preempt_mode;
  AcctLimits& l = q.limits;
  put_setting(l.grp_jobs, s.grp_jobs);
  put_setting(l.grp_submit, s.grp_submit);
  put_setting(l.grp_wall, s.grp_wall);
  put_setting(l.max_wall, s.max_wall);
  put_setting(l.max_jobs_pu, s.max_jobs_pu);
  put_setting(l.max_jobs_pa, s.max_jobs_pa);
  put_setting(l.max_submit_pu, s.max_submit_pu);
  put_setting(l.max_submit_pa, s.max_submit_pa);
  put_setting(l.grp_tres, s.grp_tres);
  put_setting(l.grp_tres_mins, s.grp_tres_mins);
  put_setting(l.grp_tres_run_mins, s.grp_tres_run_mins);
  put_setting(l.max_tres, s.max_tres);
  put_setting(l.max_tres_per_node, s.max_tres_per_node);
  put_setting(l.max_tres_mins, s.max_tres_mins);
  put_setting(l.max_tres_pu, s.max_tres_pu);
  put_setting(l.max_tres_pa, s.max_tres_pa);
  put_setting(l.min_tres, s.min_tres);
  put_setting(l.max_tres_run_mins_pu, s.max_tres_run_mins_pu);
  put_setting(l.max_tres_run_mins_pa, s.max_tres_run_mins_pa);
}

// sacctmgr's print_qos_limits.
std::string print_qos_set(const QosSet& s) {
  std::string out;
  auto line = [&](std::string_view label, const std::string& v) { out += "  " + std::string(label) + "= " + v + "\n"; };
  auto num = [](int64_t v) { return v == kNoLimit ? std::string("NONE") : std::to_string(v); };
  auto four = [](double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", d);
    return std::string(buf);
  };
  if (s.flags) line("Flags                    ", comma_list(*s.flags));
  if (s.grace) line("GraceTime                ", num(*s.grace));
  if (s.grp_jobs) line("GrpJobs                  ", num(*s.grp_jobs));
  if (s.grp_submit) line("GrpSubmitJobs            ", num(*s.grp_submit));
  if (s.grp_tres) line("GrpTRES                  ", format_tres(*s.grp_tres));
  if (s.grp_tres_mins) line("GrpTRESMins              ", format_tres(*s.grp_tres_mins));
  if (s.grp_tres_run_mins) line("GrpTRESRunMins           ", format_tres(*s.grp_tres_run_mins));
  if (s.grp_wall) line("GrpWall                  ", *s.grp_wall == kNoLimit ? "NONE" : format_wall_minutes(*s.grp_wall));
  if (s.max_jobs_pa) line("MaxJobsPerAccount        ", num(*s.max_jobs_pa));
  if (s.max_jobs_pu) line("MaxJobsPerUser ", num(*s.max_jobs_pu));
  if (s.max_submit_pa) line("MaxSubmitJobsPerAccount  ", num(*s.max_submit_pa));
  if (s.max_submit_pu) line("MaxSubmitJobsPerUser     ", num(*s.max_submit_pu));
  if (s.max_tres_pa) line("MaxTRESPerAccount        ", format_tres(*s.max_tres_pa));
  if (s.max_tres) line("MaxTRESPerJob            ", format_tres(*s.max_tres));
  if (s.max_tres_per_node) line("MaxTRESPerNode           ", format_tres(*s.max_tres_per_node));
  if (s.max_tres_pu) line("MaxTRESPerUser           ", format_tres(*s.max_tres_pu));
  if (s.min_tres) line("MinTRESPerJob            ", format_tres(*s.min_tres));
  if (s.max_tres_mins) line("MaxTRESMins              ", format_tres(*s.max_tres_mins));
  if (s.max_tres_run_mins_pa) line("MaxTRESRUNMinsPerAccount ", format_tres(*s.max_tres_run_mins_pa));
  if (s.max_tres_run_mins_pu) line("MaxTRESRUNMinsPerUser    ", format_tres(*s.max_tres_run_mins_pu));
  if (s.max_wall) line("MaxWall                  ", *s.max_wall == kNoLimit ? "NONE" : format_wall_minutes(*s.max_wall));
  if (s.preempt) line("Preempt                  ", comma_list(*s.preempt));
  if (s.preempt_mode) line("PreemptMode              ", *s.preempt_mode);
  if (s.priority) line("Priority                 ", num(*s.priority));
  if (s.usage_factor) line("UsageFactor              ", four(*s.usage_factor));
  if (s.usage_threshold) line("UsageThreshold           ", four(*s.usage_threshold));
  return out;
}

std::string qos_value(const AcctModel& m, const AcctQos& q, std::string_view h) {
  const AcctLimits& l = q.limits;
  auto count = [](int64_t v) { return v == kNoLimit ? std::string() : std::to_string(v); };
  auto wall = [](int64_t v) { return v == kNoLimit ? std::string() : format_wall_minutes(v); };
  if (h == "Name") return q.name;
  if (h == "Descr") return q.description;
  if (h == "ID") return std::to_string(q.id);
  if (h == "Priority") return std::to_string(q.priority);
  if (h == "GraceTime") {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", static_cast<long long>(q.grace_time / 3600),
                  static_cast<long long>(q.grace_time / 60 % 60), static_cast<long long>(q.grace_time % 60));
    return buf;
  }
  if (h == "Preempt") return comma_list(q.preempt);
  if (h == "PreemptMode") return q.preempt_mode;
  if (h == "Flags") return comma_list(q.flags);
  if (h == "UsageThres" || h == "UsageFactor") {
    double d = h == "UsageFactor" ? q.usage_factor : q.usage_threshold;
    if (d < 0) return "";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6f", d);
    return buf;
  }
  if (h == "GrpTRES") return format_tres(l.grp_tres);
  if (h == "GrpTRESMins") return format_tres(l.grp_tres_mins);
  if (h == "GrpTRESRunMins") return format_tres(l.grp_tres_run_mins);
  if (h == "GrpJobs") return count(l.grp_jobs);
  if (h == "GrpSubmit") return count(l.grp_submit);
  if (h == "GrpWall") return wall(l.grp_wall);
  if (h == "MaxTRES") return format_tres(l.max_tres);
  if (h == "MaxTRESPerNode") return format_tres(l.max_tres_per_node);
  if (h == "MaxTRESMins") return format_tres(l.max_tres_mins);
  if (h == "MaxWall") return wall(l.max_wall);
  if (h == "MaxTRESPU") return format_tres(l.max_tres_pu);
  if (h == "MaxJobsPU") return count(l.max_jobs_pu);
  if (h == "MaxSubmitPU") return count(l.max_submit_pu);
  if (h == "MaxTRESPA") return format_tres(l.max_tres_pa);
  if (h == "MaxJobsPA") return count(l.max_jobs_pa);
  if (h == "MaxSubmitPA") return count(l.max_submit_pa);
  if (h == "MinTRES") return format_tres(l.min_tres);
  if (h == "MaxTRESRunMinsPU") return format_tres(l.max_tres_run_mins_pu);
  if (h == "MaxTRESRunMinsPA") return format_tres(l.max_tres_run_mins_pa);
  (void)m;
  return "";
}

// The names a where-clause (or the bare words before `set`) picks.
std::vector<std::string> qos_names(const std::vector<Word>& words, size_t end, std::vector<std::string>* format) {
  std::vector<std::string> names;
  for (size_t i = 0; i < end; ++i) {
    const Word& w = words[i];
    if (!w.has_value && (key_is(w.key, "where", 5) || key_is(w.key, "set", 3))) continue;
    if (w.has_value && format && key_is(w.key, "Format", 1)) {
      std::string list = unquoted(w.value);
      for (auto f : split(list, ',')) format->emplace_back(f);
      continue;
    }
    if (!w.has_value || key_is(w.key, "Names", 1))
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
  }
  return names;
}

}  // namespace

void add_qos(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> names;
  QosSet set;
  for (const auto& w : words) {
    if (!w.has_value && (key_is(w.key, "where", 5) || key_is(w.key, "set", 3))) continue;
    if (!w.has_value || key_is(w.key, "Names", 1)) {
      for (auto& n : name_list(w.has_value ? w.value : w.key)) names.push_back(n);
      continue;
    }
    auto known = set_qos(set, w, cx.model);
    if (!known) {
      if (stops(cx.io, known.status())) return;
      continue;
    }
    if (!*known) nothing(cx.io, (" Unknown option: " + w.key + "=" + w.value + "\n Use keyword 'where' to modify condition\n").c_str());
  }
  if (cx.io.rc) return;
  if (names.empty()) return cx.io.fail(" Need name of qos to add.\n");
  std::string str, description;
  for (const auto& n : names) {
    if (cx.next.qos.count(n)) continue;
    AcctQos q;
    q.name = n;
    q.description = set.description.value_or(n);
    description = q.description;
    apply_qos(q, set);
    cx.next.add_qos(q);
    str += "  " + n + "\n";
  }
  if (str.empty()) return nothing(cx.io, " Nothing new added.\n");
  cx.io.out += " Adding QOS(s)\n" + str + " Settings\n";
  cx.io.out += "  Description    = " + (description.empty() ? std::string("QOS Name") : description) + "\n";
  QosSet shown = set;
  shown.description.reset();
  cx.io.out += print_qos_set(shown);
}

void modify_qos(Ctx& cx, const std::vector<Word>& words) {
  size_t set_at = words.size();
  for (size_t i = 0; i < words.size(); ++i)
    if (!words[i].has_value && key_is(words[i].key, "set", 3)) {
      set_at = i;
      break;
    }
  std::vector<std::string> names = qos_names(words, set_at, nullptr);
  QosSet set;
  for (size_t i = set_at + 1; i < words.size(); ++i) {
    auto known = set_qos(set, words[i], cx.model);
    if (!known) {
      if (stops(cx.io, known.status())) return;
      continue;
    }
    if (!*known)
      nothing(cx.io, (" Unknown option: " + words[i].key + "=" + words[i].value +
                      "\n Use keyword 'where' to modify condition\n").c_str());
  }
  if (cx.io.rc) return;
  if (!set.any) return cx.io.fail(" You didn't give me anything to set\n");
  std::string str;
  for (auto& [name, q] : cx.next.qos) {
    if (!names.empty() && !contains(names, name)) continue;
    apply_qos(q, set);
    str += "  " + name + "\n";
  }
  if (str.empty()) return nothing(cx.io, " Nothing modified\n");
  cx.io.out += " Modified qos...\n" + str;
}

void delete_qos(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> names = qos_names(words, words.size(), nullptr);
  if (names.empty()) return cx.io.fail(" No conditions given to remove, not executing.\n");
  std::string str;
  for (const auto& n : names) {
    if (!cx.next.qos.count(n)) continue;
    cx.next.qos.erase(n);
    for (auto& [id, a] : cx.next.assocs) {
      std::erase(a.qos, n);
      if (a.def_qos == n) a.def_qos.clear();
    }
    str += "  " + n + "\n";
  }
  if (str.empty()) return nothing(cx.io, " Nothing deleted\n");
  cx.io.out += " Deleting QOS(s)...\n" + str;
}

void list_qos(Ctx& cx, const std::vector<Word>& words) {
  std::vector<std::string> format;
  std::vector<std::string> names = qos_names(words, words.size(), &format);
  if (format.empty())
    for (auto f : split("Name,Prio,GraceT,Preempt,PreemptE,PreemptM,Flags%40,UsageThres,UsageFactor,GrpTRES,GrpTRESMins,"
                        "GrpTRESRunMins,GrpJ,GrpS,GrpW,MaxTRES,MaxTRESPerN,MaxTRESMins,MaxW,MaxTRESPerUser,MaxJobsPerUser,"
                        "MaxSubmitJobsPerUser,MaxTRESPerAcct,MaxJobsPerAcct,MaxSubmitJobsPerAcct,MinTRES",
                        ','))
      format.emplace_back(f);
  std::vector<const AcctQos*> rows;
  for (const auto& [name, q] : cx.model.qos)
    if (names.empty() || contains(names, name)) rows.push_back(&q);
  std::sort(rows.begin(), rows.end(), [](const AcctQos* a, const AcctQos* b) { return a->id < b->id; });
  cx.listed.kind = "qos";
  if (cx.options.records)
    for (const auto* q : rows) cx.listed.records.qos[q->name] = *q;
  std::vector<std::function<std::string(std::string_view)>> fns;
  for (const auto* q : rows) fns.push_back([&cx, q](std::string_view h) { return qos_value(cx.model, *q, h); });
  print_rows(cx, format, fns);
}

}  // namespace hq::acctmgr
