// `hq bench join [--agents N]... [--window W] [--threads T]`: how fast a fresh controller
// takes in N node agents. It starts a controller from this binary (dynamic nodes, one ALL
// partition), then simulates N agents in this process, each with its own TCP connection,
// full TLS handshake, node token and RegisterNode, at most W joins in flight, on T threads
// (each its own io_context and TLS context; the client side of a handshake costs about
// twice the controller's). It reports the time until every agent has its RegisterAck and
// until the controller shows all N nodes IDLE, and the controller's CPU time and memory.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cmd/commands.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/units.hpp"
#include "net/client.hpp"
#include "net/clock.hpp"
#include "net/connection.hpp"
#include "net/tls.hpp"
#include "net/token.hpp"

namespace hq::cmd {
namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

struct JoinRun {
  int first = 1, agents = 0, window = 128;  // agents first .. first + agents - 1
  int next = 0, joined = 0, failed = 0;
  std::vector<std::shared_ptr<net::Connection>> conns;  // kept open: a node that hangs up is not IDLE
  Clock::time_point start, all_joined;
};

int64_t rss_mib(pid_t pid) {
  int64_t kib = rss_kib(pid);
  return kib < 0 ? -1 : kib / 1024;
}

// User + system CPU seconds a process has used (/proc/PID/stat fields 14 and 15).
double cpu_seconds(pid_t pid) {
  auto f = proc_stat(pid);
  if (f.size() < 13) return -1;
  auto u = parse_int(f[11], 0, INT64_MAX), k = parse_int(f[12], 0, INT64_MAX);
  return u && k ? static_cast<double>(*u + *k) / static_cast<double>(sysconf(_SC_CLK_TCK)) : -1;
}

// One simulated agent: connect, TLS, Hello with a node token, RegisterNode, RegisterAck.
asio::awaitable<bool> join_one(asio::io_context& io, tcp::endpoint ep, std::shared_ptr<net::TlsContext> tls,
                               const net::Keyring& ring, int i, JoinRun& run) {
  std::string name = "sim" + std::to_string(i);
  tcp::socket socket(io);
  co_await socket.async_connect(ep, asio::use_awaitable);
  auto conn = std::make_shared<net::Connection>(io.get_executor(), net::make_tls_stream(std::move(socket), tls));
  net::Identity me;
  me.role = "node";
  me.node = name;
  auto token = net::mint_token(ring, me, net::wall_now());
  if (!token) co_return false;
  auto hello = co_await conn->handshake_as_client("node", name, *token);
  if (!hello) co_return false;
  pb::Envelope env;
  auto* reg = env.mutable_register_node();
  reg->set_name(name);
  reg->set_cpus(64);
  reg->set_mem_mib(256 * 1024);
  reg->set_boot_time(net::wall_now() - 3600);
  conn->send(env);
  auto ack = co_await conn->recv();
  if (!ack || !ack->has_register_ack()) co_return false;
  run.conns.push_back(conn);
  co_return true;
}

// Takes the next agent to join until none is left; retries a failed join a few times.
asio::awaitable<void> worker(asio::io_context& io, tcp::endpoint ep, std::shared_ptr<net::TlsContext> tls,
                             const net::Keyring& ring, JoinRun& run) {
  while (run.next < run.agents) {
    int i = run.first + run.next++;
    bool ok = false;
    for (int attempt = 0; attempt < 5 && !ok; ++attempt) {
      try {
        ok = co_await join_one(io, ep, tls, ring, i, run);
      } catch (const std::exception&) {
        ok = false;
      }
      if (!ok) {
        asio::steady_timer t(io, std::chrono::milliseconds(50 << attempt));
        co_await t.async_wait(asio::use_awaitable);
      }
    }
    ok ? ++run.joined : ++run.failed;
    if (run.joined + run.failed == run.agents) run.all_joined = Clock::now();
  }
}

// Nodes the controller shows IDLE and responding.
int idle_nodes(const std::string& addr, const net::Transport& base, const net::Keyring& ring) {
  net::Identity me;
  me.uid = getuid();
  me.gid = getgid();
  auto token = net::mint_token(ring, me, net::wall_now());
  if (!token) return -1;
  net::Transport t = base;
  t.token = *token;
  auto client = net::RpcClient::connect(*net::parse_endpoint(addr), t, "client", 30);
  if (!client) return -1;
  pb::Envelope env;
  env.mutable_nodes();
  auto reply = (*client)->call(env, 60);
  if (!reply) return -1;
  int idle = 0;
  for (const auto& n : reply->nodes_reply().nodes()) idle += n.state() == "IDLE" && n.responding();
  return idle;
}

int run_join(int agents, int window, int threads_wanted) {
  char tmpl[] = "/tmp/hq-bench-join-XXXXXX";
  if (!mkdtemp(tmpl)) return std::perror("mkdtemp"), 1;
  std::string dir = tmpl;
  std::ofstream(dir + "/config.toml")
      << "[cluster]\nname = \"join\"\nkeys_dir = \"" << dir << "/keys\"\n[controller]\nhost = \"127.0.0.1\"\nport = 0\n"
      << "state_dir = \"" << dir << "/state\"\nheartbeat_interval = \"300s\"\nnode_timeout = \"600s\"\n"
      << "max_connections = " << agents + 1000 << "\nmax_connections_per_peer = " << agents + 1000 << "\n"
      << "[[partition]]\nname = \"all\"\nnodes = \"ALL\"\ndefault = true\n";
  auto cleanup = [&](pid_t ctl) {
    if (ctl > 0) stop_process(ctl, 5000);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  };
  if (Status s = keygen(dir + "/keys", "join"); !s) return std::fprintf(stderr, "%s\n", s.message().c_str()), cleanup(0), 1;
  auto ring = load_keyring(dir + "/keys/secret");
  std::string ca = read_small_file(dir + "/keys/ca.pem");
  auto ctl = spawn_daemon({self_exe(), "controller", "--config", dir + "/config.toml"}, dir + "/controller.log");
  if (!ring || !ctl) return std::fprintf(stderr, "bench join: setup failed\n"), cleanup(0), 1;
  std::string addr;
  for (int i = 0; i < 400 && addr.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    addr = std::string(trim(read_small_file(dir + "/state/controller.addr")));
  }
  auto ep = net::parse_endpoint(addr);
  if (!ep) return std::fprintf(stderr, "bench join: controller did not start (%s)\n", dir.c_str()), cleanup(*ctl), 1;
  int64_t rss_before = rss_mib(*ctl);
  double cpu_before = cpu_seconds(*ctl);
  // Simulated agents on `threads` threads (each its own io_context and TLS context: the
  // client side of 10,000 handshakes is more work than the controller's side).
  tcp::endpoint endpoint(asio::ip::make_address(ep->host), ep->port);
  int threads = std::max(1, std::min(threads_wanted, agents));
  std::vector<JoinRun> runs(static_cast<size_t>(threads));
  std::vector<std::unique_ptr<asio::io_context>> ios;
  auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    JoinRun& run = runs[static_cast<size_t>(t)];
    run.first = 1 + agents / threads * t;
    run.agents = t + 1 == threads ? agents - agents / threads * t : agents / threads;
    run.start = start;
    ios.push_back(std::make_unique<asio::io_context>(1));
    pool.emplace_back([&, t] {
      JoinRun& r = runs[static_cast<size_t>(t)];
      asio::io_context& io = *ios[static_cast<size_t>(t)];
      auto ctx = net::make_tls_client_context(ca);
      if (!ctx) return;
      for (int w = 0; w < std::max(1, std::min(window / threads, r.agents)); ++w)
        asio::co_spawn(io, worker(io, endpoint, *ctx, *ring, r), asio::detached);
      while (r.joined + r.failed < r.agents) io.run_for(std::chrono::milliseconds(50));
    });
  }
  for (auto& th : pool) th.join();
  JoinRun run;
  run.agents = agents;
  run.start = start;
  run.all_joined = start;
  for (auto& r : runs) {
    run.joined += r.joined;
    run.failed += r.failed;
    run.all_joined = std::max(run.all_joined, r.all_joined);
  }
  double joined_s = std::chrono::duration<double>(run.all_joined - run.start).count();
  // The agents' connections stay open (their nodes up) while the controller's view is read.
  net::Transport base{false, ca};
  int idle = idle_nodes(addr, base, *ring);
  for (int i = 0; i < 600 && idle < run.joined; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    idle = idle_nodes(addr, base, *ring);
  }
  double idle_s = std::chrono::duration<double>(Clock::now() - start).count();
  int64_t rss_after = rss_mib(*ctl);
  double ctl_cpu = cpu_seconds(*ctl) - cpu_before;
  std::printf("agents=%d joined=%d failed=%d all_registered_s=%.2f all_idle_s=%.2f joins_per_s=%.0f "
              "controller_cpu_s=%.2f bench_cpu_s=%.2f controller_rss_mib=%lld (before %lld) window=%d threads=%d\n",
              agents, run.joined, run.failed, joined_s, idle_s, joined_s > 0 ? run.joined / joined_s : 0.0, ctl_cpu,
              cpu_seconds(getpid()), static_cast<long long>(rss_after), static_cast<long long>(rss_before), window, threads);
  std::fflush(stdout);
  runs.clear();
  cleanup(*ctl);
  return run.failed == 0 && idle >= run.joined ? 0 : 1;
}

}  // namespace

int bench_join(const Args& args) {
  raise_fd_limit();
  int window = 128, threads = 2;
  std::vector<int> sizes;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--agents" && i + 1 < args.size()) {
      if (auto n = parse_int(args[++i], 1, 100000)) sizes.push_back(static_cast<int>(*n));
    } else if (args[i] == "--threads" && i + 1 < args.size()) {
      if (auto n = parse_int(args[++i], 1, 64)) threads = static_cast<int>(*n);
    } else if (args[i] == "--window" && i + 1 < args.size()) {
      if (auto n = parse_int(args[++i], 1, 10000)) window = static_cast<int>(*n);
    }
  }
  if (sizes.empty()) sizes = {100, 1000};
  std::printf("hq bench join: simulated agents join a fresh controller (TLS, node tokens, RegisterNode)\n");
  int rc = 0;
  for (int n : sizes) rc |= run_join(n, window, threads);
  return rc;
}

}  // namespace hq::cmd
