// `hq hold|uhold|release|requeue|requeuehold JOB...` (also `scontrol hold ...`), scontrol
// suspend|resume|notify,
// `scontrol update JobId=...` (`hq update`), and `hq explain JOB`: job control actions,
// changes to jobs' requests and the why-is-it-pending report.
#include <ctime>

#include "cmd/client/output.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/job_update.hpp"
#include "core/std_streams.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"

namespace hq::cmd {

namespace {

// Sends a JobControlRequest and prints each error on stderr, after `prefix` ("" for the
// controller's whole lines, as scontrol prints Slurm's); 1 when there were errors.
int call_job_control(const pb::Envelope& env, const std::string& prog, const std::string& prefix) {
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  for (const auto& e : reply->job_control_reply().errors()) hq::cerr() << prefix << e << "\n";
  return reply->job_control_reply().errors_size() > 0 ? 1 : 0;
}

}  // namespace

// `hq hold|...` (prog "hq hold": each of the controller's lines after "hq hold: error: ") and
// `scontrol hold|...` (prog "scontrol": Slurm's lines as they are, "Invalid job id specified for
// job 12", and for hold, uhold and release slurm_suspend's closing "slurm_suspend error: WHY").
int job_control_as(const Args& args, const std::string& prog) {
  const std::string& action = args[0];
  bool slurm = prog == "scontrol";
  pb::Envelope env;
  auto* req = env.mutable_job_control();
  req->set_action(action);
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      hq::cout() << "usage: " << prog << " " << action << " JOBID[_TASK]...   (an array's id acts on every task)\n";
      return 0;
    }
    if (!slurm && args[i].size() > 1 && args[i][0] == '-') return reject_option(prog, args[i]);
    for (std::string_view id : split(args[i], ','))  // scontrol also takes "1,2,3"
      if (!id.empty()) req->add_jobs(std::string(id));
  }
  if (req->jobs_size() == 0) {
    if (slurm) return hq::cerr() << "too few arguments for keyword:" << action << "\n", 1;
    return fail(prog, invalid("No job identification provided"));
  }
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  const auto& errors = reply->job_control_reply().errors();
  for (const auto& e : errors) hq::cerr() << (slurm ? "" : prog + ": error: ") << e << "\n";
  bool suspend_path = action == "hold" || action == "uhold" || action == "release";
  if (slurm && suspend_path && !errors.empty()) {
    const std::string& last = errors[errors.size() - 1];
    hq::cerr() << "slurm_suspend error: " << last.substr(0, last.rfind(" for job ")) << "\n";
  }
  return errors.empty() ? 0 : 1;
}

int run_job_control(const Args& args) { return job_control_as(args, "hq " + args[0]); }

// scontrol suspend|resume JOB_LIST (root and operators) and notify JOB MESSAGE: the
// controller's answers are Slurm's whole lines ("Job is not suspended for job 12",
// "job notify failure: ..."), printed as they come.
int run_suspend_control(const Args& args) {
  const std::string& action = args[0];
  if (args.size() >= 2 && (args[1] == "-h" || args[1] == "--help")) {
    hq::cout() << (action == "notify" ? "usage: scontrol notify JOBID MESSAGE...   (a line in the job's stderr)\n"
                                     : "usage: scontrol " + action + " JOBID[_TASK][,...]...   (root and operators)\n");
    return 0;
  }
  if (args.size() < 2 || (action == "notify" && args.size() < 3)) {
    hq::cerr() << "too few arguments for keyword:" << action << "\n";
    return 1;
  }
  pb::Envelope env;
  auto* req = env.mutable_job_control();
  req->set_action(action);
  if (action == "notify") {
    req->add_jobs(args[1]);
    std::string message;
    for (size_t i = 2; i < args.size(); ++i) message += (i > 2 ? " " : "") + args[i];
    req->set_message(message);
  } else {
    for (size_t i = 1; i < args.size(); ++i)
      for (std::string_view id : split(args[i], ','))
        if (!id.empty()) req->add_jobs(std::string(id));
  }
  return call_job_control(env, "scontrol", "");
}

namespace {

// StartTime=/Deadline= resolved here, in the user's zone ("now+1hour", "16:00",
// "2026-12-01T08:00"), and sent as seconds since the epoch.
Status resolve_times(std::string& setting) {
  size_t eq = setting.find('=');
  std::string key = to_lower(setting.substr(0, eq));
  if (key != "starttime" && key != "deadline") return Status::ok();
  int64_t now = ::time(nullptr);
  auto t = resolve_begin(setting.substr(eq + 1), now, local_utc_offset(now));
  if (!t) return invalid(std::string("Invalid ") + (key == "deadline" ? "Deadline" : "StartTime") + " value");
  setting = setting.substr(0, eq + 1) + std::to_string(*t);
  return Status::ok();
}

}  // namespace

int run_job_update(const Args& args) {
  const std::string prog = "scontrol";
  pb::Envelope env;
  auto* req = env.mutable_job_update();
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "-h" || args[i] == "--help") {
      hq::cout() << "usage: scontrol update JobId=ID[,ID...] Key=Value...   (hq update: the same)\n"
                   "  keys: TimeLimit ([+|-]time, UNLIMITED) TimeMin Name Comment QOS WCKey Account Partition\n"
                   "        Features ReqNodeList ExcNodeList Dependency Nice NumNodes NumTasks MinMemoryNode\n"
                   "        MinMemoryCPU Priority StartTime Deadline ArrayTaskThrottle\n";
      return 0;
    }
    size_t eq = args[i].find('=');
    if (eq != std::string::npos && to_lower(args[i].substr(0, eq)) == "jobid") {
      for (std::string_view id : split(args[i].substr(eq + 1), ','))
        if (!id.empty()) req->add_jobs(std::string(id));
      continue;
    }
    std::string setting = args[i];
    if (Status s = resolve_times(setting); !s) return fail(prog, s);
    req->add_settings(setting);
  }
  if (req->jobs_size() == 0) {
    hq::cerr() << "No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", "
                 "\"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n";
    return 1;
  }
  std::vector<std::string> settings(req->settings().begin(), req->settings().end());
  if (auto parsed = parse_job_update(settings); !parsed) {  // Slurm's words, before asking anyone
    std::string why = parsed.status().message();
    if (why.rfind("Update of this parameter", 0) == 0) hq::cerr() << why << "\nRequest aborted\n";
    else hq::cerr() << prog << ": error: " << why << "\n";
    return 1;
  }
  if (settings.empty()) return fail(prog, invalid("no Key=Value to change"));
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  for (const auto& e : reply->job_update_reply().errors()) hq::cerr() << e << "\n";
  return reply->job_update_reply().errors_size() > 0 ? 1 : 0;
}

int run_explain(const Args& args) {
  std::string prog = "hq explain";
  if (args.size() != 2 || args[1] == "-h" || args[1] == "--help") {
    hq::cout() << "usage: hq explain JOBID   (why a job is pending: priority, reservation, partitions, nodes)\n";
    return args.size() == 2 ? 0 : 2;
  }
  if (args[1].size() > 1 && args[1][0] == '-') return reject_option(prog, args[1]);
  auto id = parse_int(args[1], 1, INT64_MAX);
  if (!id) return fail(prog, invalid("Invalid job id specified: " + args[1]));
  pb::Envelope env;
  env.mutable_explain()->set_job_id(static_cast<uint64_t>(*id));
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  for (const auto& line : reply->explain_reply().lines()) hq::cout() << line << "\n";
  return 0;
}

// hq token [--lifespan SECONDS] (also scontrol token [lifespan=SECONDS]): a token for the
// caller to present over HTTP (X-SLURM-USER-TOKEN), printed as scontrol token prints its
// JWT: SLURM_JWT=...
int run_token(const Args& args) {
  const std::string prog = "token";
  int64_t lifespan = 0;
  bool url = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      hq::cout() << "usage: hq token [--lifespan SECONDS] [--url]\n"
                   "  a token for HTTP (X-SLURM-USER-TOKEN; default 1800 s, at most a day);\n"
                   "  --url: the web dashboard's address with the token in it (it signs the browser in)\n";
      return 0;
    }
    if (a == "--url") {
      url = true;
      continue;
    }
    std::string value;
    if ((a == "--lifespan") && i + 1 < args.size()) value = args[++i];
    else if (a.rfind("--lifespan=", 0) == 0) value = a.substr(11);
    else if (to_lower(a).rfind("lifespan=", 0) == 0) value = a.substr(9);
    else return fail(prog, invalid("unknown argument '" + a + "' (lifespan=SECONDS)"));
    auto n = parse_int(value, 1, 86400);
    if (!n) return fail(prog, invalid("Invalid lifespan: " + value + " (1 to 86400 seconds)"));
    lifespan = *n;
  }
  pb::Envelope env;
  env.mutable_token()->set_lifespan(lifespan);
  auto client = connect_client();
  if (!client) return fail(prog, client.status());
  auto reply = (*client)->call(env);
  if (!reply) return fail(prog, reply.status());
  const pb::TokenReply& t = reply->token_reply();
  if (!url) {
    hq::cout() << "SLURM_JWT=" << t.token() << "\n";
    return 0;
  }
  if (t.dashboard().empty()) return fail(prog, unavailable("the controller serves no HTTP: set [controller] http_port"));
  hq::cout() << t.dashboard() << "#token=" << t.token() << "\n";
  return 0;
}

}  // namespace hq::cmd
