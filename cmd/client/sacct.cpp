// `hq acct` / sacct: job records from the accounting store, in Slurm 22.05's columns and
// forms (core/sacct_format, cmd/client/sacct_rows). The controller selects (job ids, users,
// names, states, partitions, accounts, the time window) and the client prints.
#include <algorithm>
#include <ctime>
#include <map>
#include <set>
#include <tuple>

#include "cmd/client/option_docs.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_usage.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/client/sacct_json.hpp"
#include "cmd/client/sacct_rows.hpp"
#include "cmd/commands.hpp"
#include "cmd/users.hpp"
#include "core/array_spec.hpp"
#include "core/cli_options.hpp"
#include "core/hostlist.hpp"
#include "core/sacct_format.hpp"
#include "core/std_streams.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr char kSacctUsage[] =
    "usage: hq acct [OPTIONS]   (sacct: job records from the accounting store)\n"
    "  -j, --jobs=LIST        these jobs (123, 123_4, 123.batch, 123.0); no time window then\n"
    "  -u, --user=LIST        these users' jobs     -a, --allusers   every user's\n"
    "  --name=LIST            jobs of these names   -s, --state=LIST  in these states (CD, F, CA, R, ...)\n"
    "  -r, --partition=LIST   -A, --accounts=LIST   -N, --nodelist=HOSTS (jobs that ran there)\n"
    "  -S, --starttime=TIME   -E, --endtime=TIME    (YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS], now[-N{s,m,h,d,w}])\n"
    "  -X, --allocations      jobs only, no .batch or step lines\n"
    "  -o, --format=FIELDS    e.g. JobID,JobName%30,State; -e/--helpformat lists them\n"
    "  -b, --brief  -l, --long  -n, --noheader  -p, --parsable  -P, --parsable2  --delimiter=C\n"
    "  --json, --yaml         the records as Slurm 22.05 prints them (openapi/dbv0.0.38)\n"
    "  -D, --duplicates       every run of a requeued job (else its latest only)\n"
    "  taken, change nothing: -M/--clusters -L/--allclusters -T/--truncate --units --noconvert\n"
    "                         -v/--verbose --local --federation --array -x/--associations\n";

struct SacctArgs {
  pb::AcctQueryRequest req;
  std::string format, start, end, nodelist;
  bool brief = false, long_format = false, noheader = false, allocations = false, helpformat = false;
  bool json = false, yaml = false;  // Slurm's data_parser records instead of lines
  SacctStyle style;
  // -j's items as (job part, step part): ("123", ""), ("123_4", "0"), ("123", "batch").
  std::vector<std::pair<std::string, std::string>> selectors;
};

Status add_jobs(SacctArgs& a, std::string_view list) {
  for (const auto& item : split_list(list)) {
    std::string id = item, step;
    if (size_t dot = id.find('.'); dot != std::string::npos) {
      step = id.substr(dot + 1);
      id = id.substr(0, dot);
    }
    a.selectors.emplace_back(id, step);
    auto* sel = a.req.add_jobs();
    size_t under = id.find('_');
    auto job = parse_int(id.substr(0, under), 1, INT64_MAX);
    if (!job) return invalid("Invalid job id: " + item);
    sel->set_job_id(static_cast<uint64_t>(*job));
    sel->set_array_task(-1);
    if (under != std::string::npos) {
      auto task = parse_int(id.substr(under + 1), 0, INT32_MAX);
      if (!task) return invalid("Invalid job id: " + item);
      sel->set_array_task(static_cast<int32_t>(*task));
    }
  }
  return Status::ok();
}

Status add_users(SacctArgs& a, std::string_view list) {
  for (const auto& u : split_list(list)) {
    auto uid = parse_int(u, 0, UINT32_MAX);
    if (uid) {
      a.req.add_uids(static_cast<uint32_t>(*uid));
      continue;
    }
    auto pw = passwd_by_name(u);
    if (!pw) return invalid("Invalid user id: " + u);
    a.req.add_uids(pw->uid);
  }
  return Status::ok();
}

Status ok() { return Status::ok(); }

// An option of Slurm's sacct that hq's does not act on yet: refused by name, not as unknown.
CliOption<SacctArgs> not_yet(std::string_view name, char letter, bool has_arg) {
  return {name, letter, has_arg, [name](SacctArgs&, std::string_view) {
            return invalid("--" + std::string(name) + " is not supported by hq's sacct yet");
          }};
}

const std::vector<CliOption<SacctArgs>>& options() {
  using O = CliOption<SacctArgs>;
  static const std::vector<O> table = [] {
    std::vector<O> t = {
      {"jobs", 'j', true, [](SacctArgs& a, std::string_view v) { return add_jobs(a, v); }},
      {"user", 'u', true, [](SacctArgs& a, std::string_view v) { return add_users(a, v); }},
      {"uid", 0, true, [](SacctArgs& a, std::string_view v) { return add_users(a, v); }},
      {"allusers", 'a', false, [](SacctArgs& a, std::string_view) { return a.req.set_all_users(true), ok(); }},
      {"name", 0, true, [](SacctArgs& a, std::string_view v) {
         for (const auto& n : split_list(v)) a.req.add_names(n);
         return ok();
       }},
      {"state", 's', true, [](SacctArgs& a, std::string_view v) {
         auto states = parse_sacct_states(v);
         if (!states) return states.status();
         for (const auto& s : *states) a.req.add_states(s);
         return ok();
       }},
      {"partition", 'r', true, [](SacctArgs& a, std::string_view v) {
         for (const auto& p : split_list(v)) a.req.add_partitions(p);
         return ok();
       }},
      {"accounts", 'A', true, [](SacctArgs& a, std::string_view v) {
         for (const auto& p : split_list(v)) a.req.add_accounts(p);
         return ok();
       }},
      {"nodelist", 'N', true, [](SacctArgs& a, std::string_view v) { return a.nodelist = v, ok(); }},
      {"starttime", 'S', true, [](SacctArgs& a, std::string_view v) { return a.start = v, ok(); }},
      {"endtime", 'E', true, [](SacctArgs& a, std::string_view v) { return a.end = v, ok(); }},
      {"allocations", 'X', false, [](SacctArgs& a, std::string_view) { return a.allocations = true, ok(); }},
      {"format", 'o', true, [](SacctArgs& a, std::string_view v) {
         a.format += (a.format.empty() ? "" : ",") + std::string(v);
         return ok();
       }},
      {"helpformat", 'e', false, [](SacctArgs& a, std::string_view) { return a.helpformat = true, ok(); }},
      {"brief", 'b', false, [](SacctArgs& a, std::string_view) { return a.brief = true, ok(); }},
      {"long", 'l', false, [](SacctArgs& a, std::string_view) { return a.long_format = true, ok(); }},
      {"noheader", 'n', false, [](SacctArgs& a, std::string_view) { return a.noheader = true, ok(); }},
      {"parsable", 'p', false, [](SacctArgs& a, std::string_view) { return a.style.mode = SacctPrint::kParsable, ok(); }},
      {"parsable2", 'P', false, [](SacctArgs& a, std::string_view) { return a.style.mode = SacctPrint::kParsable2, ok(); }},
      {"delimiter", 0, true, [](SacctArgs& a, std::string_view v) { return a.style.delimiter = v, ok(); }},
      {"json", 0, false, [](SacctArgs& a, std::string_view) { return a.json = true, ok(); }},
      {"yaml", 0, false, [](SacctArgs& a, std::string_view) { return a.yaml = true, ok(); }},
      // Taken, changing nothing: one cluster, no federation.
      {"duplicates", 'D', false, [](SacctArgs& a, std::string_view) { return a.req.set_duplicates(true), ok(); }},
      {"clusters", 'M', true, [](SacctArgs&, std::string_view) { return ok(); }},
      {"allclusters", 'L', false, [](SacctArgs&, std::string_view) { return ok(); }},
      {"truncate", 'T', false, [](SacctArgs&, std::string_view) { return ok(); }},
      {"units", 0, true, [](SacctArgs&, std::string_view) { return ok(); }},
      {"noconvert", 0, false, [](SacctArgs&, std::string_view) { return ok(); }},
      {"verbose", 'v', false, [](SacctArgs&, std::string_view) { return ok(); }},
      {"local", 0, false, [](SacctArgs&, std::string_view) { return ok(); }},
      {"federation", 0, false, [](SacctArgs&, std::string_view) { return ok(); }},
      {"associations", 'x', true, [](SacctArgs&, std::string_view) { return ok(); }},
      {"whole-hetjob", 0, false, [](SacctArgs&, std::string_view) { return ok(); }, true},
      {"use-local-uid", 0, false, [](SacctArgs&, std::string_view) { return ok(); }},
    };
    add_alias(t, "fields", "format");
    add_alias(t, "cluster", "clusters");
    for (auto [name, letter, has_arg] : {std::tuple{"batch-script", 'B', false}, {"completion", 'c', false},
                                         {"constraints", 'C', true}, {"env-vars", 0, false}, {"file", 'f', true},
                                         {"flags", 'F', true}, {"gid", 'g', true}, {"nnodes", 'i', true},
                                         {"ncpus", 'I', true}, {"qos", 'q', true}, {"reason", 'R', true},
                                         {"timelimit-min", 'k', true}, {"timelimit-max", 'K', true},
                                         {"wckeys", 'W', true}})
      t.push_back(not_yet(name, letter, has_arg));
    add_alias(t, "group", "gid");
    // Slurm 22.05's order (as its getopt lists them).
    rank_as_slurm(t, {"allusers", "accounts", "allocations", "allclusters", "associations", "brief", "batch-script",
                      "completion", "constraints", "cluster", "clusters", "delimiter", "duplicates", "endtime",
                      "env-vars", "federation", "file", "flags", "fields", "format", "gid", "group", "helpformat",
                      "help", "jobs", "json", "local", "long", "name", "nnodes", "ncpus", "nodelist", "noconvert",
                      "noheader", "parsable", "parsable2", "partition", "qos", "reason", "state", "starttime",
                      "timelimit-min", "timelimit-max", "truncate", "units", "uid", "use-local-uid", "usage", "user",
                      "verbose", "version", "wckeys", "whole-hetjob", "yaml"});
    return t;
  }();
  return table;
}

// sacct's -S/-E: --begin's forms, with times of day today (not tomorrow) and now-N.
Result<Time> parse_sacct_time(const std::string& text, Time now) {
  int64_t offset = local_utc_offset(now);
  if (text.rfind("now-", 0) == 0) {
    auto ahead = resolve_begin("now+" + text.substr(4), now, offset);
    if (!ahead) return invalid("Invalid time specification: " + text);
    return now - (*ahead - now);
  }
  auto t = resolve_begin(text, now, offset);
  if (!t) return invalid("Invalid time specification: " + text);
  Time when = *t;
  if ((text.size() == 5 || text.size() == 8) && when > now) when -= 86400;  // a time of day: today's
  return when;
}

Status resolve_window(SacctArgs& a, Time now) {
  Time start = 0, end = 0;
  if (!a.start.empty()) {
    auto t = parse_sacct_time(a.start, now);
    if (!t) return t.status();
    start = *t;
  }
  if (!a.end.empty()) {
    auto t = parse_sacct_time(a.end, now);
    if (!t) return t.status();
    end = *t;
  }
  int64_t offset = local_utc_offset(now);
  Time midnight = ((now + offset) / 86400) * 86400 - offset;
  SacctWindow w = sacct_default_window(a.req.jobs_size() > 0, a.req.states_size() > 0, now, midnight, start, end);
  if (w.end && w.start > w.end)
    return invalid("Start time (" + local_time(w.start) + ") requested is after end time (" + local_time(w.end) + ").");
  a.req.set_start(w.start);
  a.req.set_end(w.end);
  return Status::ok();
}

void print_helpformat() {
  const auto& fields = sacct_fields();
  for (size_t i = 0; i < fields.size(); ++i) {
    std::string name(fields[i].name);
    hq::cout() << name << std::string(name.size() < 20 ? 20 - name.size() : 1, ' ');
    if (i % 4 == 3 || i + 1 == fields.size()) hq::cout() << "\n";
  }
}

// -N: a job that ran on any of `hosts`.
bool job_ran_on(const pb::Job& job, const std::string& hosts) {
  auto names = expand_hostlist(hosts);
  if (!names) return false;
  for (const auto& a : job.alloc())
    if (std::find(names->begin(), names->end(), a.node()) != names->end()) return true;
  return false;
}

// Which of a job's lines -j asks for: every line when it names the job (or its array)
// without a step, else only the steps it names ("batch", "0", ...); every line without -j.
struct LineFilter {
  bool all = true;
  std::set<std::string> steps;
  bool wants(const std::string& step) const { return all || steps.count(step) > 0; }
};

LineFilter line_filter(const pb::Job& job, const SacctArgs& a) {
  LineFilter f;
  if (a.selectors.empty()) return f;
  f.all = false;
  std::string raw = std::to_string(job.job_id());
  std::string task = job.array_job_id() ? std::to_string(job.array_job_id()) + "_" + std::to_string(job.array_task_id()) : raw;
  std::string array = job.array_job_id() ? std::to_string(job.array_job_id()) : raw;
  for (const auto& [id, step] : a.selectors) {
    if (id != raw && id != task && id != array) continue;
    if (step.empty()) f.all = true;
    else f.steps.insert(step);
  }
  if (!f.all && f.steps.empty()) f.all = true;  // named some other way: the store picked it
  return f;
}

// The lines to print for one record: the job's, its batch script's and its steps' (not
// with -X, which the controller is told: it sends no steps then).
void print_job(const pb::Job& job, const std::vector<const pb::StepRecord*>& steps, const SacctArgs& a,
               const std::vector<SacctColumn>& cols, const std::string& cluster, int64_t now,
               const std::string& array_tasks) {
  LineFilter filter = line_filter(job, a);
  auto print = [&](const SacctRow& row) {
    hq::cout() << sacct_line(cols, a.style, [&](std::string_view name) { return sacct_value(row, name); });
  };
  if (filter.all) {
    SacctRow row{job, false, cluster, now};
    row.derived_exit_code = sacct_derived_exit(steps);
    row.array_tasks = array_tasks;
    print(row);
  }
  if (a.allocations) return;
  if (has_batch_line(job) && filter.wants("batch")) print(SacctRow{job, true, cluster, now});
  for (const pb::StepRecord* st : steps)
    if (filter.wants(std::to_string(st->step_id()))) {
      SacctRow row{job, false, cluster, now};
      row.step = st;
      print(row);
    }
}

// Array tasks that never started, by (array, state): Slurm keeps them as one record of the
// array (its pending remainder, "37_[9-20]"), so they are one line, printed where the
// first of them comes. Not when -j names single tasks: those are asked for one by one.
struct Remainder {
  const pb::Job* first = nullptr;
  std::vector<int32_t> indices;
};
// By (array id, the array's submit time: ids may be used again, state).
using Remainders = std::map<std::tuple<uint64_t, int64_t, std::string>, Remainder>;

bool never_started_task(const pb::Job& j) { return j.array_job_id() != 0 && j.start_time() == 0; }

Remainders array_remainders(const pb::AcctQueryReply& reply, const SacctArgs& a) {
  Remainders out;
  for (const auto& [id, step] : a.selectors)
    if (id.find('_') != std::string::npos) return out;
  for (const auto& j : reply.jobs()) {
    if (!never_started_task(j)) continue;
    Remainder& r = out[{j.array_job_id(), j.submit_time(), j.state()}];
    if (!r.first) r.first = &j;
    r.indices.push_back(j.array_task_id());
  }
  for (auto& [key, r] : out) std::sort(r.indices.begin(), r.indices.end());
  return out;
}

// The reply's steps by (job id, job submit time), in the order sent (by step id).
using StepsByJob = std::map<std::pair<uint64_t, int64_t>, std::vector<const pb::StepRecord*>>;
StepsByJob steps_by_job(const pb::AcctQueryReply& reply) {
  StepsByJob out;
  for (const auto& st : reply.steps()) out[{st.job_id(), st.job_submit_time()}].push_back(&st);
  return out;
}

int parse(const Args& args, SacctArgs& a, const std::string& prog) {
  std::vector<std::string> words = expand_short_bundles(options(), args);
  for (size_t i = 1; i < words.size(); ++i) {
    CliOptionError err;
    if (Status s = apply_cli_option(options(), words, i, a, &err); !s) {
      if (err.getopt()) return hq::cerr() << prog << ": " << s.message() << "\n", 1;  // as Slurm's sacct: no "Try" line
      return fail(prog, s);
    }
  }
  return -1;
}

}  // namespace

std::string sacct_prefix_answer(std::string_view prefix) { return getopt_prefix_answer(options(), prefix); }

int run_sacct(const Args& args) {
  std::string prog = prog_name(args[0]);
  if (asks_help(args)) return hq::cout() << kSacctUsage, 0;
  switch (find_meta_option(options(), {args.begin() + 1, args.end()})) {  // it spells out bundles itself
    case MetaOption::kHelp: case MetaOption::kUsage: return hq::cout() << kSacctUsage, 0;
    case MetaOption::kVersion: return *answer_meta_option(MetaOption::kVersion, "sacct", "");
    case MetaOption::kNone: break;
  }
  SacctArgs a;
  if (int rc = parse(args, a, prog); rc >= 0) return rc;
  if (a.helpformat) return print_helpformat(), 0;
  std::string list = a.format;
  if (a.brief) list = std::string(kSacctBriefFormat) + (list.empty() ? "" : "," + list);
  if (a.long_format) list = std::string(kSacctLongFormat) + (list.empty() ? "" : "," + list);
  if (list.empty()) list = getenv("SACCT_FORMAT") ? getenv("SACCT_FORMAT") : std::string(kSacctDefaultFormat);
  auto cols = parse_sacct_format(list);
  if (!cols) return fail(prog, cols.status());
  Time now = static_cast<Time>(std::time(nullptr));
  if (Status s = resolve_window(a, now); !s) return fail(prog, s);
  pb::Envelope env;
  // Steps for their lines, and with -X for DerivedExitCode alone.
  bool derived = a.json || a.yaml ||
                 std::any_of(cols->begin(), cols->end(), [](const SacctColumn& c) { return c.name == "DerivedExitCode"; });
  a.req.set_with_steps(!a.allocations || derived);
  *env.mutable_acct_query() = a.req;
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail(prog, reply.status());
  const auto& out = reply->acct_query_reply();
  if (!out.enabled())
    return fail(prog, unavailable("Slurm accounting storage is disabled (this cluster's [accounting] storage is \"none\")"));
  StepsByJob steps = steps_by_job(out);
  std::vector<SacctRecord> records;
  Remainders remainders = array_remainders(out, a);
  for (const auto& job : out.jobs()) {
    if (!a.nodelist.empty() && !job_ran_on(job, a.nodelist)) continue;
    std::string tasks;
    if (auto r = remainders.find({job.array_job_id(), job.submit_time(), job.state()});
        never_started_task(job) && r != remainders.end()) {
      if (r->second.first != &job) continue;  // on its array's one line
      tasks = format_array_indices(r->second.indices);
    }
    auto it = steps.find({job.job_id(), job.submit_time()});
    records.push_back({&job, it == steps.end() ? std::vector<const pb::StepRecord*>{} : it->second, tasks});
  }
  if (a.json || a.yaml) {
    bool with_steps = !a.allocations;
    hq::cout() << (a.yaml ? sacct_slurm_yaml(records, out.cluster(), now, with_steps)
                         : sacct_slurm_json(records, out.cluster(), now, with_steps));
    return 0;
  }
  if (!a.noheader) hq::cout() << sacct_header(*cols, a.style);
  for (const SacctRecord& r : records) print_job(*r.job, r.steps, a, *cols, out.cluster(), now, r.array_tasks);
  return 0;
}

}  // namespace hq::cmd
