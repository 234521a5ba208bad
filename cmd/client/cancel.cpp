// `hq cancel` / scancel: cancels (or with -s signals) jobs by id (array tasks as 12_3, 12_[1-3]), or every job that
// scancel's filters pick (-u, --me, -n, -t, -p, -A, -q, -w), with ids too only among those, as
// Slurm's scancel: the jobs are looked up first (the controller filters), then cancelled.
#include <cstring>
#include <algorithm>
#include <cctype>

#include "cmd/client/job_query.hpp"
#include "cmd/client/option_docs.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_usage.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/users.hpp"
#include "core/array_spec.hpp"
#include "core/cli_options.hpp"
#include "core/hostlist.hpp"
#include "core/option_doc.hpp"
#include "core/signal_names.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr char kCancelUsage[] =
    "usage: hq cancel [OPTIONS] [JOBID[_TASK]...]   (scancel)\n"
    "  -u, --user=LIST      jobs of these users      --me             my jobs\n"
    "  -n, --name=LIST      jobs with these names    -t, --state=LIST jobs in these states (pending, R, ...)\n"
    "  -p, --partition=LIST jobs in these partitions -A, --account=LIST\n"
    "  -q, --qos=LIST       jobs of these QOS        -w, --nodelist=HOSTLIST jobs on these nodes\n"
    "  -R, --reservation=LIST jobs in these reservations  --wckey=LIST jobs of these wckeys\n"
    "  -i, --interactive    ask before each job (y/n on stdin)\n"
    "  -s, --signal=SIG     send SIG to the jobs' steps instead of cancelling (USR1, 10, SIGTERM, ...)\n"
    "  -b, --batch          with -s: to the batch shell only   -f, --full  with -s: to the shell, its children and the steps\n"
    "  -Q, --quiet  -v, --verbose  --ctld  -M, --clusters=NAME (one cluster: taken)  --json\n"
    "  -H, --hurry, --sibling=NAME: taken, change nothing (no burst buffers, no federation)\n";

struct CancelArgs {
  pb::CancelRequest ids;       // named jobs and tasks
  pb::QueueRequest filter;     // scancel's filters (users, states, ...)
  bool filtered = false, json = false, interactive = false, verbose = false;
};

// What Slurm's scancel answers without a word, exit 0, unless -v: a job that does not
// exist, or has ended already.
bool quiet_in_scancel(const std::string& error) {
  return error.ends_with(": Invalid job id specified") || error.ends_with(": Job/step already completing or completed");
}

Status add_users(pb::QueueRequest& q, const std::string& list) {
  for (const auto& u : split_list(list)) {
    auto name = user_of(u);
    if (!name) return invalid("Invalid user name: " + u);
    q.add_users(*name);
  }
  return Status::ok();
}

// scancel -t: only PENDING, RUNNING and SUSPENDED (or PD, R, S), in any case. An error's
// message is Slurm's two lines, which scancel prints without its name.
Status set_states(pb::QueueRequest& q, const std::string& list) {
  for (const auto& item : split_list(list)) {
    std::string up = item;
    for (char& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (up != "PENDING" && up != "PD" && up != "RUNNING" && up != "R" && up != "SUSPENDED" && up != "S")
      return invalid("Invalid job state specified: " + item + "\nValid job states are PENDING, RUNNING, and SUSPENDED");
  }
  q.set_state_filter(list);
  return Status::ok();
}

Status add_job(pb::CancelRequest& c, const std::string& word) {
  auto us = word.find('_');
  auto n = parse_int(word.substr(0, us), 1, INT64_MAX);
  if (n && us != std::string::npos && word.size() > us + 2 && word[us + 1] == '[' && word.back() == ']') {
    // 12_[1-3,7]: those tasks (Slurm's largest MaxArraySize bounds the range)
    auto set = parse_array(std::string_view(word).substr(us + 2, word.size() - us - 3), 4000001);
    if (!set || set->throttle) return invalid("Invalid job id " + word);
    for (int32_t t : set->indices) c.add_tasks(std::to_string(*n) + "_" + std::to_string(t));
    return Status::ok();
  }
  if (!n || (us != std::string::npos && !parse_int(word.substr(us + 1), 0, INT32_MAX)))
    return invalid("Invalid job id " + word);
  if (us != std::string::npos) c.add_tasks(word);
  else c.add_job_ids(static_cast<uint64_t>(*n));
  return Status::ok();
}

// A filter option's values into the query (every filter makes scancel pick jobs).
Status add_filter(CancelArgs& a, std::string_view list, void (pb::QueueRequest::*add)(const std::string&)) {
  a.filtered = true;
  for (const auto& item : split_list(list)) (a.filter.*add)(item);
  return Status::ok();
}

Status ok() { return Status::ok(); }

using Opt = CliOption<CancelArgs>;
using Q = pb::QueueRequest;

// scancel's options, with what each does on hq (docs/slurm-compat.md is made from these).
const std::vector<Opt>& cancel_options() {
  static const std::vector<Opt> table = [] {
    std::vector<Opt> t = {
      {"user", 'u', true, [](CancelArgs& a, std::string_view v) { return a.filtered = true, add_users(a.filter, std::string(v)); },
       false, "jobs of these users (names or uids, comma-separated)"},
      {"me", 0, false, [](CancelArgs& a, std::string_view) { return a.filtered = true, a.filter.add_users(current_user_name()), ok(); },
       false, "my jobs"},
      {"name", 'n', true, [](CancelArgs& a, std::string_view v) { return add_filter(a, v, &Q::add_names); }, false,
       "jobs with these names"},
      {"jobname", 0, true, [](CancelArgs& a, std::string_view v) { return add_filter(a, v, &Q::add_names); }, false,
       "jobs with these names (--name)"},
      {"state", 't', true, [](CancelArgs& a, std::string_view v) { return a.filtered = true, set_states(a.filter, std::string(v)); },
       false, "jobs in these states: PENDING, RUNNING, SUSPENDED (or PD, R, S), any case"},
      {"partition", 'p', true, [](CancelArgs& a, std::string_view v) { return add_filter(a, v, &Q::add_partitions); }, false,
       "jobs in these partitions"},
      {"account", 'A', true, [](CancelArgs& a, std::string_view v) { return add_filter(a, v, &Q::add_accounts); }, false,
       "jobs of these accounts"},
      {"qos", 'q', true, [](CancelArgs& a, std::string_view v) { return add_filter(a, v, &Q::add_qos); }, false,
       "jobs of these QOS"},
      {"reservation", 'R', true, [](CancelArgs& a, std::string_view v) { return add_filter(a, v, &Q::add_reservations); },
       false, "jobs of these advance reservations"},
      {"wckey", 0, true, [](CancelArgs& a, std::string_view v) { return add_filter(a, v, &Q::add_wckeys); }, false,
       "jobs of these wckeys"},
      {"nodelist", 'w', true, [](CancelArgs& a, std::string_view v) { return a.filtered = true, add_node_filter(a.filter, std::string(v)); },
       false, "jobs holding any of these nodes (a hostlist)"},
      {"interactive", 'i', false, [](CancelArgs& a, std::string_view) { return a.interactive = a.filtered = true, ok(); },
       false, "asks `Cancel job_id=N name=X partition=P [y/n]? ` for each job, cancels those answered y"},
      {"signal", 's', true, [](CancelArgs& a, std::string_view v) {
         auto n = signal_number(std::string(v));
         if (!n) return invalid("Unknown job signal: " + std::string(v));
         return a.ids.set_signal(*n), ok();
       }, false, "signals instead of cancelling (a name with or without SIG, or a number): the job's steps"},
      {"batch", 'b', false, [](CancelArgs& a, std::string_view) {
         return a.ids.set_signal_scope(std::max(a.ids.signal_scope(), 1)), ok();
       }, false, "with -s: the batch shell alone"},
      {"full", 'f', false, [](CancelArgs& a, std::string_view) { return a.ids.set_signal_scope(2), ok(); }, false,
       "with -s: the batch shell, its process group and the steps"},
      {"verbose", 'v', false, [](CancelArgs& a, std::string_view) { return a.verbose = true, ok(); }, false,
       "`scancel: Terminating job N` for each job, and the errors scancel otherwise keeps quiet"},
      {"json", 0, false, [](CancelArgs& a, std::string_view) { return a.json = true, ok(); }, false,
       "hq's own: the controller's answer as JSON"},
      {"quiet", 'Q', false, [](CancelArgs&, std::string_view) { return ok(); }, false,
       "taken: scancel prints nothing on success either way"},
      {"ctld", 0, false, [](CancelArgs&, std::string_view) { return ok(); }, false,
       "taken: hq always asks the controller"},
      {"clusters", 'M', true, [](CancelArgs&, std::string_view) { return ok(); }, false, "taken: hq is one cluster"},
      {"sibling", 0, true, [](CancelArgs&, std::string_view) { return ok(); }, false, "taken: no federation, no siblings"},
      {"hurry", 'H', false, [](CancelArgs&, std::string_view) { return ok(); }, false, "taken: no burst buffers to stage out"},
      {"cluster", 0, true, [](CancelArgs&, std::string_view) { return ok(); }, false, "", "clusters"},
    };
    // Slurm 22.05's src/scancel/opt.c; --json is hq's own.
    rank_as_slurm(t, {"account", "batch", "ctld", "cluster", "clusters", "full", "help", "hurry", "interactive",
                      "jobname", "me", "name", "nodelist", "partition", "qos", "quiet", "reservation", "sibling",
                      "signal", "state", "usage", "user", "verbose", "version", "wckey"});
    return t;
  }();
  return table;
}

// scancel -i: Slurm's question on stdout, a y or n line on stdin (end of input: no).
bool confirmed(const pb::Job& j) {
  std::string id = j.array_job_id() ? std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id())
                                    : std::to_string(j.job_id());
  for (;;) {
    hq::cout() << "Cancel job_id=" << id << " name=" << j.spec().name() << " partition=" << j.partition() << " [y/n]? "
              << std::flush;
    std::string line;
    if (!std::getline(hq::cin(), line)) return false;
    if (!line.empty() && (line[0] == 'y' || line[0] == 'Y')) return true;
    if (!line.empty() && (line[0] == 'n' || line[0] == 'N')) return false;
  }
}

// The ids of the jobs the filters pick (among the named ones, when there are some).
Result<std::vector<uint64_t>> filtered_jobs(CancelArgs& in) {
  auto client = connect_client();
  if (!client) return client.status();
  pb::QueueRequest q = in.filter;
  for (uint64_t id : in.ids.job_ids()) q.add_job_ids(id);
  for (const auto& t : in.ids.tasks()) q.add_job_ids(std::stoull(t.substr(0, t.find('_'))));
  auto reply = query_jobs(**client, q);
  if (!reply) return reply.status();
  bool named = in.ids.job_ids_size() + in.ids.tasks_size() > 0;
  auto was_named = [&](const pb::Job& j) {
    for (uint64_t id : in.ids.job_ids())
      if (j.job_id() == id || j.array_job_id() == id) return true;
    std::string task = std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id());
    for (const auto& t : in.ids.tasks())
      if (j.array_job_id() != 0 && t == task) return true;
    return false;
  };
  std::vector<uint64_t> out;
  for (const auto& j : reply->jobs())
    if ((j.state() == "PENDING" || j.state() == "RUNNING") && (!named || was_named(j)) && (!in.interactive || confirmed(j)))
      out.push_back(j.job_id());
  return out;
}

// scancel's exit code after a refusal: Slurm's error number of the last one, as exit() keeps
// it (its low 8 bits: ESLURM_ACCESS_DENIED 2002 exits 210); 1 for a text hq does not number.
int scancel_exit_code(const std::string& error) {
  static const std::pair<const char*, int> kNumbers[] = {
      {"Access/permission denied", 2002},
      {"Job can not be altered now, try again later", 2020},
      {"Invalid job id specified", 2017},
      {"Job/step already completing or completed", 2021},
  };
  for (const auto& [text, number] : kNumbers)
    if (error.size() >= std::strlen(text) && error.compare(error.size() - std::strlen(text), std::string::npos, text) == 0)
      return number & 0xff;
  return 1;
}

}  // namespace

std::vector<OptionDocRow> scancel_option_docs() {
  std::vector<OptionDocRow> rows;
  for (const auto& o : cancel_options())
    if (o.set && o.alias_for.empty()) rows.push_back({option_doc_names(o.short_name, {o.long_name}), std::string(o.doc)});
  // Answered before the options are read (run_cancel).
  rows.push_back({"`--help`", "hq's usage"});
  rows.push_back({"`--usage`", "Slurm 22.05's brief usage"});
  rows.push_back({"`-V`, `--version`", "the version"});
  return rows;
}

std::string scancel_prefix_answer(std::string_view prefix) { return getopt_prefix_answer(cancel_options(), prefix); }

int run_cancel(const Args& args) {
  std::string prog = prog_name(args[0]);
  if (asks_help(args)) return hq::cout() << kCancelUsage, 0;
  for (size_t i = 1; i < args.size(); ++i) {  // scancel's options take their values joined or next: none is one of these
    CliMatch<CancelArgs> m = args[i].rfind("--", 0) == 0 ? match_long_option(cancel_options(), args[i]) : CliMatch<CancelArgs>{};
    MetaOption meta = args[i] == "-V" ? MetaOption::kVersion : m.inline_value ? MetaOption::kNone : m.meta;  // "--help=1": refused
    if (meta == MetaOption::kHelp) return hq::cout() << kCancelUsage, 0;
    if (meta != MetaOption::kNone) return *answer_meta_option(meta, "scancel", "");
  }
  CancelArgs in;
  for (size_t i = 1; i < args.size(); ++i) {
    Status s = args[i].size() > 1 && args[i][0] == '-' ? apply_cli_option(cancel_options(), args, i, in)
                                                        : add_job(in.ids, args[i]);
    if (s) continue;
    if (s.message().rfind("Invalid job state", 0) == 0 || s.message().rfind("Unknown job signal", 0) == 0)
      return hq::cerr() << s.message() << "\n", 1;  // as scancel: no name
    return option_failure(prog, s);  // getopt's words and hint, as Slurm's scancel; else "scancel: error: ..."
  }
  pb::Envelope env;
  auto* c = env.mutable_cancel();
  if (in.filtered) {
    auto picked = filtered_jobs(in);
    if (!picked) return fail(prog, picked.status());
    if (picked->empty()) return 0;  // nothing matched: nothing to do, as scancel
    for (uint64_t id : *picked) c->add_job_ids(id);
  } else {
    *c = in.ids;
  }
  if (c->job_ids_size() == 0 && c->tasks_size() == 0) return fail(prog, invalid("No job identification provided"));
  c->set_signal(in.ids.signal());
  c->set_signal_scope(in.ids.signal() > 0 ? in.ids.signal_scope() : 0);
  c->set_request_key(new_request_key());
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail(prog, reply.status());
  if (in.json && !print_json(reply->cancel_reply())) return 1;
  if (in.verbose && !in.json && c->signal() == 0)  // Slurm's -v line per job asked for
    for (uint64_t id : c->job_ids()) hq::cerr() << prog << ": Terminating job " << id << "\n";
  int rc = 0;
  for (const auto& e : reply->cancel_reply().errors()) {
    bool quiet = prog == "scancel" && quiet_in_scancel(e);
    if (!quiet) rc = prog == "scancel" ? scancel_exit_code(e) : 1;
    if (!in.json && (!quiet || in.verbose)) hq::cerr() << prog << ": error: " << e << "\n";
  }
  return rc;
}

}  // namespace hq::cmd
