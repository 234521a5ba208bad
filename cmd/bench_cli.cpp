// `hq bench cli`: the paths users time, one process per command as a shell loop starts
// them (slurm-bench's compare.sh A1, A2, C and D), against a throwaway cluster of this
// binary: sequential and concurrent `sbatch -H --wrap=true`, `squeue` over a pending
// queue (the full listing and filtered ones), and `sbatch` until COMPLETED. Clients come
// in through the controller's local socket, as on its host; --tcp makes them use TLS and
// tokens instead. Prints key=value lines. Runs on the calling thread, plus the submitting
// threads of the concurrent phase.
#include <algorithm>
#include <atomic>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "cmd/bench_cluster.hpp"
#include "cmd/bench_timing.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"

namespace hq::cmd {
namespace {

const std::vector<std::string> kHeldSubmit = {"sbatch", "-Q", "-H", "-o", "/dev/null", "--wrap=true"};

// `total` submissions by `loops` threads, each running one sbatch process after the other.
double submit_loops(const BenchCluster& c, int total, int loops) {
  std::atomic<int> failures{0};
  double t0 = net::mono_seconds();
  std::vector<std::thread> threads;
  for (int t = 0; t < loops; ++t)
    threads.emplace_back([&, n = total / loops + (t < total % loops ? 1 : 0)] {
      for (int i = 0; i < n; ++i)
        if (!run_client(c, kHeldSubmit, "/dev/null")) ++failures;
    });
  for (auto& t : threads) t.join();
  return failures ? -1 : total / (net::mono_seconds() - t0);
}

// Median milliseconds of ten runs of one client command line; -1 when one fails.
double command_ms(const BenchCluster& c, const std::vector<std::string>& argv) {
  return median_ms(timed_ms(10, [&] { return run_client(c, argv, "/dev/null"); }));
}

// A job's state as the controller has it ("" when unknown).
std::string state_of(net::RpcClient& client, uint64_t id) {
  pb::Envelope env;
  env.mutable_queue()->add_job_ids(id);
  env.mutable_queue()->set_include_finished(true);
  env.mutable_queue()->set_brief(true);
  auto reply = client.call(env);
  if (!reply || reply->queue_reply().jobs_size() == 0) return "";
  return reply->queue_reply().jobs(0).state();
}

// Milliseconds from starting `sbatch --wrap=true` to the job being COMPLETED, watched
// every millisecond over one connection; the median of ten.
double to_completed_ms(const BenchCluster& c, net::RpcClient& client) {
  std::string out = c.dir + "/bench-cli-id";
  return median_ms(timed_ms(10, [&] {
    double t0 = net::mono_seconds();
    if (!run_client(c, {"sbatch", "--parsable", "-o", "/dev/null", "--wrap=true"}, out)) return false;
    std::ifstream in(out);
    uint64_t id = 0;
    if (!(in >> id)) return false;
    for (std::string state; net::mono_seconds() - t0 < 30; usleep(1000)) {
      state = state_of(client, id);
      if (state == "COMPLETED") return true;
      if (state == "FAILED" || state == "CANCELLED") return false;
    }
    return false;
  }));
}

}  // namespace

int bench_cli(const Args& args) {
  int sequential = flag(args, "--sequential", 500), concurrent = flag(args, "--jobs", 2000);
  int loops = flag(args, "--clients", 8), pending = flag(args, "--pending", 5000);
  int nodes = flag(args, "--nodes", 8), cpus = flag(args, "--cpus", 16);
  bool tcp = std::find(args.begin(), args.end(), "--tcp") != args.end();
  BenchCluster c;
  c.local_socket = !tcp;
  if (Status s = start_cluster(c, nodes, cpus, false); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  auto client = bench_connect(c);
  if (!client) return hq::cerr() << "hq bench: " << client.status().message() << "\n", 1;
  if (Status s = wait_for_nodes(**client, nodes); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  std::string how = tcp ? " transport=tls" : " transport=local_socket";
  double a1 = submit_loops(c, sequential, 1);
  hq::cout() << "bench=cli" << how << " path=A1_sequential_sbatch jobs=" << sequential << " rate_per_s=" << static_cast<int>(a1) << "\n";
  double a2 = submit_loops(c, concurrent, loops);
  hq::cout() << "bench=cli" << how << " path=A2_concurrent_sbatch loops=" << loops << " jobs=" << concurrent
            << " rate_per_s=" << static_cast<int>(a2) << "\n";
  int have = sequential + concurrent;
  if (have < pending && submit_loops(c, pending - have, loops) < 0) return hq::cerr() << "hq bench: submissions failed\n", 1;
  have = std::max(have, pending);
  std::string listing = " pending=" + std::to_string(have) + " median_ms=";
  hq::cout() << "bench=cli" << how << " path=C_squeue" << listing << command_ms(c, {"squeue"}) << "\n"
            << "bench=cli" << how << " path=C_squeue_-t_R" << listing << command_ms(c, {"squeue", "-t", "R"}) << "\n"
            << "bench=cli" << how << " path=C_squeue_-j_1,2,3" << listing << command_ms(c, {"squeue", "-j", "1,2,3"}) << "\n";
  if (!run_client(c, {"scancel", "-u", current_user_name()}, "/dev/null")) return hq::cerr() << "hq bench: scancel failed\n", 1;
  if (Status s = wait_until_idle(**client, 120); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  double d = to_completed_ms(c, **client);
  hq::cout() << "bench=cli" << how << " path=D_sbatch_to_completed median_ms=" << d << "\n";
  return a1 > 0 && a2 > 0 && d > 0 ? 0 : 1;
}

}  // namespace hq::cmd
