// scontrol: every command and option of Slurm 22.05's, looked up in one table
// (core/scontrol_commands: in any case, or a prefix of 3 letters or more); those hq acts on
// go to their clients (show, update, hold..., suspend..., reservations, nodes, partitions),
// those it takes without effect exit 0, those it refuses say why and exit 1. Also here:
// `-o` one-liners, show config, wait_job, write batch_script, reconfigure. One thread.
#include <cstdio>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/client/steps.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/cli_options.hpp"
#include "core/scontrol_commands.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

// `scontrol -o show ...`: what `show` prints, each record (lines after the first indented,
// records apart by a blank line) on one line, fields apart by one space, as Slurm's -o.
int show_oneliner(const Args& show_args) {
  std::fflush(stdout);
  hq::cout().flush();
  FILE* captured = std::tmpfile();
  int saved = captured ? ::dup(1) : -1;
  if (!captured || saved < 0 || ::dup2(::fileno(captured), 1) < 0) return run_show(show_args);
  int rc = run_show(show_args);
  hq::cout().flush();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::string text, line, record;
  std::rewind(captured);
  for (int c; (c = std::fgetc(captured)) != EOF;) text += static_cast<char>(c);
  std::fclose(captured);
  for (std::string_view l : split(text, '\n')) {
    std::string_view t = trim(l);
    if (t.empty() && !l.empty()) {  // an empty indented line: Slurm's -o keeps its separator
      record += " ";
      continue;
    }
    if (t.empty()) {
      if (!record.empty()) hq::cout() << record << "\n";
      record.clear();
      continue;
    }
    record += (record.empty() ? "" : " ") + std::string(t);
  }
  if (!record.empty()) hq::cout() << record << "\n";
  return rc;
}

}  // namespace

namespace {

// scontrol show config: "Configuration data as of T" and "Key = Value", Slurm's layout.
int show_config() {
  auto client = connect_client();
  if (!client) return fail("scontrol", client.status());
  auto reply = query_nodes(**client, true);
  if (!reply) return fail("scontrol", reply.status());
  const pb::NodesReply& r = *reply;
  hq::cout() << "Configuration data as of " << local_time(r.now()) << "\n";
  std::string host;
  for (const auto& e : r.config()) {
    std::string key = e.key();
    if (key == "SlurmctldHost[0]") host = e.value();
    if (key.size() < 23) key.resize(23, ' ');
    hq::cout() << key << " = " << e.value() << "\n";
  }
  hq::cout() << "\nSlurmctld(primary) at " << host << " is UP\n";  // it answered
  return 0;
}

// scontrol wait_job: returns once the job runs (its nodes are ready) or has ended; exit 0
// when it runs or completed, 1 when it ended otherwise or names no job.
int wait_job(const std::string& id_text) {
  auto id = parse_int(id_text, 1, INT64_MAX);
  if (!id) return fail("scontrol", invalid("Invalid job id specified"));
  auto client = connect_client();  // one connection, asked once a second
  if (!client) return fail("scontrol", client.status());
  pb::QueueRequest q;
  q.add_job_ids(static_cast<uint64_t>(*id));
  q.set_include_finished(true);
  for (;;) {
    auto reply = query_jobs(**client, q);
    if (!reply) return fail("scontrol", reply.status());
    if (reply->jobs_size() == 0) return fail("scontrol", invalid("Invalid job id specified"));
    const std::string& state = reply->jobs(0).state();
    if (state == "RUNNING" || state == "COMPLETED") return 0;
    if (state != "PENDING") return 1;
    std::this_thread::sleep_for(std::chrono::seconds(1));  // Slurm's wait_job polls too
  }
}

}  // namespace

namespace {

// scontrol write batch_script JOB [FILE]: the script to FILE (default slurm-JOB.sh), or to
// stdout with "-". Owners and operators only get scripts.
int write_batch_script(const Args& args) {
  if (args.size() < 2 || to_lower(args[0]) != "batch_script") {
    hq::cerr() << "scontrol: error: write: only \"write batch_script JOBID [FILE]\" is built (not write config)\n";
    return 1;
  }
  auto id = parse_int(args[1], 1, INT64_MAX);
  auto client = connect_client();
  if (!client) return fail("scontrol", client.status());
  pb::QueueRequest q;
  q.add_job_ids(id ? static_cast<uint64_t>(*id) : 0);
  q.set_include_finished(true);
  q.set_with_script(true);
  auto reply = id ? query_jobs(**client, q) : Result<pb::QueueReply>(pb::QueueReply{});
  if (!reply) return fail("scontrol", reply.status());
  if (reply->jobs_size() == 0 || reply->jobs(0).spec().script().empty()) {
    // Slurm's words, and its exit code 0.
    hq::cout() << "job script retrieval failed: " << (reply->jobs_size() == 0 ? "Invalid job id specified"
                                                                            : "No job script for this job")
              << "\n";
    return 0;
  }
  const std::string& script = reply->jobs(0).spec().script();
  std::string file = args.size() >= 3 ? args[2] : "slurm-" + args[1] + ".sh";
  if (file == "-") return hq::cout() << script, 0;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!(out << script) || !out.flush()) return fail("scontrol", invalid("cannot write " + file));
  hq::cout() << "batch script for job " << args[1] << " written to " << file << "\n";
  return 0;
}

// scontrol reconfigure: the controller reads its config file again (root and operators).
int reconfigure() {
  pb::Envelope env;
  env.mutable_node_control()->set_action("reconfigure");
  auto reply = call_admin(env);
  if (!reply) return fail("scontrol", reply.status());
  for (const auto& e : reply->errors()) hq::cerr() << "slurm_reconfigure error: " << e << "\n";
  return reply->errors_size() > 0 ? 1 : 0;
}

int ping() {
  auto ep = find_controller();
  bool up = ep && connect_client().is_ok();
  hq::cout() << "Slurmctld(primary) at " << (ep ? ep->host : std::string("(unknown)")) << " is " << (up ? "UP" : "DOWN") << "\n";
  return up ? 0 : 1;
}

void print_help() {
  hq::cout() << "Usage: scontrol [-o] COMMAND [...]   (hq answers as Slurm's scontrol)\n  commands hq acts on:";
  for (const auto& c : scontrol_commands())
    if (c.support == ScontrolSupport::kWorks) hq::cout() << " " << c.name;
  hq::cout() << "\n  show entities:";
  for (const auto& e : scontrol_show_entities())
    if (e.support == ScontrolSupport::kWorks) hq::cout() << " " << e.name;
  hq::cout() << "\n  (docs/slurm-compat.md says what hq does with each of Slurm's)\n";
}

// "scontrol: error: NAME: WHY" for what hq refuses; nothing for what changes nothing here.
int not_acting(const ScontrolEntry& e, const std::string& what) {
  if (e.support == ScontrolSupport::kInert) return 0;
  hq::cerr() << "scontrol: error: " << what << " " << e.name << ": " << e.why << "\n";
  return 1;
}

// scontrol show assoc_mgr [users=..] [accounts=..] [qos=..] [flags=users,assoc,qos]: the
// controller's text, or scontrol's message for words it refuses.
int show_assoc_mgr(const Args& words, bool oneliner) {
  pb::Envelope env;
  for (const auto& w : words) env.mutable_assoc_mgr()->add_words(w);
  env.mutable_assoc_mgr()->set_one_liner(oneliner);
  std::unique_ptr<net::RpcClient> client;
  auto reply = call_with_retry(client, env);
  if (!reply) return fail("scontrol", reply.status());
  const pb::AssocMgrReply& r = reply->assoc_mgr_reply();
  if (!r.enabled()) {
    hq::cerr() << "slurm_load_assoc_mgr_info error: this cluster keeps no accounting ([accounting] storage = \"none\")\n";
    return 1;
  }
  if (!r.error().empty()) return hq::cerr() << r.error() << "\n", 1;
  hq::cout() << r.text();
  return 0;
}

int show(const Args& args, bool oneliner) {  // args[0]: "show"
  if (args.size() < 2) return run_show({"scontrol"});
  const ScontrolEntry* e = find_scontrol_entity(args[1]);
  if (!e) {
    hq::cerr() << "invalid entity: " << args[1] << " for keyword: show\n";
    return 1;
  }
  if (e->support != ScontrolSupport::kWorks) return not_acting(*e, "show");
  if (e->name == "config") return show_config();
  if (e->name == "assoc_mgr") return show_assoc_mgr({args.begin() + 2, args.end()}, oneliner);
  if (e->name == "reservation") return show_reservations({args.begin() + 2, args.end()}, oneliner);
  Args rest(args.begin(), args.end());
  rest[0] = "scontrol";
  rest[1] = std::string(e->name);
  return oneliner ? show_oneliner(rest) : run_show(rest);
}

// A command hq acts on, by its canonical name; `args[0]` is the command as typed.
int run_command(std::string_view name, Args args, bool oneliner) {
  args[0] = std::string(name);
  Args rest(args.begin() + 1, args.end());
  if (name == "help") return print_help(), 0;
  if (name == "exit" || name == "quit") return 0;
  if (name == "version") return hq::cout() << persona_version() << "\n", 0;
  if (name == "ping") return ping();
  if (name == "token") return run_token(args);
  if (name == "reconfigure") return reconfigure();
  if (name == "show") return show(args, oneliner);
  if (name == "write") return write_batch_script(rest);
  if (name == "wait_job") return rest.empty() ? fail("scontrol", invalid("too few arguments for keyword:wait_job")) : wait_job(rest[0]);
  if (name == "top") return rest.empty() ? fail("scontrol", invalid("too few arguments for keyword:top"))
                                         : run_job_update({"update", "JobId=" + rest[0], "Priority=TOP"});
  if (name == "listpids" || name == "liststeps" || name == "listjobs") return run_node_list(args[0].substr(4), rest);
  if (name == "suspend" || name == "resume" || name == "notify") return run_suspend_control(args);
  if (name == "hold" || name == "uhold" || name == "holdu" || name == "release" || name == "requeue" || name == "requeuehold") {
    if (name == "holdu") args[0] = "uhold";
    return job_control_as(args, "scontrol");
  }
  if (name == "delete" && rest.empty()) return hq::cerr() << "too few arguments for delete keyword\n", 1;
  Args full = args;  // these take scontrol's whole line: "scontrol", the command, its words
  full.insert(full.begin(), "scontrol");
  if (name == "create" || ((name == "update" || name == "delete") && !rest.empty() && is_reservation_word(rest[0])))
    return scontrol_reservation(full);
  if ((name == "update" || name == "delete") && !rest.empty() && to_lower(rest[0]).rfind("nodename=", 0) == 0)
    return scontrol_node_update(full);
  if (name == "update" && !rest.empty() && to_lower(rest[0]).rfind("partitionname=", 0) == 0)
    return scontrol_partition_update(full);
  if (name == "update") return run_job_update(args);
  if (name == "delete") {  // Slurm's words; partitions come from the config here
    hq::cerr() << "Invalid deletion entity: " << rest[0] << "\n";
    return 1;
  }
  hq::cerr() << "scontrol: error: " << name << " is in hq's table but no client takes it (a bug)\n";
  return 1;
}

}  // namespace

int run_scontrol(const Args& raw) {
  Args args;  // the command and its words, options taken out (they may come first or anywhere)
  bool oneliner = false;
  for (size_t i = 1; i < raw.size(); ++i) {
    const std::string& a = raw[i];
    const ScontrolEntry* opt = a.size() > 1 && a[0] == '-' ? find_scontrol_option(a) : nullptr;
    if (!opt && args.empty() && a.size() > 1 && a[0] == '-') {  // getopt's words, as Slurm's scontrol
      hq::cerr() << "scontrol: " << getopt_unknown(a) << "\nTry \"scontrol --help\" for more information\n";
      return 1;
    }
    if (!opt) {
      args.push_back(a);
    } else if (opt->name == "-o, --oneliner") {
      oneliner = true;
    } else if (opt->name == "-h, --help") {
      return print_help(), 0;
    } else if (opt->name == "-V, --version") {
      return hq::cout() << persona_version() << "\n", 0;
    } else if (opt->support == ScontrolSupport::kRefused) {
      return not_acting(*opt, "option");
    } else if ((a == "-M" || a == "--cluster") && i + 1 < raw.size()) {
      ++i;  // its value goes with it: one cluster either way
    }
  }
  if (args.empty()) {
    hq::cerr() << "scontrol: error: hq's scontrol has no interactive mode: give a command (scontrol help)\n";
    return 1;
  }
  const ScontrolEntry* cmd = find_scontrol_command(args[0]);
  if (!cmd) {
    hq::cerr() << "invalid keyword: " << args[0] << "\n";
    return 1;
  }
  if (cmd->support != ScontrolSupport::kWorks) return not_acting(*cmd, "command");
  return run_command(cmd->name, args, oneliner);
}

}  // namespace hq::cmd
