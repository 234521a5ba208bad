// `hq local start|stop|status|restart`: a whole cluster on this machine (controller + N
// node agents as background processes), with its state under $HQ_HOME/local so that
// client commands find it without flags.
//
// The controller's port is picked once (a free loopback port) and kept in the generated
// config.toml; each daemon's pid and command line are kept in `daemons`. So a later
// `hq local start` revives exactly the daemons that died (kill -9, a crash) with their
// command lines, and the surviving agents find their controller on the same port.
#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <netinet/in.h>
#include <optional>
#include <set>
#include <sstream>
#include <sys/file.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "cmd/commands.hpp"
#include "cmd/config_toml.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

constexpr const char* kLocalUsage =
    "usage: hq local start [--nodes N] [--cpus C] [--block-size B] [--no-wait] | stop | status | restart NAME... [--no-wait]\n";

struct StartOptions {
  std::optional<int> nodes, cpus;  // unset: what the previous start had (else 2 nodes, probed CPUs)
  std::optional<int> block_size;   // nodes per topology block (0: no [topology]); unset: as before
  bool wait = true;                // wait until every node responds
};

// One daemon of the cluster: "controller" or a node name, its pid and its command line.
struct Daemon {
  std::string name;
  pid_t pid = 0;
  std::vector<std::string> argv;
};

// The block of node `i` (1-based) with blocks of `block_size` nodes: "b1", "b2", ...
std::string local_block(int i, int block_size) { return "b" + std::to_string((i - 1) / block_size + 1); }

std::string local_config(int nodes, int cpus, int block_size, int port, const std::string& dir) {
  std::ostringstream c;
  c << "# Written by `hq local start`: a single-host cluster. Edits survive restarts; a start with\n"
    << "# other --nodes or --cpus rewrites it (the port stays).\n"
    << "[cluster]\nname = \"local\"\nkeys_dir = \"" << dir << "/keys\"\n"
    << "allow_root_jobs = true   # a personal cluster: whoever runs it may run jobs as themselves\n\n"
    << "[controller]\nhost = \"127.0.0.1\"\nport = " << port << "\nstate_dir = \"" << dir << "/state\"\n"
    << "node_timeout = \"30s\"\nheartbeat_interval = \"5s\"\nkill_wait = \"5s\"\n"
    << "http_port = 0   # HTTPS for /metrics, probes and REST on a free port (state/http.addr; docs/observability.md)\n\n"
    << "[[node]]\nnames = \"local[1-" << nodes << "]\"\n";
  if (cpus > 0) c << "cpus = " << cpus << "\n";
  c << "\n[[partition]]\nname = \"debug\"\nnodes = \"local[1-" << nodes << "]\"\ndefault = true\n";
  if (block_size > 0) {  // `hq local start --block-size B`: blocks of B agents (docs/topology.md)
    c << "\n[topology]\nblock_sizes = [" << block_size << "]\n";
    for (int first = 1; first <= nodes; first += block_size)
      c << "[[topology.block]]\nname = \"" << local_block(first, block_size) << "\"\nnodes = \"local[" << first << "-"
        << std::min(nodes, first + block_size - 1) << "]\"\n";
  }
  return c.str();
}

// `daemons`: a line per daemon, tab-separated: NAME PID ARGV...; the controller first;
// pid 0 for one not started yet. `pids` beside it has the pids alone, one a line, the
// controller first (for scripts: slurm-bench's compare.sh reads the controller's memory).
std::vector<Daemon> read_daemons(const std::string& dir) {
  std::vector<Daemon> out;
  std::string text = read_small_file(dir + "/daemons");  // split() returns views into it
  for (std::string_view line : split(text, '\n')) {
    auto f = split(line, '\t');
    auto pid = f.size() >= 3 ? parse_int(f[1], 0, INT32_MAX) : Result<int64_t>(invalid(""));
    if (!pid) continue;
    Daemon d{std::string(f[0]), static_cast<pid_t>(*pid), {}};
    for (size_t i = 2; i < f.size(); ++i) d.argv.emplace_back(f[i]);
    out.push_back(std::move(d));
  }
  return out;
}

Status save_daemons(const std::string& dir, const std::vector<Daemon>& daemons) {
  std::string text, pids;
  for (const Daemon& d : daemons) {
    text += d.name + "\t" + std::to_string(d.pid);
    for (const auto& a : d.argv) text += "\t" + a;
    text += "\n";
    pids += std::to_string(d.pid) + "\n";
  }
  if (Status s = write_file_atomic(dir + "/pids", pids, 0644); !s) return s;
  return write_file_atomic(dir + "/daemons", text, 0644);
}

// Alive and still running its command line (a pid reused by another process is not ours).
bool alive(const Daemon& d) {
  if (!process_alive(d.pid)) return false;
  std::string cmdline = read_small_file("/proc/" + std::to_string(d.pid) + "/cmdline");
  std::string want;
  for (const auto& a : d.argv) want += a + '\0';
  return cmdline.empty() || cmdline == want;  // no /proc: trust the pid
}

// Binds 127.0.0.1:port (0: any) as the controller will (SO_REUSEADDR); the port bound, or
// 0 when it is taken.
uint16_t bindable_loopback_port(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t bound = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    bound = ntohs(a.sin_port);
  close(fd);
  return bound;
}

// Serialises start, stop and restart of one cluster (two at once would spawn twice).
class DirLock {
 public:
  explicit DirLock(const std::string& dir) : fd_(open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~DirLock() {
    if (fd_ >= 0) close(fd_);
  }
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  int fd_;
};

bool wait_for(const std::function<bool()>& ready, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ready();
}

// Nodes responding, or -1 when the controller does not answer.
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

std::string controller_addr(const std::string& dir) {
  return std::string(trim(read_small_file(dir + "/state/controller.addr")));
}

// Where the controller serves HTTPS ("" when it does not).
std::string http_url(const std::string& dir) {
  std::string addr(trim(read_small_file(dir + "/state/http.addr")));
  return addr.empty() ? "" : "https://" + addr + "/";
}

int agent_count(const std::vector<Daemon>& daemons) {
  return static_cast<int>(std::count_if(daemons.begin(), daemons.end(), [](const Daemon& d) { return d.name != "controller"; }));
}

// Starts the daemons named in `names` (stopping any still running first), in the
// recorded order, with their recorded command lines; the controller must answer before
// the agents start. With `wait`, also until every node responds.
int respawn(const std::string& dir, std::vector<Daemon>& daemons, const std::set<std::string>& names, bool wait) {
  for (Daemon& d : daemons) {
    if (!names.count(d.name)) continue;
    if (alive(d)) stop_process(d.pid);
    auto pid = spawn_daemon(d.argv, dir + "/logs/" + d.name + ".log");
    if (!pid) return hq::cerr() << "hq local: " << d.name << ": " << pid.status().message() << "\n", 1;
    d.pid = *pid;
    if (Status s = save_daemons(dir, daemons); !s) return hq::cerr() << "hq local: " << s.message() << "\n", 1;
    hq::cout() << "started " << d.name << " (pid " << d.pid << ")\n";
    if (d.name != "controller") continue;
    // (process_alive: until it has exec'ed, the child's command line is still ours.)
    bool answers = wait_for([&] { return !process_alive(d.pid) || registered_nodes() >= 0; }, 15000);
    if (!answers || !process_alive(d.pid)) {
      hq::cerr() << "hq local: the controller did not start; see " << dir << "/logs/controller.log\n";
      return 1;
    }
  }
  int nodes = agent_count(daemons);
  if (wait && !wait_for([&] { return registered_nodes() == nodes; }, 20000)) {
    hq::cerr() << "hq local: not every node registered; see " << dir << "/logs/\n";
    return 1;
  }
  hq::cout() << "local cluster running: controller " << controller_addr(dir) << ", " << nodes << " nodes, state in "
            << dir << "\n";
  return 0;
}

// Nothing runs: (re)writes the config where needed, keeping the port, and starts all.
int start_all(const std::string& dir, const StartOptions& o) {
  std::filesystem::create_directories(dir + "/logs");
  std::filesystem::create_directories(dir + "/state");
  std::filesystem::remove(dir + "/state/controller.addr");  // a stale one would name a dead controller
  std::string config_path = dir + "/config.toml";
  auto old = std::filesystem::exists(config_path) ? load_config_file(config_path) : Result<ClusterConfig>(not_found(""));
  int old_nodes = 0, old_cpus = 0, old_block = 0;
  if (old) {
    for (const auto& n : old->nodes) old_nodes += static_cast<int>(n.names.size());
    old_cpus = old->nodes.empty() ? 0 : old->nodes.front().cpus;
    if (old->topology.present && !old->topology.block_sizes.empty()) old_block = old->topology.block_sizes.front();
  }
  int nodes = o.nodes.value_or(old_nodes > 0 ? old_nodes : 2), cpus = o.cpus.value_or(old_cpus);
  int block_size = o.block_size.value_or(old_block);
  uint16_t port = old && old->controller.port > 0 ? bindable_loopback_port(static_cast<uint16_t>(old->controller.port)) : 0;
  if (old && old->controller.port > 0 && port == 0)
    hq::cerr() << "hq local: port " << old->controller.port << " is taken now; the controller gets another\n";
  bool keep_config = port != 0 && nodes == old_nodes && cpus == old_cpus && block_size == old_block;
  if (port == 0) port = bindable_loopback_port(0);
  if (port == 0) return hq::cerr() << "hq local: no free port on 127.0.0.1\n", 1;
  if (!keep_config) {
    if (Status s = write_file_atomic(config_path, local_config(nodes, cpus, block_size, port, dir), 0644); !s)
      return hq::cerr() << "hq local: " << s.message() << "\n", 1;
  }
  if (Status s = keygen(dir + "/keys", "local"); !s) return hq::cerr() << "hq local: " << s.message() << "\n", 1;
  std::string exe = self_exe(), addr = "127.0.0.1:" + std::to_string(port);
  std::vector<Daemon> daemons{{"controller", 0, {exe, "controller", "--config", config_path}}};
  for (int i = 1; i <= nodes; ++i) {
    std::string name = "local" + std::to_string(i), state = dir + "/nodes/" + name;
    daemons.push_back({name, 0, {exe, "node", "--controller", addr, "--name", name, "--state-dir", state, "--ca",
                                 dir + "/keys/ca.pem", "--secret", dir + "/keys/secret", "--run-dir", state + "/run",
                                 "--kill-jobs-on-exit"}});
    if (block_size > 0) daemons.back().argv.insert(daemons.back().argv.end(), {"--block", local_block(i, block_size)});
  }
  std::set<std::string> all;
  for (const Daemon& d : daemons) all.insert(d.name);
  return respawn(dir, daemons, all, o.wait);
}

int start(const std::string& dir, const StartOptions& o) {
  std::filesystem::create_directories(dir);
  DirLock lock(dir);
  auto daemons = read_daemons(dir);
  std::set<std::string> dead;
  for (const Daemon& d : daemons)
    if (!alive(d)) dead.insert(d.name);
  if (daemons.empty() || dead.size() == daemons.size()) return start_all(dir, o);
  int nodes = agent_count(daemons);
  if ((o.nodes && *o.nodes != nodes) || o.cpus) {
    hq::cerr() << "hq local: a local cluster of " << nodes << " nodes is running (" << dir
              << "); `hq local stop` first to change it\n";
    return 1;
  }
  if (dead.empty()) {
    hq::cout() << "local cluster already running: controller " << controller_addr(dir) << ", " << nodes << " nodes\n";
    return 0;
  }
  return respawn(dir, daemons, dead, o.wait);
}

int restart(const std::string& dir, const std::vector<std::string>& names, bool wait) {
  DirLock lock(dir);
  auto daemons = read_daemons(dir);
  std::set<std::string> wanted(names.begin(), names.end());
  for (const std::string& n : names) {
    if (std::none_of(daemons.begin(), daemons.end(), [&](const Daemon& d) { return d.name == n; }))
      return hq::cerr() << "hq local: no daemon '" << n << "' in " << dir << " (see `hq local status`)\n", 2;
  }
  return respawn(dir, daemons, wanted, wait);
}

int stop(const std::string& dir) {
  DirLock lock(dir);
  auto daemons = read_daemons(dir);
  if (daemons.empty()) {
    hq::cout() << "no local cluster is running (" << dir << ")\n";
    return 0;
  }
  for (auto it = daemons.rbegin(); it != daemons.rend(); ++it)  // agents first
    if (alive(*it)) stop_process(it->pid);
  std::filesystem::remove(dir + "/daemons");
  std::filesystem::remove(dir + "/pids");
  std::filesystem::remove(dir + "/state/controller.addr");
  hq::cout() << "local cluster stopped\n";
  return 0;
}

// A line per daemon: NAME pid PID alive|dead. Exit 0 only when all are alive.
int status(const std::string& dir) {
  auto daemons = read_daemons(dir);
  if (daemons.empty()) {
    hq::cout() << "no local cluster (" << dir << ")\n";
    return 1;
  }
  int up = 0;
  hq::cout() << "local cluster in " << dir << ": controller " << controller_addr(dir) << "\n";
  if (std::string url = http_url(dir); !url.empty()) {
    hq::cout() << "  http         " << url << " (/metrics, /healthz, /slurm/v0.0.43; CA " << dir << "/keys/ca.pem)\n";
    hq::cout() << "  dashboard    " << url << "ui/ (hq token --url: a link that signs in)\n";
  }
  for (const Daemon& d : daemons) {
    bool a = alive(d);
    up += a;
    hq::cout() << "  " << std::left << std::setw(12) << d.name << " pid " << std::setw(8) << d.pid << " "
              << (a ? "alive" : "dead") << "\n";
  }
  int responding = registered_nodes();
  hq::cout() << up << " of " << daemons.size() << " daemons alive, "
            << (responding < 0 ? "controller not answering" : std::to_string(responding) + " nodes responding") << "\n";
  return up == static_cast<int>(daemons.size()) ? 0 : 1;
}

}  // namespace

int run_local(const Args& args) {
  if (asks_help(args)) return hq::cout() << kLocalUsage, 0;
  std::string dir = local_dir();
  if (args.size() < 2) return hq::cerr() << kLocalUsage, 2;
  if (args[1].size() > 1 && args[1][0] == '-') return reject_option("hq local", args[1]);
  StartOptions o;
  std::vector<std::string> names;
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--no-wait") {
      o.wait = false;
    } else if (a == "--nodes" || a == "--cpus" || a == "--block-size") {
      auto n = i + 1 < args.size() ? parse_int(args[++i], a == "--block-size" ? 0 : 1, 1024)
                                   : Result<int64_t>(invalid("needs a value"));
      if (!n) return hq::cerr() << "hq local: " << a << ": " << n.status().message() << "\n", 2;
      (a == "--nodes" ? o.nodes : a == "--cpus" ? o.cpus : o.block_size) = static_cast<int>(*n);
    } else if (args[1] == "restart" && a.rfind("-", 0) != 0) {
      names.push_back(a);
    } else if (a.size() > 1 && a[0] == '-') {
      return reject_option("hq local", a);
    } else {
      return hq::cerr() << "hq local: unexpected argument '" << a << "'\n" << kLocalUsage, 2;
    }
  }
  if (args[1] == "start") return start(dir, o);
  if (args[1] == "stop") return stop(dir);
  if (args[1] == "status") return status(dir);
  if (args[1] == "restart" && !names.empty()) return restart(dir, names, o.wait);
  hq::cerr() << "hq local: unknown action '" << args[1] << "'\n" << kLocalUsage;
  return 2;
}

}  // namespace hq::cmd
