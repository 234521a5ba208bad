// `hq bench submit|e2e` (and the dispatch to the other benches): built-in benchmarks. Each starts its own controller (and, for
// e2e, node agents) from this binary in a temp dir, measures, prints `key=value` lines
// (machine-readable) and stops everything it started.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "cmd/auth_client.hpp"
#include "cmd/bench_cluster.hpp"
#include "cmd/commands.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/job.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"
#include "net/client.hpp"
#include "net/clock.hpp"

namespace hq::cmd {
namespace {

pb::Envelope trivial_submit(const std::string& workdir, bool hold) {
  pb::Envelope env;
  auto* s = env.mutable_submit()->mutable_spec();
  s->set_name("bench");
  s->set_script("#!/bin/sh\ntrue\n");
  s->set_workdir(workdir);
  s->set_user(current_user_name());
  s->set_uid(getuid());
  s->set_gid(getgid());
  s->set_nodes_min(1);
  s->set_ntasks(1);
  s->set_cpus_per_task(1);
  s->set_time_limit(kTimeUnset);
  s->set_hold(hold);
  s->add_env("PATH=/usr/bin:/bin");
  return env;
}

double sequential_processes(const BenchCluster& c, int n) {
  double t0 = net::mono_seconds();
  for (int i = 0; i < n; ++i)
    if (!run_client(c, {"hq", "submit", "--hold", "--wrap", "true"}, "/dev/null")) return -1;
  return n / (net::mono_seconds() - t0);
}

double concurrent_clients(const BenchCluster& c, int clients, int per_client) {
  auto ep = net::parse_endpoint(c.addr);
  std::atomic<int> failures{0};
  double t0 = net::mono_seconds();
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&] {
      auto client = bench_connect(c);
      if (!client) { ++failures; return; }
      for (int i = 0; i < per_client; ++i)
        if (!(*client)->call(trivial_submit(c.dir, true))) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  double rate = clients * per_client / (net::mono_seconds() - t0);
  return failures ? -1 : rate;
}

// One connection, up to `window` submissions in flight.
Result<double> streaming(const BenchCluster& c, int n, bool hold, int window = 512) {
  auto client = bench_connect(c);
  if (!client) return client.status();
  double t0 = net::mono_seconds();
  int sent = 0, acked = 0;
  while (acked < n) {
    while (sent < n && sent - acked < window) {
      (*client)->send(trivial_submit(c.dir, hold));
      ++sent;
    }
    auto r = (*client)->recv();
    if (!r) return r.status();
    ++acked;
  }
  return n / (net::mono_seconds() - t0);
}

// Cost of a new connection: TCP connect + TLS handshake + protocol handshake.
double connect_ms(const BenchCluster& c, int n) {
  double t0 = net::mono_seconds();
  for (int i = 0; i < n; ++i)
    if (!bench_connect(c)) return -1;
  return (net::mono_seconds() - t0) * 1000 / n;
}

int bench_submit(int seq_n, int conc_n, int clients, bool plaintext) {
  BenchCluster c;
  if (Status s = start_cluster(c, 0, 1, plaintext); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  double conn_ms = connect_ms(c, 200);
  double seq = sequential_processes(c, seq_n);
  double conc = concurrent_clients(c, clients, conc_n / clients);
  auto stream = streaming(c, conc_n, true);
  std::string tr = plaintext ? " transport=plaintext" : " transport=tls";
  hq::cout() << "bench=connect" << tr << " ms_per_connection=" << conn_ms << "\n"
            << "bench=submit" << tr << " sequential_processes=" << seq_n << " rate_per_s=" << static_cast<int>(seq) << "\n"
            << "bench=submit" << tr << " concurrent_clients=" << clients << " jobs=" << conc_n << " rate_per_s=" << static_cast<int>(conc) << "\n"
            << "bench=submit" << tr << " streaming_client=1 jobs=" << conc_n << " rate_per_s=" << (stream ? static_cast<int>(*stream) : -1) << "\n";
  return seq > 0 && conc > 0 && stream ? 0 : 1;
}

int bench_e2e(int n, int nodes, int cpus, bool plaintext) {
  BenchCluster c;
  if (Status s = start_cluster(c, nodes, cpus, plaintext); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  auto client = bench_connect(c);
  if (!client) return hq::cerr() << "hq bench: " << client.status().message() << "\n", 1;
  if (Status s = wait_for_nodes(**client, nodes); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  double t0 = net::mono_seconds();
  auto submitted = streaming(c, n, false);
  if (!submitted) return hq::cerr() << "hq bench: " << submitted.status().message() << "\n", 1;
  (void)wait_until_idle(**client, std::max(0.0, t0 + 600 - net::mono_seconds()));  // the outputs say if all ran
  double elapsed = net::mono_seconds() - t0;
  size_t outputs = 0;
  for (const auto& e : std::filesystem::directory_iterator(c.dir))
    outputs += e.path().filename().string().rfind("slurm-", 0) == 0;
  hq::cout() << "bench=e2e" << (plaintext ? " transport=plaintext" : " transport=tls") << " jobs=" << n << " nodes=" << nodes << " cpus_per_node=" << cpus << " seconds=" << elapsed
            << " jobs_per_s=" << static_cast<int>(n / elapsed) << " output_files=" << outputs << "\n";
  return outputs == static_cast<size_t>(n) ? 0 : 1;
}

}  // namespace

int flag(const Args& args, const std::string& name, int def) {
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == name) {
      auto v = parse_int(args[i + 1], 1, 10000000);
      if (v) return static_cast<int>(*v);
    }
  return def;
}

namespace {
constexpr char kBenchUsage[] =
    "usage: hq bench submit [--sequential N] [--jobs N] [--clients N] [--plaintext]\n"
    "       hq bench e2e [--jobs N] [--nodes N] [--cpus C] [--plaintext]\n"
    "       hq bench sched [--nodes N --jobs M] [--depth D] [--repeat R] [--limits] [--blocks B | --tree L]\n"
    "       hq bench metrics [--nodes N --jobs M] [--repeat R]\n"
    "       hq bench join [--agents N]... [--window W]\n"
    "       hq bench steps [--nodes N]... [--steps N]\n"
    "       hq bench cli [--sequential N] [--jobs N] [--clients N] [--pending N] [--nodes N] [--cpus C] [--tcp]\n"
    "       hq bench accounting [--jobs N] [--users U] [--repeat R] [--ends N] [--store postgresql://...]\n";
}  // namespace

int run_bench(const Args& args) {
  if (asks_help(args)) return hq::cout() << kBenchUsage, 0;
  std::string what = args.size() > 1 ? args[1] : "";
  if (auto bad = unknown_option(args, {"--sequential", "--jobs", "--clients", "--plaintext", "--nodes", "--cpus", "--depth",
                                       "--repeat", "--limits", "--blocks", "--tree", "--agents", "--window", "--steps", "--users", "--ends",
                                       "--pending", "--tcp", "--store"}))
    return reject_option("hq bench", *bad);
  bool plaintext = std::find(args.begin(), args.end(), "--plaintext") != args.end();
  if (what == "submit")
    return bench_submit(flag(args, "--sequential", 500), flag(args, "--jobs", 20000), flag(args, "--clients", 8), plaintext);
  if (what == "sched") return bench_sched(args);
  if (what == "metrics") return bench_metrics(args);
  if (what == "join") return bench_join(args);
  if (what == "steps") return bench_steps(args);
  if (what == "cli") return bench_cli(args);
  if (what == "accounting") return bench_accounting(args);
  if (what == "e2e") return bench_e2e(flag(args, "--jobs", 5000), flag(args, "--nodes", 4), flag(args, "--cpus", 16), plaintext);
  hq::cerr() << kBenchUsage;
  return 2;
}

}  // namespace hq::cmd
