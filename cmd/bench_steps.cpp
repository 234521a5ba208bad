// `hq bench steps`: job steps as a job script makes them, one `srun` process per step,
// timed by the script itself (bash's $EPOCHREALTIME, no extra processes): per-step latency
// of `srun -N<nodes> -n<nodes> true` (median, 90th and 99th percentile, mean) and sequential steps per
// second, in a batch job on a throwaway cluster of N agents on this host. Prints key=value
// lines with the targets (docs/steps.md).
#include <algorithm>
#include <chrono>
#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cmd/bench_cluster.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/job.hpp"
#include "core/std_streams.hpp"
#include "net/clock.hpp"

namespace hq::cmd {
namespace {

std::string steps_script(const std::string& bin, int nodes, int steps) {
  std::string srun = "srun -N" + std::to_string(nodes) + " -n" + std::to_string(nodes) + " true || exit 1";
  std::string loop = "for ((i = 0; i < " + std::to_string(steps) + "; i++)); do ";
  return "#!/bin/bash\nexport PATH=" + bin + ":$PATH\n" + srun + "\n" +  // warm: links to the other agents
         loop + "s=$EPOCHREALTIME; " + srun + "; e=$EPOCHREALTIME; echo \"$s $e\"; done > latency.txt\n" +
         "s=$EPOCHREALTIME\n" + loop + srun + "; done\ne=$EPOCHREALTIME\necho \"$s $e\" > rate.txt\n";
}

pb::Envelope steps_job(const std::string& dir, const std::string& script, int nodes) {
  pb::Envelope env;
  auto* s = env.mutable_submit()->mutable_spec();
  s->set_name("bench-steps");
  s->set_script(script);
  s->set_workdir(dir);
  s->set_user(current_user_name());
  s->set_uid(getuid());
  s->set_gid(getgid());
  s->set_nodes_min(nodes);
  s->set_nodes_max(nodes);
  s->set_ntasks(nodes);
  s->set_cpus_per_task(1);
  s->set_time_limit(kTimeUnset);
  s->add_env("PATH=/usr/bin:/bin");
  return env;
}

// Pairs of start and end times, one per line.
std::vector<std::pair<double, double>> read_times(const std::string& path) {
  std::vector<std::pair<double, double>> out;
  std::ifstream in(path);
  std::string a, b;
  while (in >> a >> b) out.emplace_back(std::strtod(a.c_str(), nullptr), std::strtod(b.c_str(), nullptr));
  return out;
}

int one_run(int nodes, int steps) {
  BenchCluster c;
  if (Status s = start_cluster(c, nodes, 2, false); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  auto client = bench_connect(c);
  if (!client) return hq::cerr() << "hq bench: " << client.status().message() << "\n", 1;
  if (Status s = wait_for_nodes(**client, nodes); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  std::filesystem::create_directories(c.dir + "/bin");
  std::filesystem::create_symlink(self_exe(), c.dir + "/bin/srun");
  auto submitted = (*client)->call(steps_job(c.dir, steps_script(c.dir + "/bin", nodes, steps), nodes));
  if (!submitted || submitted->has_error())
    return hq::cerr() << "hq bench: submit failed\n", 1;
  if (Status s = wait_until_idle(**client, 600); !s) return hq::cerr() << "hq bench: " << s.message() << "\n", 1;
  auto lat = read_times(c.dir + "/latency.txt");
  auto rate = read_times(c.dir + "/rate.txt");
  if (lat.size() != static_cast<size_t>(steps) || rate.size() != 1) {
    hq::cerr() << "hq bench: the steps job failed; its output:\n" << read_small_file(c.dir + "/slurm-1.out");
    return 1;
  }
  std::vector<double> ms;
  for (auto [s, e] : lat) ms.push_back((e - s) * 1000);
  std::sort(ms.begin(), ms.end());
  double per_s = steps / (rate[0].second - rate[0].first);
  double mean = 0;
  for (double m : ms) mean += m / static_cast<double>(ms.size());
  hq::cout() << "bench=steps inside=batch_job nodes=" << nodes << " steps=" << steps
            << " median_ms=" << ms[ms.size() / 2] << " p90_ms=" << ms[ms.size() * 9 / 10]
            << " p99_ms=" << ms[ms.size() * 99 / 100] << " mean_ms=" << mean
            << " target_ms=" << (nodes == 1 ? 5 : 15) << " sequential_steps_per_s=" << static_cast<int>(per_s)
            << " target_per_s=500\n";
  return 0;
}

}  // namespace

int bench_steps(const Args& args) {
  std::setlocale(LC_NUMERIC, "C");
  int steps = flag(args, "--steps", 200);
  std::vector<int> node_counts;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "--nodes") node_counts.push_back(std::max(1, std::atoi(args[i + 1].c_str())));
  if (node_counts.empty()) node_counts = {1, 8};
  int rc = 0;
  for (int n : node_counts) rc |= one_run(n, steps);
  return rc;
}

}  // namespace hq::cmd
