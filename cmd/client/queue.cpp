// `hq queue` / squeue: lists jobs in squeue's default format or -o's (cmd/client/queue_format), or as JSON.
#include <unistd.h>

#include <google/protobuf/arena.h>

#include <cctype>
#include <ctime>
#include <thread>

#include "cmd/client/job_query.hpp"
#include "cmd/client/option_docs.hpp"
#include "cmd/client/option_table.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_usage.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/client/queue_stream.hpp"
#include "cmd/client/slurm_json.hpp"
#include "cmd/client/steps.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "cmd/users.hpp"
#include "core/cli_options.hpp"
#include "core/hostlist.hpp"
#include "core/job.hpp"
#include "core/job_filter.hpp"
#include "core/option_doc.hpp"
#include "core/squeue_args.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"
#include "net/convert.hpp"
#include "net/frame.hpp"

namespace hq::cmd {
namespace {

// squeue --start: "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R", pending jobs only.
void print_start(const pb::QueueReply& q, bool header) {
  if (header)
    hq::cout() << field("JOBID", 18) << " " << field("PARTITION", 9) << " " << field("NAME", 8) << " "
              << field("USER", 8) << " " << field("ST", 2) << " " << field("START_TIME", 19) << " " << field("NODES", 6)
              << " " << field("SCHEDNODES", 20, false) << " NODELIST(REASON)\n";
  for (const auto& j : q.jobs()) {
    if (j.state() != "PENDING") continue;
    std::string start = j.expected_start() > 0 ? local_time(j.expected_start()) : "N/A";
    std::string sched = j.sched_nodes().empty() ? "(null)" : j.sched_nodes();
    hq::cout() << field(squeue_value(j, 'i', q.now()), 18) << " " << field(squeue_value(j, 'P', q.now()), 9) << " "
              << field(j.spec().name(), 8) << " "
              << field(j.spec().user(), 8) << " " << field("PD", 2) << " " << field(start, 19) << " "
              << field(std::to_string(std::max(1, j.spec().nodes_min())), 6) << " " << field(sched, 20, false) << " ("
              << j.reason() << ")\n";
  }
}

// squeue's filters into the request (the controller applies them); errors in Slurm's words.
struct QueueArgs {
  std::string jobs, states, users, partitions, names, accounts, qos, nodes, licenses, format, fields, sort;
  std::string reservations;
  bool json = false, yaml = false, noheader = false, start = false, long_format = false, me = false, array = false;
  bool all = false, local = false, federation = false, sibling = false, priority = false;
  SqueueWords words;  // -j/-s and the words after the options (core/squeue_args)
  int iterate = 0, verbose = 0;
  MetaOption meta = MetaOption::kNone;  // --help, --usage or -V, where the options stop
};

Status set_filters(pb::QueueRequest& q, const QueueArgs& a) {
  if (!a.states.empty()) {
    JobFilter check;
    if (Status s = parse_state_filter(a.states, check); !s) return s;
    q.set_state_filter(a.states);
  }
  for (const auto& u : split_list(a.users)) {
    auto name = user_of(u);
    if (!name) return invalid("Invalid user: " + u);
    q.add_users(*name);
  }
  if (a.me) q.add_users(current_user_name());
  for (const auto& p : split_list(a.partitions)) q.add_partitions(p);
  for (const auto& n : split_list(a.names)) q.add_names(n);
  for (const auto& acct : split_list(a.accounts)) q.add_accounts(acct);
  for (const auto& qos : split_list(a.qos)) q.add_qos(qos);
  for (const auto& r : split_list(a.reservations)) q.add_reservations(r);
  for (const auto& l : split_list(a.licenses)) q.add_licenses(l);
  return a.nodes.empty() ? Status::ok() : add_node_filter(q, a.nodes);
}

using QueueOption = CliOption<QueueArgs>;

Status set_iterate(QueueArgs& a, std::string_view value) {
  auto seconds = parse_int(value, 1, 86400);
  if (!seconds) return invalid("--iterate=" + std::string(value));  // Slurm's squeue: error("--iterate=%s")
  a.iterate = static_cast<int>(*seconds);
  return Status::ok();
}

// squeue's options (Slurm 22.05's src/squeue/opts.c), read by core/cli_options' getopt-like
// parser after core/squeue_args has spelled out bundles and taken -j and -s (listed here for
// --help and the docs). A table of plain functions, built once: CLI11 built three dozen
// options anew at every squeue with an option (0.4 ms of its 4 ms here) and the C++ locale
// with them.
const std::vector<QueueOption>& queue_options() {
  auto noop = [](QueueArgs&, std::string_view) { return Status::ok(); };
  static const std::vector<QueueOption> table = [&] {
    std::vector<QueueOption> t;
    t.push_back(meta_option<QueueArgs>("help", 0, MetaOption::kHelp, "print help"));
    t.push_back({"jobs", 'j', false, noop, true, "[=IDS] these jobs (comma-separated; or the word after the options)"});
    t.push_back(alias_of(t.back(), "job"));
    t.push_back(text_option("reservation", 'R', &QueueArgs::reservations, "jobs in this advance reservation"));
    t.push_back(text_option("states", 't', &QueueArgs::states, "comma-separated states in any case (pending,R,CD,...) or all"));
    t.push_back(text_option("user", 'u', &QueueArgs::users, "these users' jobs (comma-separated names or uids)"));
    t.push_back(alias_of(t.back(), "users"));
    t.push_back(flag_option("me", 0, &QueueArgs::me, "my jobs"));
    t.push_back(text_option("partitions", 'p', &QueueArgs::partitions, "jobs in these partitions (comma-separated)"));
    t.push_back(text_option("name", 'n', &QueueArgs::names, "jobs with these names (comma-separated)"));
    t.push_back(text_option("accounts", 'A', &QueueArgs::accounts, "jobs of these accounts (comma-separated)"));
    t.push_back(text_option("qos", 'q', &QueueArgs::qos, "jobs of these QOS (comma-separated)"));
    t.push_back(text_option("nodelist", 'w', &QueueArgs::nodes, "jobs on these nodes (a hostlist)"));
    t.push_back(alias_of(t.back(), "node"));
    t.push_back(alias_of(t.back(), "nodes"));
    t.push_back(text_option("licenses", 'L', &QueueArgs::licenses, "jobs using these licenses (hq tracks none: no job)"));
    t.push_back(text_option("format", 'o', &QueueArgs::format,
                            "fields: %[.][width]letter (Slurm's letters), e.g. \"%.18i %T %R\""));
    t.push_back(text_option("Format", 'O', &QueueArgs::fields,
                            "fields: name[:[.]width],... (Slurm's names), e.g. JobID,State:.10"));
    t.push_back(text_option("sort", 'S', &QueueArgs::sort, "sort keys: [-]letter,... (Slurm's; default P,t,-p)"));
    t.push_back({"iterate", 'i', true, set_iterate, false, "print again every SECONDS"});
    t.push_back(flag_option("array", 'r', &QueueArgs::array, "one line per array task (pending tasks are otherwise one line)"));
    t.push_back(on_line_of(t.back(), "array-unique"));  // its own option in Slurm's table: "--ar" is ambiguous
    t.push_back(flag_option("json", 0, &QueueArgs::json, "JSON output"));
    t.push_back(flag_option("yaml", 0, &QueueArgs::yaml, "YAML output (as Slurm's)"));
    t.push_back(flag_option("noheader", 'h', &QueueArgs::noheader, "no header line"));
    t.push_back(flag_option("start", 0, &QueueArgs::start, "pending jobs with their expected start times"));
    t.push_back({"steps", 's', false, noop, true,
                 "[=J.S,...] job steps instead of jobs (these, or the word after the options)"});
    t.push_back(alias_of(t.back(), "step"));
    t.push_back({"verbose", 'v', false, [](QueueArgs& a, std::string_view) { return ++a.verbose, Status::ok(); }, false,
                 "print the options taken (to stdout, as Slurm's)"});
    t.push_back(flag_option("long", 'l', &QueueArgs::long_format, "the long layout (with -s: the time first)"));
    t.push_back(flag_option("all", 'a', &QueueArgs::all, "taken: hq hides no partition"));
    t.push_back(flag_option("local", 0, &QueueArgs::local, "taken: hq is one cluster"));
    t.push_back(flag_option("federation", 0, &QueueArgs::federation, "taken: hq is one cluster"));
    t.push_back(flag_option("sibling", 0, &QueueArgs::sibling, "taken: hq is one cluster"));
    t.push_back(alias_of(t.back(), "sib"));
    t.push_back(flag_option("priority", 'P', &QueueArgs::priority, "taken: a job is shown once, in its partition"));
    t.push_back({"hide", 0, false, noop, false, "taken: hq is one cluster and hides no partition"});
    t.push_back(on_line_of(t.back(), "noconvert"));
    t.push_back({"clusters", 'M', true, noop, false, "taken: hq is one cluster"});
    t.push_back(alias_of(t.back(), "cluster"));
    t.push_back(meta_option<QueueArgs>("version", 'V', MetaOption::kVersion, "print the version"));
    t.push_back(meta_option<QueueArgs>("usage", 0, MetaOption::kUsage, "print a brief usage"));
    rank_as_slurm(t, {"accounts", "all", "array", "array-unique", "Format", "format", "federation", "help", "hide",
                      "iterate", "jobs", "json", "local", "long", "licenses", "cluster", "clusters", "me", "name",
                      "noconvert", "node", "nodes", "nodelist", "noheader", "partitions", "priority", "qos",
                      "reservation", "sib", "sibling", "sort", "start", "steps", "states", "usage", "user", "users",
                      "verbose", "version", "yaml"});
    return t;
  }();
  return table;
}

// Slurm's job state name for a -t word (a name or code in any case), as -vv lists it.
std::string state_name(std::string_view word) {
  static const char* kStates[][2] = {
      {"PD", "PENDING"},       {"R", "RUNNING"},       {"S", "SUSPENDED"},     {"CD", "COMPLETED"},
      {"CA", "CANCELLED"},     {"F", "FAILED"},        {"TO", "TIMEOUT"},      {"NF", "NODE_FAIL"},
      {"PR", "PREEMPTED"},     {"BF", "BOOT_FAIL"},    {"DL", "DEADLINE"},     {"OOM", "OUT_OF_MEMORY"},
      {"CG", "COMPLETING"},    {"CF", "CONFIGURING"},  {"RS", "RESIZING"},     {"RD", "RESV_DEL_HOLD"},
      {"RQ", "REQUEUED"},      {"RF", "REQUEUE_FED"},  {"RH", "REQUEUE_HOLD"}, {"RV", "REVOKED"},
      {"SI", "SIGNALING"},     {"SE", "SPECIAL_EXIT"}, {"SO", "STAGE_OUT"},    {"ST", "STOPPED"}};
  std::string up(word);
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const auto& st : kStates)
    if (up == st[0] || up == st[1]) return st[1];
  return up;
}

const char* truth(bool b) { return b ? "true" : "false"; }

// -vv's lists after the dump (Slurm prints a name's first byte as a number: "%u" of a char).
void print_option_lists(const QueueArgs& a, const std::string& users) {
  int i = 0;
  for (const auto& id : split_list(a.words.jobs)) hq::cout() << "job_list[" << i++ << "] = " << id << "\n";
  i = 0;
  for (const auto& n : split_list(a.names))
    hq::cout() << "name_list[" << i++ << "] = " << static_cast<unsigned>(static_cast<unsigned char>(n[0])) << "\n";
  i = 0;
  for (const auto& l : split_list(a.licenses)) hq::cout() << "licenses_list[" << i++ << "] = " << l << "\n";
  i = 0;
  for (const auto& p : split_list(a.partitions)) hq::cout() << "part_list[" << i++ << "] = " << p << "\n";
  i = 0;
  if (to_lower(a.states) == "all") hq::cout() << "state_list = all\n";
  else
    for (const auto& st : split_list(a.states)) hq::cout() << "state_list[" << i++ << "] = " << state_name(st) << "\n";
  i = 0;
  for (const auto& st : split_list(a.words.steps)) hq::cout() << "step_list[" << i++ << "] = " << st << "\n";
  i = 0;
  for (const auto& u : split_list(users)) {
    auto entry = passwd_by_name(u);
    hq::cout() << "user_list[" << i++ << "] = " << (entry ? std::to_string(entry->uid) : u) << "\n";
  }
}

// -v: the options as squeue's _print_options prints them (stdout, before anything else);
// the fields squeue has and hq takes, in Slurm's layout.
void print_options(const QueueArgs& a) {
  std::string nodes;
  if (auto names = expand_hostlist(a.nodes); names && !a.nodes.empty()) nodes = compress_hostlist(*names);
  std::string users = a.me ? std::to_string(geteuid()) : a.users;
  std::string format = !a.format.empty() ? a.format : a.start && a.fields.empty() ? std::string(kSqueueStartFormat) : "";
  hq::cout() << "-----------------------------\n"
            << "all         = " << truth(a.all || !a.partitions.empty()) << "\n"
            << "array       = " << truth(a.array) << "\n"
            << "federation  = " << truth(a.federation) << "\n"
            << "format      = " << or_null(format) << "\n"
            << "iterate     = " << a.iterate << "\n"
            << "job_flag    = " << (a.words.jobs_flag ? 1 : 0) << "\n"
            << "jobs        = " << or_null(a.words.jobs) << "\n"
            << "licenses    = " << or_null(a.licenses) << "\n"
            << "local       = " << truth(a.local) << "\n"
            << "names       = " << or_null(a.names) << "\n"
            << "nodes       = " << nodes << "\n"
            << "partitions  = " << or_null(a.partitions) << "\n"
            << "priority    = " << truth(a.priority) << "\n"
            << "reservation = " << or_null(a.reservations) << "\n"
            << "sibling      = " << truth(a.sibling) << "\n"
            << "sort        = " << or_null(!a.sort.empty() ? a.sort : a.start ? "S" : "") << "\n"
            << "start_flag  = " << (a.start ? 1 : 0) << "\n"
            << "states      = " << or_null(!a.states.empty() ? a.states : a.start ? "PD" : "") << "\n"
            << "step_flag   = " << (a.words.steps_flag ? 1 : 0) << "\n"
            << "steps       = " << or_null(a.words.steps) << "\n"
            << "users       = " << or_null(users) << "\n"
            << "verbose     = " << a.verbose << "\n";
  if (a.verbose > 1) print_option_lists(a, users);
  hq::cout() << "-----------------------------\n\n\n";
}

// squeue's output options into the request, for the controller to make the text with.
void set_render(pb::ListingRender& r, const QueueArgs& a) {
  r.set_wanted(true);
  if (!a.format.empty()) r.set_format(a.format);
  else if (!a.fields.empty()) r.set_fields(a.fields);
  else if (a.long_format) r.set_format(std::string(kSqueueLongFormat));
  r.set_sort(a.sort);
  r.set_header(!a.noheader);
  r.set_one_per_task(a.array);
}

bool one_user_not_root(const pb::QueueRequest& q) {
  if (q.users_size() != 1) return false;
  auto entry = passwd_by_name(q.users(0));
  return entry && entry->uid != 0;
}

std::string queue_help() {
  return option_help("Usage: squeue [OPTIONS]   (hq answers as Slurm's squeue; docs/slurm-compat.md)",
                     option_lines(queue_options()));
}

// squeue's words into `a`: -j/-s and what follows the options (core/squeue_args), then the
// option table, in order. An exit code when squeue is done (help, an error), nullopt when
// it goes on.
std::optional<int> parse_queue_args(QueueArgs& a, const Args& args, const std::string& prog) {
  auto words = squeue_words(args, {[](std::string_view w) { return takes_next_word(queue_options(), w); },
                                   [](std::string_view w) { return long_option_name(queue_options(), w); }});
  if (!words) {
    hq::cerr() << prog << ": error: " << words.status().message() << "\n";
    if (words.status().message().rfind("Unrecognized option", 0) == 0) hq::cout() << slurm_brief_usage("squeue");
    return 1;
  }
  a.words = std::move(words.value());
  const std::vector<std::string>& rest = a.words.rest;
  for (size_t i = 0; i < rest.size(); ++i) {
    Status s = apply_cli_option(queue_options(), rest, i, a);
    if (a.meta != MetaOption::kNone) return answer_meta_option(a.meta, "squeue", queue_help());
    if (!s) return option_failure(prog, s);
  }
  return std::nullopt;
}

// -s [LIST]: each "J.S" of the list (Slurm's squeue needs the step part).
std::optional<int> check_step_list(const std::string& prog, const std::string& list) {
  for (const auto& item : split_list(list))
    if (item.find('.') == std::string::npos) {
      hq::cerr() << prog << ": error: Invalid job_step id: " << item << ".??\n";
      return 1;
    }
  return std::nullopt;
}

}  // namespace

std::vector<OptionDocRow> squeue_option_docs() { return option_doc_rows(option_lines(queue_options())); }
std::string squeue_prefix_answer(std::string_view prefix) { return getopt_prefix_answer(queue_options(), prefix); }

int queue_with(const Args& args, const QueueFetch& fetch, const std::function<std::string()>& cluster) {
  std::string prog = prog_name(args[0]);
  QueueArgs a;
  if (args.size() > 1)
    if (auto done = parse_queue_args(a, args, prog)) return *done;
  if (a.words.steps_flag)
    if (auto bad = check_step_list(prog, a.words.steps)) return *bad;
  if (a.verbose) print_options(a);
  pb::QueueRequest request;
  auto* q = &request;
  auto named = parse_job_id_args(split_list(a.words.jobs));
  if (!named) {  // squeue's words: "Invalid job id: X"
    std::string why(named.status().message());
    if (auto at = why.find(" specified: "); at != std::string::npos) why = why.substr(0, at) + ":" + why.substr(at + 11);
    hq::cerr() << prog << ": error: " << why << "\n";
    return 1;
  }
  add_named_jobs(*q, *named);
  if (a.words.steps_flag) {
    std::vector<uint64_t> ids(q->job_ids().begin(), q->job_ids().end());
    return queue_steps(prog, ids, split_list(a.words.steps), !a.noheader, a.long_format, a.json);
  }
  if (a.start && a.states.empty()) a.states = "PD";
  if (Status s = set_filters(*q, a); !s) {
    for (std::string_view line : split(s.message(), '\n')) hq::cerr() << prog << ": error: " << line << "\n";
    return 1;
  }
  ColumnFormat format = !a.format.empty()   ? parse_squeue_format(a.format)
                        : !a.fields.empty() ? parse_squeue_fields(a.fields)
                        : a.long_format     ? parse_squeue_format(kSqueueLongFormat)
                                            : parse_squeue_format(kSqueueDefaultFormat);
  for (const auto& e : format.errors) hq::cerr() << prog << ": error: " << e << "\n";
  q->set_with_script(a.json || a.yaml);  // the whole record (owners and admins only)
  std::string_view sort_keys = a.sort.empty() ? kSqueueDefaultSort : std::string_view(a.sort);
  q->set_brief(!a.json && !a.yaml && !a.start && listing_is_brief(format, sort_keys));
  // Grouped in the controller unless a task was named (12_5): it is picked from the records.
  q->set_collapse_arrays(q->brief() && !a.array && named->tasks.empty() && sort_keeps_array_groups(sort_keys));
  // The controller makes the text where it can (-v counts the records; a named task is
  // picked from them).
  if (q->brief() && !a.verbose && named->tasks.empty()) {
    set_render(*q->mutable_render(), a);
    q->set_listing_as_file(true);  // printed as it comes: the controller may pass the file it keeps
  }
  for (;;) {
    auto answer = fetch(*q);
    if (!answer) return fail(prog, answer.status());
    pb::QueueReply& out = *answer->reply;
    if (q->job_ids_size() == 1 && out.unknown_ids_size() == 1) {  // as Slurm's slurm_load_job of one id
      hq::cerr() << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    // A brief listing's records are formatted as they are parsed, unless its arrays'
    // tasks must be grouped here or a task was named (then parsed first, and shown below).
    std::optional<std::string> streamed;
    if (!answer->records.empty() && named->tasks.empty()) {
      auto text = format_records(answer->records, out.now(), format, sort_keys, !a.noheader, a.array);
      if (!text) return fail(prog, text.status());
      streamed = std::move(*text);
    }
    if (!answer->records.empty() && !streamed)
      if (Status s = parse_records(answer->records, out); !s) return fail(prog, s);
    keep_named_tasks(out, *named);
    if ((a.json || a.yaml) && prog == "squeue") {  // Slurm's shape; `hq queue --json`: hq's records
      sort_jobs(out, sort_keys);
      std::string name = cluster ? cluster() : "";
      hq::cout() << (a.yaml ? squeue_slurm_yaml(out, name) : squeue_slurm_json(out, name));
      return 0;
    }
    if (a.json || a.yaml) return (a.yaml ? print_yaml(out) : print_json(out)) ? 0 : 1;
    if (!a.noheader && (a.iterate || a.long_format || a.verbose)) print_date();
    if (a.verbose)  // Slurm's last update time is 0 when one job, or one user other than root, was asked for
      hq::cout() << "last_update_time=" << (q->job_ids_size() == 1 || one_user_not_root(*q) ? 0 : out.now())
                << " records=" << (streamed ? answer->records.size() : static_cast<size_t>(out.jobs_size())) << "\n";
    if (a.start) {
      print_start(out, !a.noheader);
    } else if (answer->listing_file >= 0) {  // made and kept by the controller
      Status printed = print_file(answer->listing_file, answer->listing_file_bytes);
      ::close(answer->listing_file);
      if (!printed) return fail(prog, printed);
    } else if (answer->listing) {  // made by the controller
      print_text(*answer->listing);
    } else if (streamed) {
      print_text(*streamed);
    } else {
      sort_jobs(out, sort_keys);
      print_formatted(queue_rows(out, a.array), out.now(), format, !a.noheader);
    }
    if (!a.iterate) return 0;
    hq::cout() << "\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::seconds(a.iterate));
  }
}

namespace {
// A listing that names no jobs, states, users, ... may hold every job in the queue.
bool may_list_every_job(const pb::QueueRequest& q) {
  return q.job_ids_size() == 0 && q.states_size() == 0 && q.users_size() == 0 && q.names_size() == 0 &&
         q.partitions_size() == 0 && q.accounts_size() == 0 && q.nodes_size() == 0;
}

// The jobs `q` asks for, on `arena`. A brief listing's records come unparsed when they
// fit one page (queue_with prints them as it parses them); the pages of a longer one are
// parsed as they come.
Result<QueueAnswer> fetch_listing(net::RpcClient& client, const pb::QueueRequest& q, google::protobuf::Arena& arena) {
  if (!q.brief()) {
    auto all = query_jobs(client, q, arena);
    if (!all) return all.status();
    return QueueAnswer{*all, {}, {}};
  }
  pb::Envelope env;
  *env.mutable_queue() = q;
  auto first = client.call_unparsed_jobs(std::move(env));
  if (!first) return first.status();
  auto* reply = google::protobuf::Arena::CreateMessage<pb::QueueReply>(&arena);
  *reply = first->parts.rest.queue_reply();  // now, more, unknown ids: a few bytes
  arena.Own(first->frame.release());         // what the records view
  QueueAnswer answer{reply, std::move(first->parts.jobs), first->parts.listing};
  if (reply->listing_file_bytes() > 0) {
    answer.listing_file = client.take_passed_file();
    answer.listing_file_bytes = reply->listing_file_bytes();
    if (answer.listing_file < 0) return internal("the controller's answer names a listing file that did not come");
    return answer;
  }
  if (!reply->more() || answer.listing) return answer;
  if (Status s = parse_records(answer.records, *reply); !s) return s;
  auto all = query_jobs(client, q, arena, reply);
  if (!all) return all.status();
  return QueueAnswer{*all, {}, {}};
}

}  // namespace

int run_queue(const Args& args) {
  std::unique_ptr<net::RpcClient> client;
  // Each answer on an arena of its own (freed when `squeue -i` asks again). The last is
  // never freed: the process ends once it is printed, and its memory goes back whole, not
  // record by record (that would cost a quarter of a long listing's time).
  std::unique_ptr<google::protobuf::Arena> arena;
  google::protobuf::ArenaOptions sizes;
  sizes.start_block_size = 64 << 10;
  sizes.max_block_size = 4 << 20;
  int rc = queue_with(args, [&](const pb::QueueRequest& q) -> Result<QueueAnswer> {
    if (!client) {
      // Text to print, most likely: its buffer only, mapped when a long one comes, filtered
      // or not (`squeue --me` of a user with 5,000 jobs: 0.9 ms of faults without it).
      if (q.render().wanted()) {
        net::FrameDecoder::on_long_frame(prefault_text_hook);
      } else if (may_list_every_job(q)) {
        prefer_huge_heap_pages(64 << 20);
        net::FrameDecoder::on_long_frame(prefault_heap_hook);  // the reply's heap mapped in one go
      }
      auto c = connect_client();
      if (!c) return c.status();
      client = std::move(c.value());
    }
    arena = std::make_unique<google::protobuf::Arena>(sizes);
    return fetch_listing(*client, q, *arena);
  }, [&] { return client ? client->cluster() : std::string(); });
  static_cast<void>(arena.release());
  return rc;
}

}  // namespace hq::cmd
