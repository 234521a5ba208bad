// `hq queue` / squeue: lists jobs in squeue's default format or -o's (cmd/client/queue_format), or as JSON.
#include <ctime>
#include <iostream>
#include <thread>

#include "cmd/client/job_query.hpp"
#include "cmd/client/steps.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_cli.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/client/slurm_json.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/users.hpp"
#include "core/job.hpp"
#include "core/hostlist.hpp"
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
struct QueueArgs {
  std::string jobs, states, users, partitions, names, accounts, qos, nodes, licenses, format, fields, sort;
  std::string reservations;
  bool json = false, yaml = false, noheader = false, start = false, steps = false, long_format = false, me = false,
       array = false;
  int iterate = 0;
  TakenOptions taken;
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

std::unique_ptr<CLI::App> queue_parser(QueueArgs& a) {
  auto app = std::make_unique<CLI::App>("hq queue: list jobs (squeue)");
  app->set_help_flag("--help", "print help");
  app->add_option("-j,--jobs,--job", a.jobs, "comma-separated job ids");
  app->add_option("-R,--reservation", a.reservations, "jobs in this advance reservation");
  app->add_option("-t,--states", a.states, "comma-separated states in any case (pending,R,CD,...) or all");
  app->add_option("-u,--user", a.users, "these users' jobs (comma-separated names or uids)");
  app->add_flag("--me", a.me, "my jobs");
  app->add_option("-p,--partition", a.partitions, "jobs in these partitions (comma-separated)");
  app->add_option("-n,--name", a.names, "jobs with these names (comma-separated)");
  app->add_option("-A,--account", a.accounts, "jobs of these accounts (comma-separated)");
  app->add_option("-q,--qos", a.qos, "jobs of these QOS (comma-separated)");
  app->add_option("-w,--nodelist", a.nodes, "jobs on these nodes (a hostlist)");
  app->add_option("-L,--licenses", a.licenses, "jobs using these licenses (hq tracks none: no job)");
  app->add_option("-o,--format", a.format, "fields: %[.][width]letter (Slurm's letters), e.g. \"%.18i %T %R\"");
  app->add_option("-O,--Format", a.fields, "fields: name[:[.]width],... (Slurm's names), e.g. JobID,State:.10");
  app->add_option("-S,--sort", a.sort, "sort keys: [-]letter,... (Slurm's; default P,t,-p)");
  app->add_option("-i,--iterate", a.iterate, "print again every SECONDS")->check(CLI::Range(1, 86400));
  app->add_flag("-r,--array,--array-unique", a.array, "one line per array task (pending tasks are otherwise one line)");
  app->add_flag("--json", a.json, "JSON output");
  app->add_flag("--yaml", a.yaml, "YAML output (JSON's flow style, which YAML 1.2 reads)");
  app->add_flag("-h,--noheader", a.noheader, "no header line");
  app->add_flag("--start", a.start, "pending jobs with their expected start times");
  app->add_flag("-s,--steps,--step", a.steps, "job steps instead of jobs");
  app->add_flag("-l,--long", a.long_format, "the long layout (with -s: the time first)");
  add_persona_common(*app, a.taken, "-a,--all,--hide,--local,--federation,--sibling,--noconvert,-v,--verbose",
                     "-M,--clusters");
  add_brief_usage(*app, "squeue");
  return app;
}

}  // namespace

int queue_with(const Args& args, const QueueFetch& fetch, const std::function<std::string()>& cluster) {
  std::string prog = prog_name(args[0]);
  QueueArgs a;
  auto app = queue_parser(a);
  if (auto done = parse_persona_args(*app, args, prog)) return *done;
  pb::QueueRequest request;
  auto* q = &request;
  auto named = parse_job_id_args(split_list(a.jobs));
  if (!named) return fail(prog, named.status());
  for (uint64_t id : named->ids) q->add_job_ids(id);
  if (a.steps) {
    std::vector<uint64_t> ids(q->job_ids().begin(), q->job_ids().end());
    return queue_steps(prog, ids, !a.noheader, a.long_format, a.json);
  }
  if (Status s = set_filters(*q, a); !s) {
    for (std::string_view line : split(s.message(), '\n')) std::cerr << prog << ": error: " << line << "\n";
    return 1;
  }
  ColumnFormat format = !a.format.empty()   ? parse_squeue_format(a.format)
                        : !a.fields.empty() ? parse_squeue_fields(a.fields)
                        : a.long_format     ? parse_squeue_format(kSqueueLongFormat)
                                            : parse_squeue_format(kSqueueDefaultFormat);
  for (const auto& e : format.errors) std::cerr << prog << ": error: " << e << "\n";
  q->set_with_script(a.json || a.yaml);  // the whole record (owners and admins only)
  for (;;) {
    auto reply = fetch(*q);
    if (!reply) return fail(prog, reply.status());
    pb::QueueReply& out = reply.value();
    if (q->job_ids_size() == 1 && out.unknown_ids_size() == 1) {  // as Slurm's slurm_load_job of one id
      std::cerr << "slurm_load_jobs error: Invalid job id specified\n";
      return 1;
    }
    keep_named_tasks(out, *named);
    if ((a.json || a.yaml) && prog == "squeue") {  // Slurm's shape; `hq queue --json`: hq's records
      sort_jobs(out, a.sort.empty() ? kSqueueDefaultSort : std::string_view(a.sort));
      std::cout << squeue_slurm_json(out, cluster ? cluster() : "");
      return 0;
    }
    if (a.json || a.yaml) return print_json(out) ? 0 : 1;
    if (!a.noheader && (a.iterate || a.long_format)) print_date();
    if (a.start) {
      print_start(out, !a.noheader);
    } else {
      sort_jobs(out, a.sort.empty() ? kSqueueDefaultSort : std::string_view(a.sort));
      print_formatted(queue_rows(out, a.array), out.now(), format, !a.noheader);
    }
    if (!a.iterate) return 0;
    std::cout << "\n" << std::flush;
    std::this_thread::sleep_for(std::chrono::seconds(a.iterate));
  }
}

int run_queue(const Args& args) {
  std::unique_ptr<net::RpcClient> client;
  return queue_with(args, [&](const pb::QueueRequest& q) -> Result<pb::QueueReply> {
    if (!client) {
      auto c = connect_client();
      if (!c) return c.status();
      client = std::move(c.value());
    }
    return query_jobs(*client, q);
  }, [&] { return client ? client->cluster() : std::string(); });
}

}  // namespace hq::cmd
