// `hq queue` / squeue: lists jobs in squeue's default format or -o's (cmd/client/queue_format), or as JSON.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cmd/client/job_query.hpp"
#include "cmd/client/steps.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/users.hpp"
#include "core/job.hpp"
#include "core/job_filter.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

// squeue --start: "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R", pending jobs only.
void print_start(const pb::QueueReply& q, bool header) {
  if (header)
    std::cout << field("JOBID", 18) << " " << field("PARTITION", 9) << " " << field("NAME", 8) << " "
              << field("USER", 8) << " " << field("ST", 2) << " " << field("START_TIME", 19) << " " << field("NODES", 6)
              << " " << field("SCHEDNODES", 20, false) << " NODELIST(REASON)\n";
  for (const auto& j : q.jobs()) {
    if (j.state() != "PENDING") continue;
    std::string start = j.expected_start() > 0 ? local_time(j.expected_start()) : "N/A";
    std::string sched = j.sched_nodes().empty() ? "(null)" : j.sched_nodes();
    std::cout << field(squeue_value(j, 'i', q.now()), 18) << " " << field(squeue_value(j, 'P', q.now()), 9) << " "
              << field(j.spec().name(), 8) << " "
              << field(j.spec().user(), 8) << " " << field("PD", 2) << " " << field(start, 19) << " "
              << field(std::to_string(std::max(1, j.spec().nodes_min())), 6) << " " << field(sched, 20, false) << " ("
              << j.reason() << ")\n";
  }
}

// squeue's filters into the request (the controller applies them); errors in Slurm's words.
Status set_filters(pb::QueueRequest& q, const std::string& states, const std::string& users, bool me,
                   const std::string& partitions, const std::string& names, const std::string& accounts) {
  if (!states.empty()) {
    JobFilter check;
    if (Status s = parse_state_filter(states, check); !s) return s;
    q.set_state_filter(states);
  }
  for (const auto& u : split_list(users)) {
    auto name = user_of(u);
    if (!name) return invalid("Invalid user: " + u);
    q.add_users(*name);
  }
  if (me) q.add_users(current_user_name());
  for (const auto& p : split_list(partitions)) q.add_partitions(p);
  for (const auto& n : split_list(names)) q.add_names(n);
  for (const auto& a : split_list(accounts)) q.add_accounts(a);
  return Status::ok();
}

}  // namespace

int run_queue(const Args& args) {
  std::string prog = prog_name(args[0]);
  CLI::App app{"hq queue: list jobs (squeue)"};
  app.set_help_flag("--help", "print help");
  std::string jobs, states, users, partitions, names, accounts, format_text;
  bool json = false, noheader = false, start = false, steps = false, long_format = false, me = false, array = false;
  app.add_option("-j,--jobs", jobs, "comma-separated job ids");
  app.add_option("-t,--states", states, "comma-separated states in any case (pending,R,CD,...) or all");
  app.add_option("-u,--user", users, "these users' jobs (comma-separated names or uids)");
  app.add_flag("--me", me, "my jobs");
  app.add_option("-p,--partition", partitions, "jobs in these partitions (comma-separated)");
  app.add_option("-n,--name", names, "jobs with these names (comma-separated)");
  app.add_option("-A,--account", accounts, "jobs of these accounts (comma-separated)");
  app.add_option("-o,--format", format_text, "fields: %[.][width]letter (Slurm's letters), e.g. \"%.18i %T %R\"");
  app.add_flag("-r,--array", array, "one line per array task (pending tasks are otherwise one line)");
  app.add_flag("--json", json, "JSON output");
  app.add_flag("-h,--noheader", noheader, "no header line");
  app.add_flag("--start", start, "pending jobs with their expected start times");
  app.add_flag("-s,--steps", steps, "job steps instead of jobs");
  app.add_flag("-l,--long", long_format, "with -s: the time first");
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {  // squeue's way: one line, a hint, exit 1 (help exits 0)
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << prog << ": error: " << e.what() << "\nTry \"" << prog << " --help\" for more information\n";
    return 1;
  }
  pb::QueueRequest request;
  auto* q = &request;
  auto named = parse_job_id_args(split_list(jobs));
  if (!named) return fail(prog, named.status());
  for (uint64_t id : named->ids) q->add_job_ids(id);
  if (steps) {
    std::vector<uint64_t> ids(q->job_ids().begin(), q->job_ids().end());
    return queue_steps(prog, ids, !noheader, long_format, json);
  }
  if (Status s = set_filters(*q, states, users, me, partitions, names, accounts); !s) {
    for (std::string_view line : split(s.message(), '\n')) std::cerr << prog << ": error: " << line << "\n";
    return 1;
  }
  q->set_with_script(json);  // the whole record (owners and admins only)
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = query_jobs(**client, *q);
  if (!reply) return fail(prog, reply.status());
  pb::QueueReply& out = reply.value();
  if (q->job_ids_size() == 1 && out.unknown_ids_size() == 1) {  // as Slurm's slurm_load_job of one id
    std::cerr << "slurm_load_jobs error: Invalid job id specified\n";
    return 1;
  }
  keep_named_tasks(out, *named);
  if (json) return print_json(out) ? 0 : 1;
  if (start) {
    print_start(out, !noheader);
    return 0;
  }
  bool given = app.count("--format") > 0;
  SqueueFormat format = parse_squeue_format(given ? std::string_view(format_text) : kSqueueDefaultFormat);
  for (const auto& e : format.errors) std::cerr << prog << ": error: " << e << "\n";
  sort_like_squeue(out);
  print_formatted(queue_rows(out, array), out.now(), format, !noheader);
  return 0;
}

}  // namespace hq::cmd
