// `hq submit` / sbatch: builds a JobSpec from the script, its #SBATCH/#HQ directives and
// the command line (command line wins), then submits it and optionally waits.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <grp.h>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_usage.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/users.hpp"
#include "core/priority.hpp"
#include "core/slurm_errors.hpp"
#include "core/std_streams.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "net/convert.hpp"

extern char** environ;

namespace hq::cmd {
namespace {

constexpr const char* kSubmitUsage =
    "usage: hq submit [options] [script [args...]]   (or --wrap CMD, or the script on stdin)\n"
    "  -J, --job-name NAME     -o, --output PAT     -e, --error PAT     -D, --chdir DIR\n"
    "  -p, --partition P       -t, --time LIMIT     -N, --nodes N[-M]   -n, --ntasks N\n"
    "  -c, --cpus-per-task N   --ntasks-per-node N  --mem SIZE          --mem-per-cpu SIZE\n"
    "  --export ALL|NONE|VARS  -H, --hold           --parsable          -Q, --quiet\n"
    "  -W, --wait              --wrap CMD           --json\n"
    "  -C, --constraint EXPR   -w, --nodelist HOSTS -x, --exclude HOSTS --exclusive\n"
    "  -a, --array SPEC        -d, --dependency DEP --kill-on-invalid-dep yes|no\n"
    "  -b, --begin TIME        --nice N             --signal [B:]SIG[@T] -A, --account NAME\n"
    "  --requeue | --no-requeue                     --test-only\n";

std::string cwd() {
  char buf[4096];
  return getcwd(buf, sizeof buf) ? buf : "/";
}

// read(2), not a stream: an ifstream would build the C++ locale, 0.15 ms of each sbatch here.
Result<std::string> read_script(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found("Unable to open file " + path);
  auto text = read_to_end(fd, path);
  ::close(fd);
  return text;
}

std::string basename_of(const std::string& p) {
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

void fill_identity(JobSpec& spec) {
  spec.uid = getuid();
  spec.gid = getgid();
  // spec.user is left empty: the controller names the user from the uid the kernel or the
  // token vouches for, whatever a request says (reading /etc/passwd here cost sbatch ~20 us).
  int n = getgroups(0, nullptr);
  std::vector<gid_t> groups(static_cast<size_t>(n > 0 ? n : 0));
  if (n > 0 && getgroups(n, groups.data()) == n) spec.groups.assign(groups.begin(), groups.end());
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  spec.submit_host = host;
}

// Script text and default name from --wrap, a file, or stdin.
// `prog`: who made a --wrap script ("sbatch", as Slurm's header says, or "hq submit").
Result<std::pair<std::string, std::string>> load_script(const SubmitRequest& cli, const std::vector<std::string>& pos,
                                                        const std::string& prog) {
  if (cli.wrap_set) {
    if (!pos.empty()) return invalid("Script arguments not permitted with --wrap option");
    return std::make_pair("#!/bin/sh\n# This script was created by " + prog + " --wrap.\n\n" + cli.wrap + "\n",
                          std::string("wrap"));
  }
  if (!pos.empty()) {
    auto text = read_script(pos[0]);
    if (!text) return text.status();
    return std::make_pair(*text, basename_of(pos[0]));
  }
  if (isatty(0)) return invalid("no batch script given: pass a file, --wrap, or a script on stdin");
  auto text = read_to_end(0, "the script on standard input");
  if (!text) return text.status();
  return std::make_pair(std::move(*text), std::string("sbatch"));
}

// --uid/--gid (root only, as Slurm's sbatch checks before it asks anyone): the user and
// group by name or number, into the request; the controller checks the caller again.
Status resolve_run_as(const SubmitRequest& req, pb::SubmitRequest& out) {
  if (!req.as_user.empty()) {
    if (::getuid() != 0) return invalid("--uid only permitted by root user");
    auto who = passwd_by_name(req.as_user);
    auto number = parse_int(req.as_user, 0, UINT32_MAX - 1);
    if (!who && number) who = passwd_by_uid(static_cast<uid_t>(*number));
    if (!who) return invalid("Invalid --uid specification");
    out.set_as_uid(who->uid);
  }
  if (!req.as_group.empty()) {
    if (::getuid() != 0) return invalid("--gid only permitted by root user");
    auto gid = group_id(req.as_group);
    if (!gid) return invalid("Invalid --gid specification");
    out.set_as_gid(*gid);
  }
  return Status::ok();
}

// `option_error`: which command-line option failed, when one did (sbatch answers in Slurm's words).
// `meta`: --help, --usage or --version in the script's #SBATCH lines, which Slurm's sbatch
// answers there too (slurm_opt.c: arg_set_help exits 0); nothing is submitted then.
Result<SubmitRequest> build_request(const Args& args, CliOptionError& option_error, MetaOption& meta) {
  std::vector<std::string> cli_args(args.begin() + 1, args.end()), pos;
  SubmitRequest cli;
  if (Status s = apply_submit_options(cli_args, cli, &pos); !s) {
    option_error = cli.option_error;
    return s;
  }
  auto script = load_script(cli, pos, prog_name(args[0]));
  if (!script) return script.status();
  if (!cli.wrap_set && script->first.find("\r\n") != std::string::npos)  // Slurm's refusal, word for word
    return invalid("Batch script contains DOS line breaks (\\r\\n)\ninstead of expected UNIX line breaks (\\n).");
  std::vector<std::string> warnings;
  auto directives = parse_directives(script->first, &warnings);
  if (!directives) return directives.status();
  for (const auto& w : warnings) hq::cerr() << "hq submit: error: " << w << "\n";
  SubmitRequest req;
  if (meta = submit_meta_option(*directives); meta != MetaOption::kNone) return req;
  if (Status s = apply_submit_options(*directives, req, nullptr); !s) return s;
  std::vector<std::string> ignored;
  if (Status s = apply_submit_options(cli_args, req, &ignored); !s) return s;  // command line wins
  req.spec.script = script->first;
  if (!pos.empty()) req.spec.argv.assign(pos.begin() + 1, pos.end());
  if (!req.name_set) req.spec.name = script->second;
  std::string here = cwd();
  if (!pos.empty()) {  // Command=, as sbatch sets it: a bare relative path made absolute, "./x" kept
    JobExtras extras = *req.spec.extra;
    extras.command = pos[0][0] == '/' || pos[0][0] == '.' ? pos[0] : here + "/" + pos[0];
    for (size_t i = 1; i < pos.size(); ++i) extras.command += " " + pos[i];
    req.spec.extra = extras;
  }
  if (req.spec.workdir.empty()) req.spec.workdir = here;
  else if (req.spec.workdir[0] != '/') req.spec.workdir = here + "/" + req.spec.workdir;
  fill_identity(req.spec);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  auto exported = export_environment(req.export_spec, env);
  if (!exported) return exported.status();
  req.spec.env = std::move(exported).value();
  Time now = static_cast<Time>(::time(nullptr));  // --begin and --deadline in the user's time zone
  if (!req.begin.empty()) {
    auto begin = resolve_begin(req.begin, now, local_utc_offset(now));
    if (!begin) {
      option_error = CliOptionError{CliFault::kBadValue, "begin", req.begin, ""};
      return begin.status();
    }
    req.spec.begin_time = *begin;
  }
  if (!req.deadline.empty()) {
    auto deadline = resolve_begin(req.deadline, now, local_utc_offset(now));
    if (!deadline) {
      option_error = CliOptionError{CliFault::kBadValue, "deadline", req.deadline, ""};
      return invalid("Invalid deadline specification: " + req.deadline);
    }
    JobExtras extras = *req.spec.extra;
    extras.deadline = *deadline;
    req.spec.extra = extras;
  }
  return req;
}

// sbatch's refusal of a submission as Slurm 22.05 prints it: Slurm's text without hq's
// explanation ("Batch job submission failed: Invalid feature specification"), after the line
// slurmctld sends first for an unknown partition. `hq submit` prints hq's whole message.
int sbatch_refusal(const std::string& prog, const Status& status) {
  const std::string& text = status.message();
  size_t cut = text.rfind('\n');
  std::string last = text.substr(cut == std::string::npos ? 0 : cut + 1);
  if (cut != std::string::npos) {  // lines slurmctld sends before the refusal (AssocMaxSubmitJobLimit)
    std::istringstream before(text.substr(0, cut));
    for (std::string line; std::getline(before, line);) hq::cerr() << prog << ": error: " << line << "\n";
  }
  std::string slurm = slurm_error_text(last);
  const std::string partition = "Invalid partition name specified: ";
  if (last.rfind(partition, 0) == 0)
    hq::cerr() << prog << ": error: invalid partition specified: " << last.substr(partition.size()) << "\n";
  hq::cerr() << prog << ": error: Batch job submission failed: " << slurm << "\n";
  return 1;
}

// Polls until the job ends; returns its exit code (sbatch --wait semantics). The first
// look comes 2 ms after the submission and each next one twice as late, up to every
// 200 ms: a short job is seen ended within a few milliseconds (a fixed 200 ms made every
// `sbatch --wait` of a trivial job take 200 ms), a long one costs the controller a small
// query five times a second, as before.
int wait_for(net::RpcClient& client, uint64_t id, const std::string& prog) {
  pb::QueueRequest q;
  q.add_job_ids(id);
  auto pause = std::chrono::milliseconds(2);
  while (true) {
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::milliseconds(200));
    auto reply = query_jobs(client, q);
    if (!reply) return fail(prog, reply.status());
    const auto& jobs = reply->jobs();
    if (jobs.empty()) return 0;  // purged: it ended long ago
    const auto& j = jobs[0];
    if (j.state() != "PENDING" && j.state() != "RUNNING") {
      if (j.exit_signal() != 0) return 128 + j.exit_signal();
      return j.state() == "COMPLETED" ? 0 : (j.exit_code() != 0 ? j.exit_code() : 1);
    }
  }
}

}  // namespace

int run_submit(const Args& args) {
  std::string prog = prog_name(args[0]);
  if (auto done = answer_meta_option(submit_meta_option({args.begin() + 1, args.end()}), args[0], kSubmitUsage)) return *done;
  CliOptionError option_error;
  MetaOption meta = MetaOption::kNone;
  auto req = build_request(args, option_error, meta);
  if (auto done = answer_meta_option(meta, args[0], kSubmitUsage)) return *done;
  if (!req && prog == "sbatch" && option_error.fault != CliFault::kNone) {
    SbatchOptionAnswer answer = sbatch_option_error(option_error);  // Slurm's words and exit code
    for (const auto& line : answer.lines) hq::cerr() << line << "\n";
    return answer.exit_code;
  }
  if (!req) return option_failure(prog, req.status());
  if (!req->controller.empty()) setenv("HQ_CONTROLLER", req->controller.c_str(), 1);  // first in find_controller
  if (!req->ca_file.empty()) setenv("HQ_CA_FILE", req->ca_file.c_str(), 1);            // first in find_transport
  for (const auto& n : req->notices) hq::cerr() << prog << ": warning: " << n << "\n";
  std::unique_ptr<net::RpcClient> client;  // call_with_retry connects
  pb::Envelope env;
  *env.mutable_submit()->mutable_spec() = net::to_pb(req->spec);
  env.mutable_submit()->set_test_only(req->test_only);
  env.mutable_submit()->set_request_key(new_request_key());
  if (Status s = resolve_run_as(*req, *env.mutable_submit()); !s) {
    if (prog == "sbatch") return hq::cerr() << "sbatch: error: " << s.message() << "\n", 255;  // Slurm's exit(-1)
    return fail(prog, s);
  }
  auto reply = call_with_retry(client, env);
  bool refused = !reply && (reply.status().code() == Code::kInvalid || reply.status().code() == Code::kDenied);
  if (refused && prog == "sbatch") return sbatch_refusal(prog, reply.status());
  if (!reply) return fail(prog, context_last_line(reply.status(), "Batch job submission failed"));
  const auto& r = reply->submit_reply();
  uint64_t id = r.job_id();
  if (req->test_only) {  // sbatch's wording, on stderr like sbatch
    if (req->json) return print_json(r) ? 0 : 1;
    if (r.start_time() > 0)
      hq::cerr() << prog << ": Job " << id << " to start at " << local_time(r.start_time()) << " using "
                << requested_cpus(req->spec) << " processors on nodes " << r.nodes() << " in partition " << r.partition() << "\n";
    else
      hq::cerr() << prog << ": Job " << id << " would not start within the backfill window (partition "
                << r.partition() << "); see hq explain once submitted\n";
    return 0;
  }
  if (req->json) {
    if (!print_json(reply->submit_reply())) return 1;
  } else if (req->parsable) {  // print_text, not hq::cout(): that would build the C++ streams
    print_text(std::to_string(id) + "\n");
  } else if (!req->quiet) {
    print_text("Submitted batch job " + std::to_string(id) + "\n");
  }
  std::fflush(stdout);  // hq::cout(), when built, writes through stdio: this flushes both
  return req->wait ? wait_for(*client, id, prog) : 0;
}

}  // namespace hq::cmd
