// hq's single entry point: busybox-style dispatch on argv[0] (sbatch, squeue, ...) or on
// the first argument (hq submit ...).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "cmd/commands.hpp"

namespace {

using Runner = std::function<int(const hq::cmd::Args&)>;

const std::map<std::string, Runner>& subcommands() {
  using namespace hq::cmd;
  static const std::map<std::string, Runner> table = {
      {"controller", run_controller}, {"node", run_node},       {"submit", run_submit},
      {"queue", run_queue},           {"cancel", run_cancel},   {"nodes", run_nodes},
      {"show", run_show},             {"local", run_local},     {"init", run_init},
      {"hostlist", run_hostlist},     {"keygen", run_keygen},     {"bench", run_bench},     {"install-links", run_install_links},
      {"hold", run_job_control},      {"uhold", run_job_control}, {"release", run_job_control},
      {"requeue", run_job_control},   {"requeuehold", run_job_control}, {"explain", run_explain},
      {"update", run_job_update},
      {"sim", run_sim},                 {"config", run_config},   {"control", run_node_control},
      {"sbatch", run_submit},         {"squeue", run_queue},    {"scancel", run_cancel},
      {"sinfo", run_nodes},           {"scontrol", run_scontrol}, {"run", run_srun}, {"srun", run_srun},
      {"alloc", run_salloc},          {"salloc", run_salloc},
  };
  return table;
}

int usage(std::ostream& out, int code) {
  out << "hq: a cluster workload manager in one binary\n\n"
         "usage: hq <command> [options]   (hq <command> --help for details)\n\n"
         "daemons:  controller, node\n"
         "clients:  submit, run, alloc, queue, cancel, nodes, show, hold, release, requeue, update, explain\n"
         "admin:    control drain|resume|delete\n"
         "tools:    local start|stop|status|restart, init, keygen, hostlist, bench, install-links\n\n"
         "Invoked as sbatch, srun, salloc, squeue, scancel, sinfo or scontrol it behaves as that Slurm command.\n";
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

}  // namespace

int main(int argc, char** argv) {
  std::string self = argv[0];
  if (auto slash = self.rfind('/'); slash != std::string::npos) self = self.substr(slash + 1);
  hq::cmd::Args args(argv, argv + argc);
  const auto& table = subcommands();
  if (self != "hq" && table.count(self) && std::string(self).find_first_of("s") == 0) {
    args[0] = self;
    return table.at(self)(strip_wait_flag(args));
  }
  if (argc < 2) return usage(std::cerr, 2);
  std::string sub = argv[1];
  if (sub == "-h" || sub == "--help" || sub == "help") return usage(std::cout, 0);
  if (sub == "--version" || sub == "version") {
    std::cout << "hq " << hq::cmd::kHqVersion << "\n";
    return 0;
  }
  auto it = table.find(sub);
  if (it == table.end()) {
    std::cerr << "hq: unknown command '" << sub << "'\n";
    return usage(std::cerr, 2);
  }
  args.erase(args.begin());
  return it->second(strip_wait_flag(args));
}
