// `hq sim --trace FILE.swf[.gz] --config cluster.toml [--policy fifo|easy|backfill]`:
// replays a workload trace through the real scheduler (core/sim.cpp) and prints
// utilization, waits, bounded slowdown, makespan and scheduler CPU time; with a
// [topology], the blocks jobs span and the waits of large jobs.
#include <CLI/CLI.hpp>
#include "cmd/cli_parse.hpp"
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "cmd/commands.hpp"
#include "cmd/config_toml.hpp"
#include "core/sim.hpp"
#include "core/std_streams.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

// .gz traces go through gzip(1), present on every Debian system.
Result<std::string> read_trace(const std::string& path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0) {
    std::ifstream probe(path);
    if (!probe) return not_found("cannot read trace " + path);
    std::string quoted = "'";
    for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    quoted += "'";
    FILE* p = ::popen(("gzip -dc -- " + quoted).c_str(), "r");
    if (!p) return io_error("cannot run gzip for " + path);
    std::string out;
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    if (::pclose(p) != 0) return io_error("gzip could not decompress " + path);
    return out;
  }
  std::ifstream in(path);
  if (!in) return not_found("cannot read trace " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void print_table(const SimResult& r, const std::string& policy, double wall) {
  std::printf("%-24s %s\n", "policy", policy.c_str());
  std::printf("%-24s %lld (%lld skipped)\n", "jobs", static_cast<long long>(r.jobs), static_cast<long long>(r.skipped));
  std::printf("%-24s %.1f %%\n", "utilization", r.utilization * 100);
  std::printf("%-24s %.0f s\n", "mean wait", r.mean_wait);
  std::printf("%-24s %.0f s\n", "max wait", r.max_wait);
  std::printf("%-24s %.2f\n", "mean bounded slowdown", r.mean_bounded_slowdown);
  std::printf("%-24s %lld s\n", "makespan", static_cast<long long>(r.makespan));
  std::printf("%-24s %.2f s (%lld passes)\n", "scheduler CPU time", r.sched_cpu_seconds, static_cast<long long>(r.passes));
  std::printf("%-24s %.2f s\n", "wall time", wall);
  if (!r.blocks) return;
  std::printf("%-24s %.2f (large jobs: %.2f)\n", "mean blocks per job", r.mean_blocks, r.mean_blocks_large);
  std::printf("%-24s %lld\n", "large jobs", static_cast<long long>(r.large_jobs));
  std::printf("%-24s %.0f s\n", "large jobs' mean wait", r.large_mean_wait);
  std::printf("%-24s %.1f %%\n", "large started within 1 h", r.large_within_hour * 100);
  std::printf("%-24s %.1f\n", "mean fragmentation", r.mean_fragmentation);
  std::printf("%-24s %lld\n", "held by the oracle", static_cast<long long>(r.held));
}

void print_json(const SimResult& r, const std::string& policy, double wall) {
  std::printf("{\"policy\":\"%s\",\"jobs\":%lld,\"skipped\":%lld,\"utilization\":%.6f,\"mean_wait\":%.3f,"
              "\"max_wait\":%.0f,\"mean_bounded_slowdown\":%.4f,\"makespan\":%lld,\"scheduler_cpu_seconds\":%.3f,"
              "\"passes\":%lld,\"wall_seconds\":%.3f",
              policy.c_str(), static_cast<long long>(r.jobs), static_cast<long long>(r.skipped), r.utilization,
              r.mean_wait, r.max_wait, r.mean_bounded_slowdown, static_cast<long long>(r.makespan), r.sched_cpu_seconds,
              static_cast<long long>(r.passes), wall);
  if (r.blocks)
    std::printf(",\"mean_blocks\":%.4f,\"mean_blocks_large\":%.4f,\"large_jobs\":%lld,\"large_mean_wait\":%.3f,"
                "\"large_within_hour\":%.6f,\"mean_fragmentation\":%.3f,\"held\":%lld",
                r.mean_blocks, r.mean_blocks_large, static_cast<long long>(r.large_jobs), r.large_mean_wait,
                r.large_within_hour, r.mean_fragmentation, static_cast<long long>(r.held));
  std::printf("}\n");
}

}  // namespace

int run_sim(const Args& args) {
  CLI::App app{"hq sim: replay a Standard Workload Format trace through the scheduler"};
  std::string trace_path, config_path, policy, dump, topo_delay;
  bool json = false, whole = false, no_topology = false;
  int32_t large_nodes = 2;
  // Required, checked after parsing: an unknown option is named before a missing one.
  app.add_option("--trace", trace_path, "SWF trace (.swf or .swf.gz) (required)");
  app.add_option("--config", config_path, "cluster config (TOML: nodes, partitions, [scheduler]) (required)");
  app.add_option("--policy", policy, "fifo, easy or backfill (default: the config's [scheduler] policy)");
  app.add_option("--dump-starts", dump, "write job_id,submit,start,end,nodes per job to this CSV");
  app.add_flag("--whole-nodes", whole, "jobs take ceil(procs / node CPUs) whole nodes (automatic for nodes/ traces)");
  app.add_flag("--no-topology", no_topology, "place jobs as if the cluster were flat (blocks spanned are still measured)");
  app.add_option("--topo-delay", topo_delay, "[scheduler] bf_topopt_delay: how long a job may wait for a less fragmenting place (\"30m\", or seconds; 0: off)");
  app.add_option("--large-nodes", large_nodes, "jobs of this many nodes or more count as large (default 2)")->check(CLI::Range(1, 1000000));
  app.add_flag("--json", json, "one JSON object");
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try { app.parse(rest); } catch (const CLI::ParseError& e) { return cli_parse_failure(app, e, "hq sim"); }
  if (trace_path.empty() || config_path.empty())
    return hq::cerr() << "hq sim: error: --trace and --config are required\nTry \"hq sim --help\" for more information\n", 1;
  auto cfg = load_config_file(config_path);
  if (!cfg) return hq::cerr() << "hq sim: error: " << cfg.status().message() << "\n", 1;
  if (!policy.empty() && !parse_sched_policy(policy, cfg->scheduler.policy))
    return hq::cerr() << "hq sim: error: --policy must be fifo, easy or backfill\n", 1;
  if (!topo_delay.empty()) {
    bool seconds = topo_delay.find_first_not_of("0123456789") == std::string::npos && topo_delay.size() < 10;
    auto d = seconds ? Result<Duration>(std::stoll(topo_delay)) : parse_duration(topo_delay);
    if (!d || *d < 0) return hq::cerr() << "hq sim: error: --topo-delay: not a duration: " << topo_delay << "\n", 1;
    cfg->scheduler.bf_topopt_delay = *d;
  }
  auto text = read_trace(trace_path);
  if (!text) return hq::cerr() << "hq sim: error: " << text.status().message() << "\n", 1;
  SwfTrace trace = parse_swf(*text);
  if (trace.bad_lines) hq::cerr() << "hq sim: warning: " << trace.bad_lines << " malformed lines skipped\n";
  SimOptions opts;
  opts.whole_nodes = whole || trace.whole_nodes;
  opts.record_starts = !dump.empty();
  opts.topology_off = no_topology;
  opts.large_nodes = large_nodes;
  timespec w0{}, w1{};
  clock_gettime(CLOCK_MONOTONIC, &w0);
  auto r = simulate(trace, *cfg, opts, cpu_seconds);
  clock_gettime(CLOCK_MONOTONIC, &w1);
  if (!r) return hq::cerr() << "hq sim: error: " << r.status().message() << "\n", 1;
  double wall = static_cast<double>(w1.tv_sec - w0.tv_sec) + static_cast<double>(w1.tv_nsec - w0.tv_nsec) * 1e-9;
  std::string name(sched_policy_name(cfg->scheduler.policy));
  if (json) print_json(*r, name, wall);
  else print_table(*r, name, wall);
  if (!dump.empty()) {
    std::ofstream out(dump);
    if (!out) return hq::cerr() << "hq sim: error: cannot write " << dump << "\n", 1;
    out << "job_id,submit,start,end,nodes\n";
    for (const auto& s : r->starts) out << s.id << "," << s.submit << "," << s.start << "," << s.end << "," << s.nodes << "\n";
  }
  return 0;
}

}  // namespace hq::cmd
