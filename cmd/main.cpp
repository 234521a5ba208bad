// hq's single entry point: busybox-style dispatch on argv[0] (sbatch, squeue, ...) or on
// the first argument (hq submit ...).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>

#include "cmd/commands.hpp"
#include "cmd/startup.hpp"
#include "core/std_streams.hpp"

namespace {

using Runner = int (*)(const hq::cmd::Args&);

struct Subcommand {
  std::string_view name;
  Runner run;
};

// A constant table searched in place: a map of strings and std::functions made at every
// start cost a client several microseconds before it did anything.
constexpr Subcommand kSubcommands[] = {
    {"controller", hq::cmd::run_controller}, {"node", hq::cmd::run_node}, {"accounting", hq::cmd::run_accounting},
    {"submit", hq::cmd::run_submit}, {"queue", hq::cmd::run_queue}, {"cancel", hq::cmd::run_cancel},
    {"nodes", hq::cmd::run_nodes}, {"show", hq::cmd::run_show}, {"local", hq::cmd::run_local},
    {"init", hq::cmd::run_init}, {"hostlist", hq::cmd::run_hostlist}, {"keygen", hq::cmd::run_keygen},
    {"bench", hq::cmd::run_bench}, {"install-links", hq::cmd::run_install_links},
    {"hold", hq::cmd::run_job_control}, {"uhold", hq::cmd::run_job_control}, {"release", hq::cmd::run_job_control},
    {"requeue", hq::cmd::run_job_control}, {"requeuehold", hq::cmd::run_job_control},
    {"explain", hq::cmd::run_explain}, {"token", hq::cmd::run_token}, {"update", hq::cmd::run_job_update},
    {"sim", hq::cmd::run_sim}, {"config", hq::cmd::run_config}, {"control", hq::cmd::run_node_control},
    {"sbatch", hq::cmd::run_submit}, {"squeue", hq::cmd::run_queue}, {"scancel", hq::cmd::run_cancel},
    {"sinfo", hq::cmd::run_nodes}, {"scontrol", hq::cmd::run_scontrol}, {"run", hq::cmd::run_srun},
    {"srun", hq::cmd::run_srun}, {"alloc", hq::cmd::run_salloc}, {"salloc", hq::cmd::run_salloc},
    {"acct", hq::cmd::run_sacct}, {"sacct", hq::cmd::run_sacct}, {"acctmgr", hq::cmd::run_sacctmgr},
    {"sacctmgr", hq::cmd::run_sacctmgr}, {"share", hq::cmd::run_sshare}, {"sshare", hq::cmd::run_sshare},
    {"prio", hq::cmd::run_sprio}, {"sprio", hq::cmd::run_sprio}, {"report", hq::cmd::run_sreport},
    {"sreport", hq::cmd::run_sreport},
};

Runner find_subcommand(std::string_view name) {
  for (const Subcommand& c : kSubcommands)
    if (c.name == name) return c.run;
  return nullptr;
}

bool one_of(std::string_view word, std::initializer_list<std::string_view> words) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

int usage(std::ostream& out, int code) {
  out << "hq: a cluster workload manager in one binary\n\n"
         "usage: hq <command> [options]   (hq <command> --help for details)\n\n"
         "daemons:  controller, node, accounting\n"
         "clients:  submit, run, alloc, queue, cancel, nodes, show, hold, release, requeue, update, explain, token, acct, acctmgr, share, prio, report\n"
         "admin:    control drain|resume|delete\n"
         "tools:    local start|stop|status|restart, init, keygen, hostlist, bench, install-links\n\n"
         "Invoked as sbatch, srun, salloc, squeue, scancel, sinfo, scontrol, sacct, sacctmgr, sshare, sprio or sreport it behaves as that Slurm command.\n";
  return code;
}

// --wait-for-controller works with every client command: taken out here, it makes
// connect_client() retry an unreachable controller forever (HQ_WAIT_FOR_CONTROLLER=1).
hq::cmd::Args strip_wait_flag(hq::cmd::Args args) {
  auto it = std::find(args.begin(), args.end(), std::string("--wait-for-controller"));
  if (it == args.end()) return args;
  args.erase(it);
  setenv("HQ_WAIT_FOR_CONTROLLER", "1", 1);
  return args;
}

// Commands whose arguments after the options run as a program: they take --controller in
// their own option tables, where it is told from the program's arguments.
bool passes_arguments_on(const std::string& cmd) {
  return cmd == "submit" || cmd == "sbatch" || cmd == "run" || cmd == "srun" || cmd == "alloc" || cmd == "salloc";
}

// The flags every client takes, each setting the environment variable that comes first
// where the client looks (find_controller(), the CA's lookup).
constexpr std::pair<const char*, const char*> kClientFlags[] = {{"--controller", "HQ_CONTROLLER"}, {"--ca", "HQ_CA_FILE"}};

// --controller HOST:PORT and --ca FILE (or =VALUE) taken out of `args` from `from` on, into
// their variables for this process. An error (a flag without its value): nullopt.
std::optional<hq::cmd::Args> strip_client_flags(hq::cmd::Args args, size_t from = 1, bool leading_only = false) {
  for (size_t i = from; i < args.size(); ++i) {
    bool taken = false;
    for (auto [flag, variable] : kClientFlags) {
      std::string name = flag, value;
      size_t take = 0;
      if (args[i] == name) {
        if (i + 1 >= args.size()) {
          hq::cerr() << args[0] << ": error: " << name << " needs a value\n";
          return std::nullopt;
        }
        value = args[i + 1];
        take = 2;
      } else if (args[i].rfind(name + "=", 0) == 0) {
        value = args[i].substr(name.size() + 1);
        take = 1;
      } else {
        continue;
      }
      setenv(variable, value.c_str(), 1);
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i + take));
      --i;
      taken = true;
      break;
    }
    if (!taken && leading_only) break;
  }
  return args;
}

// The arguments a client command runs with: --wait-for-controller and (for commands that
// do not run programs) --controller and --ca taken out.
std::optional<hq::cmd::Args> client_args(const std::string& cmd, hq::cmd::Args args) {
  bool not_a_client = one_of(cmd, {"controller", "node", "accounting", "local", "init", "keygen", "config", "bench",
                                   "install-links", "hostlist", "sim"});
  args = strip_wait_flag(std::move(args));
  if (not_a_client || passes_arguments_on(cmd)) return args;
  return strip_client_flags(std::move(args));
}

// Commands that run on after their command function returns, or whose static objects
// have work left at exit (the daemons' loggers and stores, the benchmarks' threads).
bool runs_static_destructors(const std::string& cmd) {
  return one_of(cmd, {"controller", "node", "accounting", "bench", "sim", "local"});
}

// A one-shot client's end: its output flushed (the standard streams, if built, write
// through stdio's buffers: core/std_streams.hpp), then the process ends without running the
// static destructors of every library linked in (protobuf's default instances, asio's
// services: pages of the binary touched for the first time only to be freed).
int finish(const std::string& cmd, int code) {
  if (runs_static_destructors(cmd)) return code;
  std::fflush(nullptr);
  std::_Exit(code);
}

// `hq --version` (or `hq version`) alone: one write(2), before any other work. Not through
// hq::cout() (that would build the C++ streams) nor printf (stdio's buffer and formatting
// are pages of their own, each a page fault here).
bool answered_version(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "--version") != 0 && std::strcmp(argv[1], "version") != 0)) return false;
  std::string_view base = argv[0];
  base.remove_prefix(base.rfind('/') + 1);  // npos + 1 == 0
  if (!base.empty() && base[0] == 's') return false;  // perhaps a persona (sbatch, ...): main() tells
  constexpr std::string_view kLine = "hq " HQ_VERSION "\n";
  for (size_t done = 0; done < kLine.size();) {
    ssize_t n = ::write(STDOUT_FILENO, kLine.data() + done, kLine.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (answered_version(argc, argv)) std::_Exit(0);  // no exit handlers: some 300, protobuf's among them
  std::string self = argv[0];
  if (auto slash = self.rfind('/'); slash != std::string::npos) self = self.substr(slash + 1);
  hq::cmd::Args args(argv, argv + argc);
  if (Runner persona = self != "hq" && self[0] == 's' ? find_subcommand(self) : nullptr) {
    hq::cmd::populate_command_memory();
    args[0] = self;
    auto run_with = client_args(self, args);
    return finish(self, run_with ? persona(*run_with) : 1);
  }
  auto leading = strip_client_flags(args, 1, /*leading_only=*/true);  // hq --controller HOST:PORT --ca FILE <command> ...
  if (!leading) return 1;
  args = std::move(*leading);
  if (args.size() < 2) return usage(hq::cerr(), 2);
  std::string sub = args[1];
  if (sub == "-h" || sub == "--help" || sub == "help") return usage(hq::cout(), 0);
  if (sub == "--version" || sub == "version") {  // after leading client flags (answered_version: alone)
    std::printf("hq %s\n", hq::cmd::kHqVersion);
    return finish(sub, 0);
  }
  if (sub.size() > 1 && sub[0] == '-') return hq::cmd::reject_option("hq", sub);
  Runner run = find_subcommand(sub);
  if (!run) {
    hq::cerr() << "hq: unknown command '" << sub << "'\n";
    return usage(hq::cerr(), 2);
  }
  hq::cmd::populate_command_memory();
  args.erase(args.begin());
  auto run_with = client_args(sub, args);
  return finish(sub, run_with ? run(*run_with) : 1);
}
