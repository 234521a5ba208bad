// `hq alloc` / salloc: asks the controller for an allocation (sbatch's resource options),
// then runs a command, or the user's login shell, here on this host with the allocation's
// environment (SLURM_JOB_ID, SLURM_JOB_NODELIST, ... and HQ_STEPMGR*, where srun inside
// finds the job's first node), and gives the allocation back when it exits. As Slurm's
// salloc: it prints "Granted job allocation N" and "Relinquishing job allocation N", says
// when the allocation is revoked under the command (scancel, time limit; the command is
// signalled only with --kill-command), and exits with the command's code (0 when it was
// killed by SIGHUP, SIGINT, SIGQUIT or SIGKILL, 1 for other signals or when it cannot run).
// One thread, poll().
#include <cstdlib>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/client/allocate.hpp"
#include "cmd/client/job_query.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_usage.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/signal_names.hpp"
#include "core/std_streams.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"

extern char** environ;

namespace hq::cmd {
namespace {

struct SallocOptions {
  SubmitRequest submit;
  std::vector<std::string> command;
  bool immediate = false;
  int kill_signal = 0;  // --kill-command: signal the command when the allocation is revoked
};

int usage(std::ostream& out, int code) {
  out << "usage: salloc [OPTIONS] [COMMAND [ARGS...]]\n"
         "Gets an allocation, runs COMMAND (default: your login shell) here with its environment\n"
         "(SLURM_JOB_ID, SLURM_JOB_NODELIST, ...; srun inside runs steps on its nodes), and gives\n"
         "the allocation back when COMMAND exits. Resource options are sbatch's: -N, -n, -c,\n"
         "--ntasks-per-node, --mem, --gpus, -t, -p, -J, -w, -x, --exclusive, ...\n"
         "  -I, --immediate[=SECS]     fail unless the allocation starts at once\n"
         "  -K, --kill-command[=SIG]   signal COMMAND (default SIGTERM) if the allocation is revoked\n";
  return code;
}

Result<SallocOptions> parse(const Args& args) {
  SallocOptions o;
  std::vector<std::string> positional;
  Status s = apply_salloc_options({args.begin() + 1, args.end()}, o.submit, positional);
  if (!s) return s;
  const SubmitRequest& r = o.submit;
  if (!r.controller.empty()) setenv("HQ_CONTROLLER", r.controller.c_str(), 1);  // first in find_controller
  if (!r.ca_file.empty()) setenv("HQ_CA_FILE", r.ca_file.c_str(), 1);            // first in find_transport
  o.immediate = r.immediate;
  o.kill_signal = r.kill_signal;
  o.command = std::move(positional);
  return o;
}

std::string login_shell() {
  if (passwd* pw = getpwuid(getuid()); pw && pw->pw_shell && *pw->pw_shell) return pw->pw_shell;
  const char* sh = getenv("SHELL");
  return sh && *sh ? sh : "/bin/sh";
}

pb::JobSpec allocation_spec(const SallocOptions& o, const std::vector<std::string>& exported) {
  JobSpec spec = o.submit.spec;
  spec.alloc_kind = AllocKind::kSalloc;
  if (!o.submit.name_set) spec.name = "interactive";
  spec.argv.clear();
  char cwd[4096];
  if (spec.workdir.empty()) spec.workdir = getcwd(cwd, sizeof cwd) ? cwd : "/tmp";
  fill_submitter(spec, exported);
  return net::to_pb(spec, true);
}

bool starts_with_any(const std::string& kv, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes)
    if (kv.rfind(p, 0) == 0) return true;
  return false;
}

// The command's environment: ours without another job's step variables, then the
// allocation's (without those that describe one node: the command runs here), then where
// srun finds the job's step manager.
std::vector<std::string> command_env(const Allocation& a, const pb::JobSpec& spec, const std::vector<std::string>& ours) {
  std::vector<std::string> env;
  for (const auto& kv : ours)
    if (!starts_with_any(kv, {"HQ_STEP_SOCKET=", "HQ_STEPMGR", "SLURM_STEP", "HQ_STEP_", "SLURM_STEPID="}))
      env.push_back(kv);
  for (auto& kv : allocation_env(a.granted, spec, ours)) {
    static const std::initializer_list<const char*> kNodeOrStart = {
        "SLURM_CPUS_ON_NODE=", "HQ_CPUS_ON_NODE=", "SLURM_NODEID=", "HQ_NODEID=", "SLURM_PROCID=", "HQ_PROCID=",
        "SLURM_LOCALID=", "HQ_LOCALID=", "SLURMD_NODENAME=", "HQ_NODENAME=", "SLURM_JOB_START_TIME=",
        "HQ_JOB_START_TIME=", "SLURM_JOB_END_TIME=", "HQ_JOB_END_TIME="};
    if (starts_with_any(kv, kNodeOrStart) || kv.back() == '=') continue;
    size_t eq = kv.find('=');
    std::erase_if(env, [&](const std::string& e) { return e.compare(0, eq + 1, kv, 0, eq + 1) == 0; });
    env.push_back(std::move(kv));
  }
  const auto& m = a.granted.stepmgr();
  env.push_back("HQ_STEPMGR=" + m.host() + ":" + std::to_string(m.port()));
  env.push_back("HQ_STEPMGR_NODE=" + m.node());
  if (!m.fingerprint().empty()) env.push_back("HQ_STEPMGR_FP=" + m.fingerprint());
  return env;
}

// Forks the command in a process group of its own (in the terminal's foreground when we
// have one). An exec failure comes back through a close-on-exec pipe as its errno.
Result<pid_t> start_command(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return io_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cargv.push_back(nullptr);
  cenv.push_back(nullptr);
  bool tty = isatty(0) && tcgetpgrp(0) == getpgrp();
  pid_t pid = fork();
  if (pid < 0) return io_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    if (tty) {
      signal(SIGTTOU, SIG_IGN);
      tcsetpgrp(0, getpid());
    }
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTTOU}) signal(sig, SIG_DFL);
    environ = cenv.data();
    execvp(cargv[0], cargv.data());
    int err = errno;
    (void)!write(report[1], &err, sizeof err);
    _exit(127);
  }
  setpgid(pid, pid);
  if (tty) {
    signal(SIGTTOU, SIG_IGN);
    tcsetpgrp(0, pid);
  }
  close(report[1]);
  int err = 0;
  ssize_t n;
  while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err)) {
    waitpid(pid, nullptr, 0);
    return Status(Code::kNotFound, std::strerror(err));
  }
  return pid;
}

// Waits for the command, passing TERM, HUP, USR1 and USR2 on (Ctrl-C and Ctrl-\ are the
// command's own, from its terminal), and every few seconds says the allocation is still
// held (InactiveLimit) and learns whether it still stands. Returns the command's wait status.
int wait_command(pid_t pid, Allocation& a, int kill_signal) {
  int32_t keepalive_s = a.granted.keepalive_s() > 0 ? a.granted.keepalive_s() : 5;
  auto check_every_s = [&] { return std::min(5.0, static_cast<double>(keepalive_s)); };
  double next_check = net::mono_seconds() + check_every_s();
  bool revoked = false;
  for (;;) {
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) return 0;
    pollfd p{signal_fd(), POLLIN, 0};
    int wait_ms = revoked ? -1 : static_cast<int>(std::max(0.0, next_check - net::mono_seconds()) * 1000) + 1;
    if (poll(&p, 1, wait_ms) > 0) {  // SIGCHLD comes through the pipe too
      while (int sig = next_signal())
        if (sig != SIGINT && sig != SIGQUIT && sig != SIGCHLD) kill(-pid, sig);
      continue;
    }
    if (revoked || net::mono_seconds() < next_check) continue;
    std::string state = say_alive(a.client, a.granted.job_id(), keepalive_s, 5);
    next_check = net::mono_seconds() + check_every_s();
    if (state.empty() || state == "RUNNING" || state == "COMPLETING") continue;
    revoked = true;
    hq::cerr() << "salloc: Job allocation " << a.granted.job_id() << " has been revoked." << std::endl;
    if (kill_signal) kill(-pid, kill_signal);
  }
}

// salloc's exit code for the command's wait status (salloc(1), RETURN VALUE).
int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  switch (WTERMSIG(status)) {
    case SIGHUP: case SIGINT: case SIGQUIT: case SIGKILL: return 0;
    default: return 1;
  }
}

}  // namespace

int run_salloc(const Args& args) {
  std::ostringstream help;
  usage(help, 0);
  if (auto done = answer_meta_option(salloc_meta_option({args.begin() + 1, args.end()}), args[0], help.str()))
    return *done;
  auto opts = parse(args);
  if (!opts) return option_failure("salloc", opts.status(), args[0] == "salloc" ? 255 : 1);  // hq alloc: hq's 1
  std::vector<std::string> ours;
  for (char** e = environ; e && *e; ++e) ours.emplace_back(*e);
  auto exported = export_environment(opts->submit.export_spec, ours);
  if (!exported) {
    hq::cerr() << "salloc: error: " << exported.status().message() << "\n";
    return 1;
  }
  catch_signals();
  catch_child_exits();
  pb::JobSpec spec = allocation_spec(*opts, *exported);
  auto requested = request_allocation(spec, {"salloc", opts->immediate});
  if (!requested) return 1;
  Allocation allocation = std::move(requested).value();
  std::vector<std::string> argv = opts->command.empty() ? std::vector<std::string>{login_shell()} : opts->command;
  auto pid = start_command(argv, command_env(allocation, spec, ours));
  int rc = 1, job_code = 1;
  if (!pid) {
    hq::cerr() << "salloc: error: _fork_command: Unable to find command \"" << argv.front() << "\"\n";
  } else {
    int status = wait_command(*pid, allocation, opts->kill_signal);
    if (isatty(0)) tcsetpgrp(0, getpgrp());
    rc = exit_code_of(status);
    job_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  release_allocation(allocation, job_code, "salloc");
  return rc;
}

}  // namespace hq::cmd
