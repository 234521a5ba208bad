#include "core/submit_options.hpp"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <functional>

#include "core/cli_options.hpp"
#include "core/hardware.hpp"
#include "core/mail.hpp"
#include "core/signal_names.hpp"
#include "core/submit_inert.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

// An option hq refuses as policy (core/submit_inert: --container), not for its value.
bool refused_by_hq(const std::string& name) {
  for (const auto& o : inert_submit_options())
    if (o.refused && o.name == name) return true;
  return false;
}


using OptionDef = CliOption<SubmitRequest>;

// --switches=N[@wait]: at most N leaf switches, waiting up to `wait` (Slurm's time format)
// for them; Slurm's words for a count that is not a positive number.
Status set_switches(SubmitRequest& r, std::string_view v) {
  std::string_view count = v.substr(0, v.find('@'));
  auto n = parse_int(count, 1, INT32_MAX - 1);
  if (!n) return invalid("Invalid numeric value \"" + std::string(count) + "\" for --switches.");
  r.spec.switches = static_cast<int32_t>(*n);  // a count alone keeps an earlier @wait, as Slurm
  if (count.size() < v.size()) {  // time_str2secs: exact seconds ("0" none; UNLIMITED, -1 or "": max_switch_wait)
    std::string_view text = v.substr(count.size() + 1);
    if (text.empty() || text == "-1") {
      r.spec.switch_wait = -1;
      return Status::ok();
    }
    auto wait = parse_duration(text);
    if (!wait) return invalid("Invalid --switches wait time '" + std::string(text) + "'");
    bool zero = text.find_first_not_of("0:-") == std::string_view::npos;
    r.spec.switch_wait = *wait != kUnlimited ? *wait : zero ? 0 : -1;
  }
  return Status::ok();
}

Status set_int(int32_t& field, std::string_view v, std::string_view what, int64_t min = 1) {
  auto n = parse_int(v, min, 1 << 24);
  if (!n) return invalid("invalid " + std::string(what) + " '" + std::string(v) + "'");
  field = static_cast<int32_t>(*n);
  return Status::ok();
}

Status set_nodes(SubmitRequest& r, std::string_view v) {
  size_t dash = v.find('-');
  Status s = set_int(r.spec.nodes_min, v.substr(0, dash), "node count");
  if (!s) return s;
  r.spec.nodes_max = r.spec.nodes_min;
  if (dash != std::string_view::npos) s = set_int(r.spec.nodes_max, v.substr(dash + 1), "node count");
  if (s && r.spec.nodes_max < r.spec.nodes_min) return invalid("invalid node count '" + std::string(v) + "': max below min");
  r.spec.nodes_set = true;
  return s;
}

Status set_mem(int64_t& field, std::string_view v) {
  auto m = parse_size_mib(v);
  if (!m) return invalid("invalid memory '" + std::string(v) + "': " + m.status().message());
  field = *m;
  return Status::ok();
}

// --exclusive[=exclusive|user|mcs]: whole nodes either way here; =topo: no other job in the
// job's base blocks (topology/block); =oversubscribe: sharing, as without it.
Status set_exclusive(SubmitRequest& r, std::string_view v) {
  if (v.empty() || iequals(v, "exclusive") || iequals(v, "user") || iequals(v, "mcs")) r.spec.exclusive = true;
  else if (iequals(v, "topo")) r.spec.exclusive_topo = true;
  else if (iequals(v, "oversubscribe")) r.spec.exclusive = false;
  else return invalid("Invalid --exclusive specification");
  return Status::ok();
}

// --hint: nomultithread acts (whole cores, one thread of each used), multithread undoes it;
// compute_bound and memory_bound are told not to act; another word is Slurm's error.
Status set_hint(SubmitRequest& r, std::string_view v) {
  for (std::string_view item : split(v, ',')) {
    if (item == "nomultithread" || item == "multithread") {
      r.spec.nomultithread = item == "nomultithread";
    } else if (item == "compute_bound" || item == "memory_bound") {
      std::string note = "--hint=" + std::string(item) + ": it does not change CPU placement on hq yet";
      if (std::find(r.notices.begin(), r.notices.end(), note) == r.notices.end()) r.notices.push_back(note);
    } else {
      return invalid("unrecognized --hint argument \"" + std::string(v) + "\", see --hint=help");
    }
  }
  return Status::ok();
}

// --signal=[{R|B}:]SIG[@TIME]: a name (USR1, SIGUSR1) or number; TIME defaults to 60 s.
Status set_signal(SubmitRequest& r, std::string_view v) {
  std::string_view sig = v;
  r.spec.signal_batch_only = false;
  if (sig.size() > 2 && sig[1] == ':' && (sig[0] == 'B' || sig[0] == 'R')) {
    r.spec.signal_batch_only = sig[0] == 'B';
    sig = sig.substr(2);
  }
  r.spec.signal_time = 60;
  if (auto at = sig.find('@'); at != std::string_view::npos) {
    auto t = parse_int(sig.substr(at + 1), 0, 65535);
    if (!t) return invalid("invalid --signal time in '" + std::string(v) + "'");
    r.spec.signal_time = *t;
    sig = sig.substr(0, at);
  }
  auto n = signal_number(sig);
  if (!n) return invalid("invalid --signal '" + std::string(v) + "'");
  r.spec.signal = static_cast<int32_t>(*n);
  return Status::ok();
}

Status set_nice(SubmitRequest& r, std::string_view v) {
  bool neg = !v.empty() && v[0] == '-';
  auto n = parse_int(neg ? v.substr(1) : v, 0, 2147483645);
  if (!n) return invalid("invalid --nice '" + std::string(v) + "'");
  r.spec.nice = static_cast<int32_t>(neg ? -*n : *n);
  return Status::ok();
}

// --gpus, --gpus-per-node, --gpus-per-task: "[type:]N". One GPU count kind per job.
Status set_gpus(SubmitRequest& r, int32_t JobSpec::*field, std::string_view v) {
  size_t colon = v.rfind(':');
  std::string_view count = colon == std::string_view::npos ? v : v.substr(colon + 1);
  auto n = parse_int(count, 1, 1 << 20);
  if (!n) return invalid("invalid GPU count '" + std::string(v) + "' (expected [type:]N)");
  r.spec.gpus = r.spec.gpus_per_node = r.spec.gpus_per_task = 0;
  r.spec.*field = static_cast<int32_t>(*n);
  r.spec.gpu_type = colon == std::string_view::npos ? "" : std::string(v.substr(0, colon));
  return Status::ok();
}

// --gres=gpu[:type][:N] (N defaults to 1; "gres/" prefix allowed; "none" clears).
Status set_gres(SubmitRequest& r, std::string_view v) {
  if (v == "none") {
    r.spec.gpus = r.spec.gpus_per_node = r.spec.gpus_per_task = 0;
    r.spec.gpu_type.clear();
    return Status::ok();
  }
  if (v.rfind("gres/", 0) == 0) v = v.substr(5);
  std::string text(v);
  if (text == "gpu" || (text.rfind("gpu:", 0) == 0 && !std::isdigit(static_cast<unsigned char>(text.back()))))
    text += ":1";
  auto parsed = parse_gres(text);
  if (!parsed) return invalid("invalid --gres '" + std::string(v) + "': " + parsed.status().message());
  if (parsed->size() != 1) return invalid("invalid --gres '" + std::string(v) + "': give one gpu entry");
  r.spec.gpus = r.spec.gpus_per_task = 0;
  r.spec.gpus_per_node = (*parsed)[0].count;
  r.spec.gpu_type = (*parsed)[0].type;
  return Status::ok();
}

template <typename Field>  // std::string or Text
Status set_string(Field& field, std::string_view v, std::string_view what) {
  if (v.empty()) return invalid("empty " + std::string(what));
  field = v;
  return Status::ok();
}

// Sets one of the spec's extras (core/job.hpp JobExtras), which copies share.
template <typename F>
Status set_extra(SubmitRequest& r, F&& set) {
  JobExtras e = *r.spec.extra;
  Status s = set(e);
  if (s) r.spec.extra = std::move(e);
  return s;
}

Status set_open_mode(SubmitRequest& r, std::string_view v) {
  std::string mode = to_lower(v);
  if (mode != "append" && mode != "a" && mode != "truncate" && mode != "t")
    return invalid("Invalid --open-mode argument: " + std::string(v) + " (append or truncate)");
  return set_extra(r, [&](JobExtras& e) { e.open_mode = mode[0] == 'a' ? 1 : 2; return Status::ok(); });
}

Status set_priority(SubmitRequest& r, std::string_view v) {
  int64_t p = 0;
  if (to_lower(v) == "top") p = 4294967294LL;  // Slurm's top: the highest there is
  else if (auto n = parse_int(v, 0, 4294967293LL); n) p = *n;
  else return invalid("Invalid --priority '" + std::string(v) + "': a number or TOP");
  return set_extra(r, [&](JobExtras& e) { e.priority = p; return Status::ok(); });
}

// An option of core/submit_inert: refused, told, or taken silently. `o` is an entry of
// inert_submit_options()' static table; the handler holds its address, which fits in
// std::function's own storage (a copy of the entry would be a heap block an option, and
// every sbatch builds this table as it starts).
OptionDef inert_option(const InertOption& o) {
  auto set = [entry = &o](SubmitRequest& r, std::string_view) { return answer_inert_option(*entry, r.notices); };
  return {o.name, o.short_name, o.arg == InertArg::kRequired, set, o.arg == InertArg::kOptional};
}

std::vector<OptionDef> base_options();

// Slurm 22.05's sbatch long options, in the order its getopt lists them
// (tests/fixtures/slurm/getopt/prefixes.txt); hq's own (--controller, --ca, --json, ...) are
// taken only whole.
const std::vector<std::string_view>& sbatch_getopt_names() {
  static const std::vector<std::string_view> names = {
      "account", "acctg-freq", "array", "batch", "begin", "bb", "bbf", "cluster-constraint", "chdir", "cluster",
      "clusters", "comment", "container", "context", "contiguous", "constraint", "core-spec", "cores-per-socket",
      "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency", "distribution", "error",
      "exclude", "exclusive", "export", "export-file", "extra-node-info", "get-user-env", "gid", "gpu-bind",
      "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help", "hint",
      "hold", "ignore-pbs", "input", "job-name", "kill-on-invalid-dep", "licenses", "mail-type", "mail-user",
      "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nice", "no-kill",
      "no-requeue", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu",
      "ntasks-per-node", "ntasks-per-socket", "ntasks-per-tres", "open-mode", "output", "overcommit",
      "oversubscribe", "parsable", "partition", "power", "prefer", "priority", "profile", "propagate", "qos", "quiet",
      "reboot", "requeue", "reservation", "signal", "sockets-per-node", "spread-job", "switches", "tasks-per-node",
      "test-only", "thread-spec", "threads-per-core", "time", "time-min", "tmp", "uid", "use-min-nodes", "usage",
      "verbose", "version", "wait", "wait-all-nodes", "wckey", "wrap"};
  return names;
}

const std::vector<OptionDef>& option_table() {
  static const std::vector<OptionDef> table = [] {
    std::vector<OptionDef> all = base_options();
    const std::vector<InertOption>& inert = inert_submit_options();
    all.reserve(all.size() + inert.size());
    for (const InertOption& o : inert) all.push_back(inert_option(o));
    add_alias(all, "tasks-per-node", "ntasks-per-node");
    rank_as_slurm(all, sbatch_getopt_names());
    return all;
  }();
  return table;
}

std::vector<OptionDef> base_options() {
  return {
      {"job-name", 'J', true, [](SubmitRequest& r, std::string_view v) { r.spec.name = v; r.name_set = true; return Status::ok(); }},
      {"output", 'o', true, [](SubmitRequest& r, std::string_view v) { r.spec.output = v; return Status::ok(); }},
      {"error", 'e', true, [](SubmitRequest& r, std::string_view v) { r.spec.error = v; return Status::ok(); }},
      {"chdir", 'D', true, [](SubmitRequest& r, std::string_view v) { r.spec.workdir = v; return Status::ok(); }},
      {"partition", 'p', true, [](SubmitRequest& r, std::string_view v) { r.spec.partition = v; return Status::ok(); }},
      {"time", 't', true, [](SubmitRequest& r, std::string_view v) -> Status {
         auto d = parse_time_limit(v);
         if (!d) return invalid("invalid time limit '" + std::string(v) + "'");
         r.spec.time_limit = *d;
         return Status::ok();
       }},
      {"time-min", 0, true, [](SubmitRequest& r, std::string_view v) -> Status {
         auto d = parse_time_limit(v);
         if (!d || *d == kUnlimited) return invalid("Invalid --time-min specification");
         return set_extra(r, [&](JobExtras& e) { e.time_min = *d; return Status::ok(); });
       }},
      {"nodes", 'N', true, set_nodes},
      {"ntasks", 'n', true, [](SubmitRequest& r, std::string_view v) { r.spec.ntasks_set = true; return set_int(r.spec.ntasks, v, "task count"); }},
      {"ntasks-per-node", 0, true, [](SubmitRequest& r, std::string_view v) { return set_int(r.spec.ntasks_per_node, v, "tasks per node"); }},
      {"cpus-per-task", 'c', true, [](SubmitRequest& r, std::string_view v) {
         r.spec.cpus_per_task_set = true;
         return set_int(r.spec.cpus_per_task, v, "cpus per task");
       }},
      {"mem", 0, true, [](SubmitRequest& r, std::string_view v) {
         r.spec.mem_per_cpu_mib = r.spec.mem_per_gpu_mib = 0;
         Status s = set_mem(r.spec.mem_per_node_mib, v);
         r.spec.mem_all = s && r.spec.mem_per_node_mib == 0;  // --mem=0: all of each node's memory
         return s;
       }},
      {"mem-per-cpu", 0, true, [](SubmitRequest& r, std::string_view v) {
         r.spec.mem_per_node_mib = r.spec.mem_per_gpu_mib = 0;
         r.spec.mem_all = false;
         return set_mem(r.spec.mem_per_cpu_mib, v);
       }},
      {"gpus", 'G', true, [](SubmitRequest& r, std::string_view v) { return set_gpus(r, &JobSpec::gpus, v); }},
      {"gpus-per-node", 0, true, [](SubmitRequest& r, std::string_view v) { return set_gpus(r, &JobSpec::gpus_per_node, v); }},
      {"gpus-per-task", 0, true, [](SubmitRequest& r, std::string_view v) { return set_gpus(r, &JobSpec::gpus_per_task, v); }},
      {"gres", 0, true, set_gres},
      {"cpu-bind", 0, true, [](SubmitRequest& r, std::string_view v) { r.spec.cpu_bind = v; return Status::ok(); }},
      {"cpus-per-gpu", 0, true, [](SubmitRequest& r, std::string_view v) { return set_int(r.spec.cpus_per_gpu, v, "cpus per GPU"); }},
      {"mem-per-gpu", 0, true, [](SubmitRequest& r, std::string_view v) {
         r.spec.mem_per_node_mib = r.spec.mem_per_cpu_mib = 0;
         r.spec.mem_all = false;
         return set_mem(r.spec.mem_per_gpu_mib, v);
       }},
      {"export", 0, true, [](SubmitRequest& r, std::string_view v) { r.export_spec = v; return Status::ok(); }},
      {"hold", 'H', false, [](SubmitRequest& r, std::string_view) { r.spec.hold = true; return Status::ok(); }},
      {"parsable", 0, false, [](SubmitRequest& r, std::string_view) { r.parsable = true; return Status::ok(); }},
      {"controller", 0, true, [](SubmitRequest& r, std::string_view v) { r.controller = v; return Status::ok(); }},
      {"ca", 0, true, [](SubmitRequest& r, std::string_view v) { r.ca_file = v; return Status::ok(); }},
      {"hint", 0, true, set_hint},
      {"uid", 0, true, [](SubmitRequest& r, std::string_view v) { return set_string(r.as_user, v, "user"); }},
      {"gid", 0, true, [](SubmitRequest& r, std::string_view v) { return set_string(r.as_group, v, "group"); }},
      {"quiet", 'Q', false, [](SubmitRequest& r, std::string_view) { r.quiet = true; return Status::ok(); }},
      {"wait", 'W', false, [](SubmitRequest& r, std::string_view) { r.wait = true; return Status::ok(); }},
      {"json", 0, false, [](SubmitRequest& r, std::string_view) { r.json = true; return Status::ok(); }},
      {"wrap", 0, true, [](SubmitRequest& r, std::string_view v) { r.wrap = v; r.wrap_set = true; return Status::ok(); }},
      {"account", 'A', true, [](SubmitRequest& r, std::string_view v) { return set_string(r.spec.account, v, "account"); }},
      {"constraint", 'C', true, [](SubmitRequest& r, std::string_view v) { r.spec.constraint = v; return Status::ok(); }},
      {"nodelist", 'w', true, [](SubmitRequest& r, std::string_view v) { return set_string(r.spec.nodelist, v, "node list"); }},
      {"exclude", 'x', true, [](SubmitRequest& r, std::string_view v) { return set_string(r.spec.exclude, v, "node list"); }},
      {"exclusive", 0, false, set_exclusive, true},
      {"switches", 0, true, set_switches},
      {"segment", 0, true, [](SubmitRequest& r, std::string_view v) {
         auto n = parse_int(v, 0, 65535);
         if (!n) return invalid("Invalid --segment specification");
         r.spec.segment = static_cast<int32_t>(*n);
         return Status::ok();
       }},
      {"nice", 0, false, [](SubmitRequest& r, std::string_view v) { return v.empty() ? set_nice(r, "100") : set_nice(r, v); }, true},
      {"begin", 'b', true, [](SubmitRequest& r, std::string_view v) { return set_string(r.begin, v, "begin time"); }},
      {"deadline", 0, true, [](SubmitRequest& r, std::string_view v) { return set_string(r.deadline, v, "deadline"); }},
      {"dependency", 'd', true, [](SubmitRequest& r, std::string_view v) { return set_string(r.spec.dependency, v, "dependency"); }},
      {"kill-on-invalid-dep", 0, true, [](SubmitRequest& r, std::string_view v) {
         if (v != "yes" && v != "no") return invalid("--kill-on-invalid-dep takes yes or no");
         r.spec.kill_on_invalid_dep = v == "yes";
         return Status::ok();
       }},
      {"array", 'a', true, [](SubmitRequest& r, std::string_view v) { return set_string(r.spec.array, v, "array"); }},
      {"signal", 0, true, set_signal},
      {"requeue", 0, false, [](SubmitRequest& r, std::string_view) { r.spec.requeue = 1; return Status::ok(); }},
      {"no-requeue", 0, false, [](SubmitRequest& r, std::string_view) { r.spec.requeue = 0; return Status::ok(); }},
      {"test-only", 0, false, [](SubmitRequest& r, std::string_view) { r.test_only = true; return Status::ok(); }},
      {"comment", 0, true, [](SubmitRequest& r, std::string_view v) { return set_extra(r, [&](JobExtras& e) { e.comment = v; return Status::ok(); }); }},
      {"qos", 'q', true, [](SubmitRequest& r, std::string_view v) { return set_extra(r, [&](JobExtras& e) { return set_string(e.qos, v, "QOS"); }); }},
      {"reservation", 0, true, [](SubmitRequest& r, std::string_view v) { return set_extra(r, [&](JobExtras& e) { return set_string(e.reservation, v, "reservation"); }); }},
      {"wckey", 0, true, [](SubmitRequest& r, std::string_view v) { return set_extra(r, [&](JobExtras& e) { return set_string(e.wckey, v, "wckey"); }); }},
      {"mail-type", 0, true, [](SubmitRequest& r, std::string_view v) {
         auto types = parse_mail_types(v);
         if (!types) return types.status();
         return set_extra(r, [&](JobExtras& e) { e.mail_type = *types; return Status::ok(); });
       }},
      {"mail-user", 0, true, [](SubmitRequest& r, std::string_view v) { return set_extra(r, [&](JobExtras& e) { return set_string(e.mail_user, v, "mail-user"); }); }},
      {"input", 'i', true, [](SubmitRequest& r, std::string_view v) { return set_extra(r, [&](JobExtras& e) { return set_string(e.input, v, "input"); }); }},
      {"open-mode", 0, true, set_open_mode},
      {"priority", 0, true, set_priority},
  };
}

}  // namespace

std::vector<std::string> acting_submit_options() {
  std::vector<std::string> out;
  for (const OptionDef& o : base_options()) out.emplace_back(o.long_name);
  return out;
}

Result<std::vector<std::string>> split_directive(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == quote) quote = 0;
      else cur += c;
      continue;
    }
    if (c == '\\' && i + 1 < text.size()) { cur += text[++i]; in_word = true; continue; }
    if (c == '\'' || c == '"') { quote = c; in_word = true; continue; }
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (in_word) { out.push_back(cur); cur.clear(); in_word = false; }
      continue;
    }
    cur += c;
    in_word = true;
  }
  if (quote) return invalid(std::string("Unmatched `") + quote + "`");
  if (in_word) out.push_back(cur);
  for (const auto& w : out)
    if (!w.empty() && w[0] == ':') return invalid("Invalid directive argument '" + w + "'");
  return out;
}

Result<std::vector<std::string>> parse_directives(std::string_view script, std::vector<std::string>* warnings) {
  std::vector<std::string> args;
  size_t pos = 0, line_no = 0;
  while (pos < script.size()) {
    size_t end = script.find('\n', pos);
    if (end == std::string_view::npos) end = script.size();
    std::string_view line = script.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) continue;
    if (line[first] != '#') break;  // first command: directives end here
    std::string_view rest;
    if (line.rfind("#SBATCH", 0) == 0) rest = line.substr(7);
    else if (line.rfind("#HQ", 0) == 0) rest = line.substr(3);
    else if (line.rfind("#SLURM", 0) == 0) {
      rest = line.substr(6);
      if (warnings && warnings->empty()) warnings->push_back("Change from #SLURM to #SBATCH in your script and verify the options are valid in sbatch");
    } else continue;
    if (!rest.empty() && rest[0] != ' ' && rest[0] != '\t') continue;  // e.g. "#SBATCHX"
    auto words = split_directive(rest);
    if (!words) return words.status().with_context("script line " + std::to_string(line_no));
    args.insert(args.end(), words->begin(), words->end());
  }
  return args;
}

MetaOption submit_meta_option(const std::vector<std::string>& args) { return find_meta_option(option_table(), args); }

std::string sbatch_prefix_answer(std::string_view prefix) { return getopt_prefix_answer(option_table(), prefix); }

namespace {

Status apply_options(const std::vector<OptionDef>& table, const std::vector<std::string>& args, SubmitRequest& req,
                     std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-') {
      if (!positional) return invalid("Invalid directive found in batch script: " + a);
      positional->assign(args.begin() + static_cast<long>(i), args.end());
      return Status::ok();
    }
    Status s = apply_cli_option(table, args, i, req, positional ? &req.option_error : nullptr);
    if (!s && req.option_error.fault == CliFault::kBadValue && refused_by_hq(req.option_error.name))
      req.option_error = {};  // hq's own refusal and words
    if (!s) return positional ? s : invalid("Invalid directive found in batch script: " + a + " (" + s.message() + ")");
  }
  return Status::ok();
}

// Slurm 22.05's salloc long options, in the order its getopt lists them
// (tests/fixtures/slurm/getopt/prefixes.txt).
const std::vector<std::string_view>& salloc_getopt_names() {
  static const std::vector<std::string_view> names = {
      "account", "acctg-freq", "begin", "bell", "bb", "bbf", "cluster-constraint", "chdir", "cluster", "clusters",
      "comment", "container", "context", "contiguous", "constraint", "core-spec", "cores-per-socket", "cpu-freq",
      "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency", "distribution", "exclude",
      "exclusive", "extra-node-info", "get-user-env", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
      "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help", "hint", "hold", "immediate", "job-name",
      "kill-command", "licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu",
      "mem-per-gpu", "mincpus", "network", "nice", "no-bell", "no-kill", "no-shell", "nodefile", "nodelist",
      "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
      "ntasks-per-tres", "overcommit", "oversubscribe", "partition", "power", "prefer", "priority", "profile", "qos",
      "quiet", "reboot", "reservation", "signal", "sockets-per-node", "spread-job", "switches", "tasks-per-node",
      "thread-spec", "threads-per-core", "time", "time-min", "tmp", "uid", "use-min-nodes", "usage", "verbose",
      "version", "wait-all-nodes", "wckey", "x11"};
  return names;
}

// hq's own options that salloc takes too (by their whole name).
bool hqs_own_for_salloc(std::string_view name) {
  return name == "controller" || name == "ca" || name == "segment" || name == "cpu-bind";
}

const std::vector<OptionDef>& salloc_table() {
  static const std::vector<OptionDef> table = [] {
    std::vector<OptionDef> t;
    const auto& names = salloc_getopt_names();
    for (const OptionDef& o : option_table())
      if (hqs_own_for_salloc(o.long_name) || std::find(names.begin(), names.end(), o.long_name) != names.end())
        t.push_back(o);
    t.push_back({"immediate", 'I', false, [](SubmitRequest& r, std::string_view v) {
                   if (!v.empty() && !parse_int(v, 0, INT32_MAX)) return invalid("invalid --immediate value '" + std::string(v) + "'");
                   r.immediate = true;
                   return Status::ok();
                 }, true});
    t.push_back({"kill-command", 'K', false, [](SubmitRequest& r, std::string_view v) {
                   auto sig = v.empty() ? Result<int>(SIGTERM) : signal_number(v);
                   if (!sig) return invalid("Invalid --kill-command signal '" + std::string(v) + "'");
                   r.kill_signal = *sig;
                   return Status::ok();
                 }, true});
    t.push_back({"no-shell", 0, false, [](SubmitRequest&, std::string_view) {
                   return invalid("--no-shell is not supported: an allocation lives as long as its salloc");
                 }});
    t.push_back({"x11", 0, false, [](SubmitRequest&, std::string_view) {
                   return invalid("--x11: X11 forwarding is not supported by hq");
                 }, true});
    for (std::string_view bell : {"bell", "no-bell"})  // no terminal bell to ring: taken silently
      t.push_back({bell, 0, false, [](SubmitRequest&, std::string_view) { return Status::ok(); }});
    rank_as_slurm(t, salloc_getopt_names());
    return t;
  }();
  return table;
}

}  // namespace

Status apply_submit_options(const std::vector<std::string>& args, SubmitRequest& req,
                            std::vector<std::string>* positional) {
  return apply_options(option_table(), args, req, positional);
}

Status apply_salloc_options(const std::vector<std::string>& args, SubmitRequest& req,
                            std::vector<std::string>& command) {
  return apply_options(salloc_table(), args, req, &command);
}

MetaOption salloc_meta_option(const std::vector<std::string>& args) { return find_meta_option(salloc_table(), args); }

std::string salloc_prefix_answer(std::string_view prefix) { return getopt_prefix_answer(salloc_table(), prefix); }

SbatchOptionAnswer sbatch_option_error(const CliOptionError& e) {
  const std::string error = "sbatch: error: ";
  if (e.getopt()) return {{"sbatch: " + e.message, "Try \"sbatch --help\" for more information"}, 255};
  if (e.name == "nodes") return {{error + "\"" + e.value + "\" is not a valid node count"}, 255};
  if (e.name == "hint") return {{error + "unrecognized --hint argument \"" + e.value + "\", see --hint=help"}, 1};
  if (e.name == "ntasks" || e.name == "cpus-per-task")
    return {{error + "Invalid numeric value \"" + e.value + "\" for --" + e.name + "."}, 1};
  std::vector<std::string> lines;
  if (e.name == "begin" || e.name == "deadline") lines.push_back("Invalid time specification (pos=0): " + e.value);
  lines.push_back(error + "Invalid --" + e.name + " specification");
  return {lines, 255};
}

Result<std::vector<std::string>> export_environment(std::string_view spec,
                                                    const std::vector<std::string>& client_env) {
  std::vector<std::string> out;
  std::vector<std::string_view> items;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string_view::npos) comma = spec.size();
    if (comma > start) items.push_back(spec.substr(start, comma - start));
    start = comma + 1;
  }
  bool all = items.empty();
  for (auto item : items) {
    if (item == "ALL") { all = true; continue; }
    if (item == "NONE" || item == "NIL") continue;
    if (item.find('=') != std::string_view::npos) { out.emplace_back(item); continue; }
    std::string prefix = std::string(item) + "=";
    auto it = std::find_if(client_env.begin(), client_env.end(),
                           [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
    if (it != client_env.end()) out.push_back(*it);
  }
  if (all) out.insert(out.begin(), client_env.begin(), client_env.end());
  // SLURM_* always travels (reference §8.2).
  if (!all)
    for (const auto& e : client_env)
      if (e.rfind("SLURM_", 0) == 0) out.push_back(e);
  return out;
}

Status check_script(std::string_view script) {
  if (script.rfind("#!", 0) != 0)
    return invalid("This does not look like a batch script.  The first line must start with #! "
                   "followed by the path to an interpreter.");
  return Status::ok();
}

}  // namespace hq

namespace hq {

Result<Time> resolve_begin(std::string_view text, Time now, int64_t utc_offset) {
  auto bad = [&]() { return invalid("Invalid time specification (--begin) '" + std::string(text) + "'"); };
  if (text == "now") return now;
  if (text.rfind("now+", 0) == 0) {
    std::string_view rest = text.substr(4);
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    auto n = parse_int(rest.substr(0, digits), 0, 100000000);
    if (!n) return bad();
    std::string_view unit = rest.substr(digits);
    int64_t mult = 0;
    for (auto [names, m] : {std::pair{"s,sec,secs,second,seconds", 1}, std::pair{"m,min,mins,minute,minutes", 60},
                            std::pair{"h,hour,hours", 3600}, std::pair{"d,day,days", 86400}, std::pair{"w,week,weeks", 604800}}) {
      std::string_view list = names;
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (list.substr(start, comma - start) == unit) mult = m;
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
    }
    if (unit.empty()) mult = 1;
    if (mult == 0) return bad();
    return now + *n * mult;
  }
  if (text.size() == 5 || text.size() == 8) {  // HH:MM[:SS] today (local), or tomorrow if past
    auto secs = clock_seconds(text);
    if (!secs) return bad();
    Time local_midnight = ((now + utc_offset) / 86400) * 86400 - utc_offset;
    Time t = local_midnight + *secs;
    return t < now ? t + 86400 : t;
  }
  if (text.size() >= 10 && text[4] == '-' && text[7] == '-') {
    auto y = parse_int(text.substr(0, 4), 1970, 9999), mo = parse_int(text.substr(5, 2), 1, 12),
         d = parse_int(text.substr(8, 2), 1, 31);
    if (!y || !mo || !d) return bad();
    int64_t secs = 0;
    if (text.size() > 10) {
      if (text[10] != 'T') return bad();
      auto c = clock_seconds(text.substr(11));
      if (!c) return bad();
      secs = *c;
    }
    return days_from_civil(*y, *mo, *d) * 86400 + secs - utc_offset;
  }
  return bad();
}

}  // namespace hq
