// `hq local start|stop|status`: a whole cluster on this machine (controller + N node
// agents as background processes), with its state under $HQ_HOME/local so that client
// commands find it without flags.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "cmd/commands.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

std::string local_config(int nodes, int cpus, const std::string& dir) {
  std::ostringstream c;
  c << "# Written by `hq local start`: a single-host cluster.\n"
    << "[cluster]\nname = \"local\"\nkeys_dir = \"" << dir << "/keys\"\n"
    << "allow_root_jobs = true   # a personal cluster: whoever runs it may run jobs as themselves\n\n"
    << "[controller]\nhost = \"127.0.0.1\"\nport = 0\nstate_dir = \"" << dir << "/state\"\n"
    << "node_timeout = \"30s\"\nheartbeat_interval = \"5s\"\nkill_wait = \"5s\"\n\n"
    << "[[node]]\nnames = \"local[1-" << nodes << "]\"\n";
  if (cpus > 0) c << "cpus = " << cpus << "\n";
  c << "\n[[partition]]\nname = \"debug\"\nnodes = \"local[1-" << nodes << "]\"\ndefault = true\n";
  return c.str();
}

std::vector<pid_t> read_pids(const std::string& dir) {
  std::vector<pid_t> pids;
  std::ifstream in(dir + "/pids");
  pid_t p;
  while (in >> p) pids.push_back(p);
  return pids;
}

bool wait_for(const std::function<bool()>& ready, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

int registered_nodes() {
  auto client = connect_client();
  if (!client) return -1;
  pb::Envelope env;
  env.mutable_nodes();
  auto r = (*client)->call(env, 5);
  if (!r) return -1;
  int n = 0;
  for (const auto& node : r->nodes_reply().nodes()) n += node.responding();
  return n;
}

int stop(const std::string& dir) {
  auto pids = read_pids(dir);
  if (pids.empty()) {
    std::cout << "no local cluster is running (" << dir << ")\n";
    return 0;
  }
  for (auto it = pids.rbegin(); it != pids.rend(); ++it) stop_process(*it);  // agents first
  std::filesystem::remove(dir + "/pids");
  std::filesystem::remove(dir + "/state/controller.addr");
  std::cout << "local cluster stopped\n";
  return 0;
}

int start(const std::string& dir, int nodes, int cpus) {
  for (pid_t p : read_pids(dir)) {
    if (process_alive(p)) {
      std::cerr << "hq local: a local cluster is already running (" << dir << "); `hq local stop` first\n";
      return 1;
    }
  }
  std::filesystem::create_directories(dir + "/logs");
  std::filesystem::create_directories(dir + "/state");
  std::filesystem::remove(dir + "/state/controller.addr");
  { std::ofstream(dir + "/config.toml") << local_config(nodes, cpus, dir); }
  if (Status s = keygen(dir + "/keys", "local"); !s) {
    std::cerr << "hq local: " << s.message() << "\n";
    return 1;
  }
  std::string exe = self_exe();
  std::vector<pid_t> pids;
  auto ctl = spawn_daemon({exe, "controller", "--config", dir + "/config.toml"}, dir + "/logs/controller.log");
  if (!ctl) return std::cerr << "hq local: " << ctl.status().message() << "\n", 1;
  pids.push_back(*ctl);
  auto save = [&] {
    std::ofstream out(dir + "/pids");
    for (pid_t p : pids) out << p << "\n";
  };
  save();
  std::string addr_file = dir + "/state/controller.addr";
  if (!wait_for([&] { return !read_small_file(addr_file).empty(); }, 15000)) {
    std::cerr << "hq local: the controller did not start; see " << dir << "/logs/controller.log\n";
    stop(dir);
    return 1;
  }
  std::string addr = read_small_file(addr_file);
  addr.erase(addr.find_last_not_of("\n ") + 1);
  for (int i = 1; i <= nodes; ++i) {
    std::string name = "local" + std::to_string(i);
    auto a = spawn_daemon({exe, "node", "--controller", addr, "--name", name, "--state-dir", dir + "/nodes/" + name,
                           "--ca", dir + "/keys/ca.pem", "--secret", dir + "/keys/secret", "--run-dir",
                           dir + "/nodes/" + name + "/run", "--kill-jobs-on-exit"},
                          dir + "/logs/" + name + ".log");
    if (a) pids.push_back(*a);
  }
  save();
  if (!wait_for([&] { return registered_nodes() == nodes; }, 20000)) {
    std::cerr << "hq local: not every node registered; see " << dir << "/logs/\n";
    return 1;
  }
  std::cout << "local cluster started: controller " << addr << ", " << nodes << " nodes, state in " << dir << "\n";
  return 0;
}

int status(const std::string& dir) {
  auto pids = read_pids(dir);
  int alive = 0;
  for (pid_t p : pids) alive += process_alive(p);
  if (pids.empty()) {
    std::cout << "no local cluster (" << dir << ")\n";
    return 1;
  }
  std::cout << "local cluster in " << dir << ": " << alive << " of " << pids.size() << " processes running, "
            << registered_nodes() << " nodes responding\n";
  return alive == static_cast<int>(pids.size()) ? 0 : 1;
}

}  // namespace

int run_local(const Args& args) {
  std::string dir = local_dir();
  if (args.size() < 2) {
    std::cerr << "usage: hq local start [--nodes N] [--cpus C] | stop | status\n";
    return 2;
  }
  int nodes = 2, cpus = 0;
  for (size_t i = 2; i + 1 < args.size(); i += 2) {
    auto n = parse_int(args[i + 1], 1, 1024);
    if (!n) return std::cerr << "hq local: " << args[i] << ": " << n.status().message() << "\n", 2;
    if (args[i] == "--nodes") nodes = static_cast<int>(*n);
    else if (args[i] == "--cpus") cpus = static_cast<int>(*n);
    else return std::cerr << "hq local: unknown option " << args[i] << "\n", 2;
  }
  if (args[1] == "start") return start(dir, nodes, cpus);
  if (args[1] == "stop") return stop(dir);
  if (args[1] == "status") return status(dir);
  std::cerr << "hq local: unknown action '" << args[1] << "' (start, stop, status)\n";
  return 2;
}

}  // namespace hq::cmd
