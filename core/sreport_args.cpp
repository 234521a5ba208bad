// sreport's command line as Slurm 22.05 reads it (sreport.c main/_process_command,
// cluster_reports.c/_set_*_cond, user_reports.c/_set_cond, job_reports.c/_set_cond,
// slurmdb_defs.c slurmdb_report_set_start_end_time): options anywhere (getopt permutes),
// keywords by prefix, conditions key=value (a bare word: Users= or Clusters=), the window
// rounded to the hour with Slurm's double rounding and defaults. Pure; thread-safe.
#include <algorithm>
#include <cctype>
#include <string_view>

#include "core/sreport.hpp"
#include "core/sreport_internal.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

bool ieq_prefix(std::string_view word, std::string_view key, size_t n) {
  if (word.size() < n || key.size() < n) return false;
  for (size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(word[i])) != std::tolower(static_cast<unsigned char>(key[i])))
      return false;
  return true;
}

}  // namespace

// xstrncasecmp(word, key, MAX(strlen(word), min)) == 0: `word` is a prefix of `key` at least
// `min` long (shorter words compare their end against `key`).
bool sreport_key(std::string_view word, std::string_view key, size_t min) {
  size_t n = std::max(word.size(), min);
  if (n > word.size() || n > key.size()) return word.size() == key.size() && ieq_prefix(word, key, word.size());
  return ieq_prefix(word, key, n);
}

bool sreport_starts(std::string_view word, std::string_view key, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    int cw = i < word.size() ? std::tolower(static_cast<unsigned char>(word[i])) : 0;
    int ck = i < key.size() ? std::tolower(static_cast<unsigned char>(key[i])) : 0;
    if (cw != ck) return false;
    if (cw == 0) return true;
  }
  return true;
}

const std::vector<std::string>& sreport_tres_names() {
  static const std::vector<std::string> names{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages", "gres/gpu"};
  return names;
}

namespace {

constexpr char kUsage[] =
    "Usage: sreport [<OPTION>] [<COMMAND>]\n"
    "    Valid <OPTION> values are:\n"
    "     -a or --all_clusters: Use all clusters instead of current\n"
    "     -M or --cluster: Use cluster(s) specified\n"
    "     -h or --help: equivalent to \"help\" command\n"
    "     -n or --noheader: equivalent to \"noheader\" command\n"
    "     -p or --parsable: output will be '|' delimited with a '|' at the end\n"
    "     -P or --parsable2: output will be '|' delimited without a '|' at the end\n"
    "     -s or --sort: sort by time (default) or name\n"
    "     -t <time_format>: Seconds, Minutes, Hours, Percent, SecPer, MinPer, HourPer\n"
    "     -T or --tres: comma separated list of TRES, or 'ALL' for all TRES\n"
    "     -v or --verbose: equivalent to \"verbose\" command\n"
    "     -V or --version: equivalent to \"version\" command\n"
    "\n"
    "  <COMMAND> is one of: cluster AccountUtilizationByUser | UserUtilizationByAccount |\n"
    "    Utilization ; user TopUsage ; job SizesByAccount.  Conditions: Start=, End=, Users=,\n"
    "    Accounts=, Clusters=, Format=, Tree, Group, TopCount=, Grouping=, FlatView,\n"
    "    PrintJobCount, AcctAsParent (see docs/accounting.md).\n";

// _set_time_format: false (and Slurm's message, no newline) for an unknown word.
bool set_time_format(SreportCmd& c, std::string_view f, std::string& err) {
  using T = SreportTime;
  if (sreport_key(f, "SecPer", 6)) c.time = T::kSecPer;
  else if (sreport_key(f, "MinPer", 6)) c.time = T::kMinPer;
  else if (sreport_key(f, "HourPer", 6)) c.time = T::kHourPer;
  else if (sreport_key(f, "Seconds", 1)) c.time = T::kSeconds;
  else if (sreport_key(f, "Minutes", 1)) c.time = T::kMinutes;
  else if (sreport_key(f, "Hours", 1)) c.time = T::kHours;
  else if (sreport_key(f, "Percent", 1)) c.time = T::kPercent;
  else return err += "unknown time format " + std::string(f), false;
  return true;
}

bool percent_format(SreportTime t) {
  return t == SreportTime::kPercent || t == SreportTime::kSecPer || t == SreportTime::kMinPer ||
         t == SreportTime::kHourPer;
}

// _build_tres_list: names matched against the TRES table (any case); fatal when none is.
bool build_tres(SreportCmd& c, SreportOutput& diag) {
  if (c.tres_text.empty()) return true;
  std::vector<std::string> out;
  for (std::string_view tok : split(c.tres_text, ',')) {
    if (tok.empty()) continue;
    if (to_lower(tok) == "all") {
      out = sreport_tres_names();
      break;
    }
    std::string name = to_lower(tok);
    const auto& names = sreport_tres_names();
    if (std::find(names.begin(), names.end(), name) == names.end()) continue;
    if (name == "node" && percent_format(c.time)) {
      diag.err += "sreport: fatal: TRES node usage is no longer reported in percent format reports.  Please use TRES CPU instead.\n";
      return diag.rc = 1, false;
    }
    c.node_tres = c.node_tres || name == "node";
    out.push_back(name);
  }
  if (out.empty()) return diag.err += "sreport: fatal: No valid TRES given\n", diag.rc = 1, false;
  c.tres = out;
  return true;
}

// Slurm's parse_time forms; nullopt when it does not read.
std::optional<Time> parse_report_time(const std::string& text, Time now, int64_t off) {
  if (text.rfind("now-", 0) == 0) {
    auto ahead = resolve_begin("now+" + text.substr(4), now, off);
    if (!ahead) return std::nullopt;
    return now - (*ahead - now);
  }
  if (auto t = resolve_begin(text, now, off)) return *t;
  // MM/DD[/YY][-HH:MM[:SS]], MM.DD[.YY], MMDD[YY]: this year unless given.
  std::string date = text, clock;
  if (size_t dash = text.find('-'); dash != std::string::npos) date = text.substr(0, dash), clock = text.substr(dash + 1);
  int64_t year = *parse_int(format_timestamp(now + off).substr(0, 4), 0, 9999);
  Result<int64_t> m = invalid(""), d = invalid("");
  std::optional<Result<int64_t>> y;
  if (date.size() >= 5 && (date[2] == '/' || date[2] == '.')) {
    m = parse_int(date.substr(0, 2), 1, 12), d = parse_int(date.substr(3, 2), 1, 31);
    if (date.size() == 8 && date[5] == date[2]) y = parse_int(date.substr(6, 2), 0, 99);
    else if (date.size() != 5) return std::nullopt;
  } else if ((date.size() == 4 || date.size() == 6) && std::all_of(date.begin(), date.end(), ::isdigit)) {
    m = parse_int(date.substr(0, 2), 1, 12), d = parse_int(date.substr(2, 2), 1, 31);
    if (date.size() == 6) y = parse_int(date.substr(4, 2), 0, 99);
  } else {
    return std::nullopt;
  }
  if (!m || !d || (y && !*y)) return std::nullopt;
  if (y) year = 2000 + **y;
  int64_t secs = 0;
  if (!clock.empty()) {
    auto c = clock_seconds(clock);
    if (!c) return std::nullopt;
    secs = *c;
  }
  return days_from_civil(year, *m, *d) * 86400 + secs - off;
}

// Rounds a local time to the hour as slurmdb_report_set_start_end_time does:
// seconds >= 30 add a minute, then minutes >= 30 add an hour.
Time round_hour(Time t, int64_t off) {
  Time local = t + off;
  int64_t sec = local % 60, min = local / 60 % 60;
  Time hour = local - local % 3600;
  if (sec >= 30) ++min;
  if (min >= 30) hour += 3600;
  return hour - off;
}

void set_window(SreportCmd& c, std::optional<Time> start, std::optional<Time> end, Time now, int64_t off) {
  Time midnight = ((now + off) / 86400) * 86400 - off;
  Time e = end ? round_hour(std::min(*end, now), off) : midnight;
  Time s = start ? round_hour(*start, off) : midnight - 86400;
  if (e - s < 3600) e = s + 3600;
  c.start = s, c.end = e;
  c.utc_offset = off;
}

struct CondState {
  std::optional<Time> start, end;
};

void take_time(const std::string& value, std::optional<Time>& slot, Time now, int64_t off, SreportOutput& diag) {
  auto t = parse_report_time(value, now, off);
  if (t) slot = *t;
  else diag.err += "Invalid time specification (pos=0): " + value + "\n";
}

std::vector<std::string> list_of(const std::string& v) {
  std::vector<std::string> out;
  for (std::string_view s : split(v, ','))
    if (!s.empty()) out.emplace_back(s);
  return out;
}

void add_list(std::vector<std::string>& to, const std::string& v) {
  for (auto& s : list_of(v)) to.push_back(s);
}

// The conditions every report takes; false when `key` is none of them.
bool common_cond(SreportCmd& c, CondState& st, std::string_view key, const std::string& value, Time now, int64_t off,
                 SreportOutput& diag) {
  if (sreport_key(key, "Accounts", 2) || sreport_key(key, "Acct", 4)) add_list(c.accounts, value);
  else if (sreport_key(key, "Clusters", 1)) add_list(c.clusters, value);
  else if (sreport_key(key, "End", 1)) take_time(value, st.end, now, off, diag);
  else if (sreport_key(key, "Start", 1)) take_time(value, st.start, now, off, diag);
  else return false;
  return true;
}

void unknown_cond(const std::string& word, SreportOutput& diag) {
  diag.err += " Unknown condition: " + word + "\nUse keyword set to modify value\n";
  diag.rc = 1;
}

// One condition word of a cluster or user report.
void assoc_cond(SreportCmd& c, CondState& st, const std::string& word, Time now, int64_t off, SreportOutput& diag) {
  size_t eq = word.find('=');
  bool bare = eq == std::string::npos;
  std::string key = bare ? word : word.substr(0, eq), value = bare ? word : word.substr(eq + 1);
  bool utilization = c.kind == SreportKind::kUtilization;
  if (bare && sreport_key(key, "all_clusters", 1)) return;
  if (bare && !utilization && c.kind != SreportKind::kTopUsage && sreport_key(key, "Tree", 4)) return void(c.tree = true);
  if (bare && c.kind == SreportKind::kTopUsage && sreport_key(key, "group", 1)) return void(c.group = true);
  if (utilization) {
    if (bare || sreport_key(key, "Clusters", 1)) return add_list(c.clusters, value);
  } else if (bare || sreport_key(key, "Users", 1)) {
    return add_list(c.users, value);
  }
  if (!utilization && (sreport_key(key, "Accounts", 2) || sreport_key(key, "Acct", 4))) return add_list(c.accounts, value);
  if (sreport_key(key, "Format", 1)) return add_list(c.formats, value);
  if (c.kind == SreportKind::kTopUsage && sreport_key(key, "TopCount", 1)) {
    auto n = parse_int(value, 0, UINT32_MAX);
    c.top_count = n ? static_cast<uint32_t>(*n) : 0;
    return;
  }
  if (!sreport_key(key, "Accounts", 2) && !sreport_key(key, "Acct", 4) && common_cond(c, st, key, value, now, off, diag))
    return;
  unknown_cond(word, diag);
}

// One condition word of a job report.
void job_cond(SreportCmd& c, CondState& st, const std::string& word, Time now, int64_t off, SreportOutput& diag) {
  size_t eq = word.find('=');
  bool bare = eq == std::string::npos;
  std::string key = bare ? word : word.substr(0, eq), value = bare ? word : word.substr(eq + 1);
  if (bare && sreport_key(key, "all_clusters", 1)) return;
  if (bare && sreport_key(key, "AcctAsParent", 2)) return void(c.acct_as_parent = true);
  if (bare && sreport_key(key, "PrintJobCount", 2)) return void(c.job_count = true);
  if (bare && sreport_key(key, "FlatView", 2)) return void(c.flat_view = true);
  if (bare) return add_list(c.clusters, value);
  if (sreport_key(key, "Format", 2)) return add_list(c.formats, value);
  if (sreport_key(key, "grouping", 2)) {
    c.grouping.clear();
    for (const auto& g : list_of(value)) c.grouping.push_back(static_cast<uint32_t>(std::max<int64_t>(0, std::atoll(g.c_str()))));
    return;
  }
  if (sreport_key(key, "Partitions", 2)) return add_list(c.partitions, value);
  if (sreport_key(key, "Users", 1)) return add_list(c.users, value);
  // Taken without effect here (hq keeps no wckeys, gids or per-job picks in these reports).
  if (sreport_key(key, "Associations", 2) || sreport_key(key, "Gid", 2) || sreport_key(key, "Jobs", 1) ||
      sreport_key(key, "Nodes", 1) || sreport_key(key, "Wckeys", 2))
    return;
  if (common_cond(c, st, key, value, now, off, diag)) return;
  unknown_cond(word, diag);
}

// The report named by `type` and `report`; false (with Slurm's message) when none is.
bool pick_report(SreportCmd& c, const std::string& type, const std::string& report, SreportOutput& diag) {
  auto bad = [&](const std::string& valid) {
    diag.err += "Not valid report " + report + "\n" + valid + "\n";
    diag.rc = 1;
    return false;
  };
  if (sreport_key(type, "cluster", 2)) {
    // _cluster_rep compares a fixed number of characters: anything starting with 'a' is
    // AccountUtilizationByUser (so is AccountUtilizationByQOS, which 22.05 does not have).
    if (sreport_starts(report, "AccountUtilizationByUser", 1)) c.kind = SreportKind::kAccountByUser;
    else if (sreport_starts(report, "UserUtilizationByAccount", 18) || sreport_starts(report, "UA", 2))
      c.kind = SreportKind::kUserByAccount;
    else if (sreport_starts(report, "UserUtilizationByWckey", 18) || sreport_starts(report, "UW", 2))
      return diag.err += "sreport: hq keeps no wckeys: " + report + " is not built\n", diag.rc = 1, false;
    else if (sreport_starts(report, "Utilization", 2)) c.kind = SreportKind::kUtilization;
    else if (sreport_starts(report, "WCKeyUtilizationByUser", 1))
      return diag.err += "sreport: hq keeps no wckeys: " + report + " is not built\n", diag.rc = 1, false;
    else
      return bad("Valid cluster reports are, \"AccountUtilizationByUser\", \"UserUtilizationByAccount\", "
                 "\"UserUtilizationByWckey\", \"Utilization\", and \"WCKeyUtilizationByUser\"");
    return true;
  }
  if (sreport_key(type, "user", 1)) {
    if (!sreport_starts(report, "Top", 1)) return bad("Valid user reports are, \"Top\"");
    return c.kind = SreportKind::kTopUsage, true;
  }
  if (sreport_key(type, "job", 1)) {
    if (sreport_key(report, "SizesByAccount", 1)) return c.kind = SreportKind::kSizesByAccount, true;
    if (sreport_key(report, "SizesByWcKey", 8) || sreport_key(report, "SizesByAccountAndWcKey", 15))
      return diag.err += "sreport: hq keeps no wckeys: " + report + " is not built\n", diag.rc = 1, false;
    return bad("Valid job reports are, \"SizesByAccount, SizesByAccountAndWcKey, and  SizesByWckey\"");
  }
  if (sreport_key(type, "reservation", 2) || sreport_key(type, "resv", 2))
    return diag.err += "sreport: reservation reports are not built in hq\n", diag.rc = 1, false;
  diag.err += "invalid keyword: " + type + "\n";
  diag.rc = 1;
  return false;
}

// getopt "aM:hnpPQs:t:T:vV" with the long names; words that are not options, in order.
// False when sreport stops (usage, version, an unknown option).
bool read_options(const std::vector<std::string>& args, SreportCmd& c, std::vector<std::string>& words,
                  SreportOutput& diag) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      words.push_back(a);
      continue;
    }
    auto value = [&](size_t at) -> std::optional<std::string> {
      if (at < a.size()) return a.substr(at);
      if (i + 1 < args.size()) return args[++i];
      return std::nullopt;
    };
    std::string opt;
    std::optional<std::string> v;
    if (a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), inline_v;
      bool has_v = false;
      if (size_t eq = name.find('='); eq != std::string::npos) inline_v = name.substr(eq + 1), name = name.substr(0, eq), has_v = true;
      static const std::vector<std::pair<std::string, char>> longs{
          {"all_clusters", 'a'}, {"cluster", 'M'}, {"federation", 'f'}, {"help", 'h'}, {"immediate", 'i'},
          {"local", 'l'},       {"noheader", 'n'}, {"parsable", 'p'},  {"parsable2", 'P'}, {"quiet", 'Q'},
          {"sort", 's'},        {"tres", 'T'},     {"usage", 'h'},     {"verbose", 'v'},  {"version", 'V'}};
      char found = 0;
      int matches = 0;
      for (const auto& [n, ch] : longs) {
        if (n == name) { found = ch, matches = 1; break; }
        if (!name.empty() && n.rfind(name, 0) == 0) found = ch, ++matches;
      }
      if (matches != 1) {
        diag.err += "sreport: unrecognized option '" + a + "'\nTry \"sreport --help\" for more information\n";
        return diag.rc = 1, false;
      }
      opt = std::string(1, found);
      if (found == 'M' || found == 'T') v = has_v ? std::optional<std::string>(inline_v) : (i + 1 < args.size() ? std::optional<std::string>(args[++i]) : std::nullopt);
      if ((found == 'M' || found == 'T') && !v) {
        diag.err += "sreport: option '--" + name + "' requires an argument\nTry \"sreport --help\" for more information\n";
        return diag.rc = 1, false;
      }
      if (found == 's') v = std::string("time");
    } else {
      for (size_t k = 1; k < a.size(); ++k) {
        char ch = a[k];
        if (std::string("aMhnpPQstTvV").find(ch) == std::string::npos) {
          diag.err += std::string("sreport: invalid option -- '") + ch + "'\nTry \"sreport --help\" for more information\n";
          return diag.rc = 1, false;
        }
        if (ch == 'M' || ch == 's' || ch == 't' || ch == 'T') {
          v = value(k + 1);
          if (!v) {
            diag.err += std::string("sreport: option requires an argument -- '") + ch + "'\nTry \"sreport --help\" for more information\n";
            return diag.rc = 1, false;
          }
          opt = std::string(1, ch);
          break;
        }
        if (k + 1 < a.size()) {  // a cluster of flags: all but the last here
          if (ch == 'h') return diag.out += kUsage, false;
          if (ch == 'V') return diag.out += "slurm 22.05.8\n", false;
          if (ch == 'n') c.header = false;
          if (ch == 'p') c.parsable = 1;
          if (ch == 'P') c.parsable = 2;
          continue;
        }
        opt = std::string(1, ch);
      }
    }
    switch (opt.empty() ? 0 : opt[0]) {
      case 'h': return diag.out += kUsage, false;
      case 'V': return diag.out += "slurm 22.05.8\n", false;
      case 'n': c.header = false; break;
      case 'p': c.parsable = 1; break;
      case 'P': c.parsable = 2; break;
      case 'M': add_list(c.clusters, *v); break;
      case 's': c.sort_by_name = v && sreport_key(*v, "name", 1); break;
      case 't': set_time_format(c, *v, diag.err); break;
      case 'T': c.tres_text = *v; break;
      default: break;  // -a, -Q, -v, --federation, --local, -i: nothing to change here
    }
  }
  return true;
}

}  // namespace

SreportParse parse_sreport(const std::vector<std::string>& args, Time now, int64_t utc_offset) {
  SreportParse p;
  SreportCmd c;
  std::vector<std::string> words;
  if (!read_options(args, c, words, p.diag)) return p;
  if (words.empty()) {
    p.diag.err += "sreport: no command given (hq has no interactive mode)\n" + std::string(kUsage);
    return p.diag.rc = 1, p;
  }
  if (words.size() < 2) {
    bool known = sreport_key(words[0], "cluster", 2) || sreport_key(words[0], "job", 1) ||
                 sreport_key(words[0], "user", 1) || sreport_key(words[0], "reservation", 2) ||
                 sreport_key(words[0], "resv", 2);
    p.diag.err += known ? "too few arguments for keyword:" + words[0] + "\n" : "invalid keyword: " + words[0] + "\n";
    return p.diag.rc = 1, p;
  }
  if (!pick_report(c, words[0], words[1], p.diag)) return p;
  if (!build_tres(c, p.diag)) return p;
  CondState st;
  for (size_t i = 2; i < words.size(); ++i) {
    if (c.kind == SreportKind::kSizesByAccount) job_cond(c, st, words[i], now, utc_offset, p.diag);
    else assoc_cond(c, st, words[i], now, utc_offset, p.diag);
  }
  if (c.kind == SreportKind::kUtilization && c.node_tres) {
    p.diag.err += "sreport: fatal: TRES node usage is no longer reported in the Cluster Utilization report.  Please use TRES CPU instead.\n";
    return p.diag.rc = 1, p;
  }
  set_window(c, st.start, st.end, now, utc_offset);
  p.cmd = std::move(c);
  return p;
}

}  // namespace hq
