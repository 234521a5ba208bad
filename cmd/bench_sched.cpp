// `hq bench sched`: one full scheduling cycle (priority sort + backfill) over a
// synthetic snapshot: a busy cluster of N nodes and M pending jobs of mixed shapes.
// Reports cycle time and controller memory per pending job.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

#include "cmd/bench_timing.hpp"
#include "cmd/commands.hpp"
#include "cmd/process.hpp"
#include "core/acct_policy.hpp"
#include "core/hostlist.hpp"
#include "core/metrics.hpp"
#include "core/scheduler.hpp"

namespace hq::cmd {
namespace {

ClusterState busy_cluster(int32_t nodes, std::mt19937& rng) {
  std::vector<std::string> names = *expand_hostlist("n[1-" + std::to_string(nodes) + "]");
  ClusterState s = make_state(uniform_cluster_config(names, 64, 256 * 1024, "batch"));
  for (auto& [name, n] : s.nodes) n.registered = n.responding = true;
  // Every node runs one or two jobs that end at different times within a day.
  uint64_t id = 1;
  for (const auto& name : names) {
    int32_t jobs = 1 + static_cast<int32_t>(rng() % 2);
    for (int32_t k = 0; k < jobs; ++k) {
      Job j;
      j.id = JobId{id++};
      j.partition = "batch";
      j.spec.script = "#!/bin/sh\n";
      j.time_limit = 600 + static_cast<Duration>(rng() % 86400);
      j.submit_time = j.eligible_time = 0;
      apply(s, JobSubmitted{j});
      apply(s, JobStarted{j.id, 0, {{name, 32, 64 * 1024, 1}}, "batch"});
    }
  }
  return s;
}

// What a submission from a login shell carries: 40 variables, about 1.6 KB.
Shared<std::vector<std::string>> login_environment(int32_t user) {
  std::vector<std::string> env{"HOME=/home/user" + std::to_string(user), "USER=user" + std::to_string(user),
                               "SHELL=/bin/bash", "LANG=C.UTF-8",
                               "PATH=/home/user/.local/bin:/opt/tools/bin:/usr/local/bin:/usr/bin:/bin"};
  while (env.size() < 40)
    env.push_back("TOOL_SETTING_" + std::to_string(env.size()) + "=/opt/tools/share/config/value-" + std::to_string(user));
  return env;
}

void add_pending(ClusterState& s, int32_t count, std::mt19937& rng, bool accounts) {
  uint64_t id = s.next_job_id;
  std::vector<Shared<std::vector<std::string>>> environments;
  for (int32_t u = 0; u < 50; ++u) environments.push_back(login_environment(u));
  for (int32_t i = 0; i < count; ++i) {
    Job j;
    j.id = JobId{id++};
    j.partition = "batch";
    j.spec.name = "job" + std::to_string(i % 100);
    int32_t user = static_cast<int32_t>(rng() % 50);
    j.spec.user = "user" + std::to_string(user);
    j.spec.uid = 1000 + static_cast<uint32_t>(user);
    j.spec.env = environments[static_cast<size_t>(user)];  // a user's jobs share it
    j.spec.script = "#!/bin/bash\n#SBATCH -N 2\nsrun ./simulate --input data.in --steps 100000\n";
    j.spec.workdir = "/home/" + j.spec.user + "/project";
    if (accounts) j.spec.account = "acct" + std::to_string(user % 5);
    if (rng() % 2) {
      j.spec.nodes_min = 1 + static_cast<int32_t>(rng() % 16);
      j.spec.nodes_set = true;
      j.spec.cpus_per_task = 1 + static_cast<int32_t>(rng() % 32);
    } else {
      j.spec.ntasks = 1 + static_cast<int32_t>(rng() % 64);
      j.spec.ntasks_set = true;
    }
    j.spec.mem_per_cpu_mib = 1024;
    j.time_limit = 300 + static_cast<Duration>(rng() % 172800);
    j.submit_time = j.eligible_time = -static_cast<Time>(rng() % 86400);
    apply(s, JobSubmitted{std::move(j)});
  }
}

// --limits: 5 accounts under root with GrpTRES=cpu=<a fifth of the cluster's CPUs>, the 50
// users spread over them with MaxJobs=50 each: every pass counts running jobs and checks
// every considered job against its association's and account's limits.
std::shared_ptr<const AcctPolicy> bench_limits(int32_t nodes) {
  AcctModel m = default_acct_model();
  register_cluster(m, "bench", "127.0.0.1", 1);
  for (int32_t a = 0; a < 5; ++a) {
    std::string name = "acct" + std::to_string(a);
    m.accounts[name] = AcctAccount{name, name, "root", {}};
    AcctAssoc acct;
    acct.cluster = "bench", acct.account = name, acct.parent = "root";
    acct.limits.grp_tres = {{"cpu", int64_t{nodes} * 64 / 5}};
    m.add_assoc(acct);
  }
  for (int32_t u = 0; u < 50; ++u) {
    std::string user = "user" + std::to_string(u), account = "acct" + std::to_string(u % 5);
    m.users[user] = AcctUser{user, account, AdminLevel::kNone};
    AcctAssoc ua;
    ua.cluster = "bench", ua.account = account, ua.user = user, ua.parent = account;
    ua.limits.max_jobs = 50;
    m.add_assoc(ua);
  }
  return std::make_shared<const AcctPolicy>(m, "bench", AcctEnforce{true, true, false, false});
}

// --blocks B: the nodes in blocks of B (n1-nB, ...), levels of 1, 2, 4, 8 and 16 blocks.
void add_blocks(ClusterState& s, int32_t nodes, int32_t block) {
  s.topology = TopologyConfig{};
  s.topology.present = true;
  for (int32_t first = 1, b = 1; first <= nodes; first += block, ++b) {
    BlockConfig bc;
    bc.name = "b" + std::to_string(b);
    bc.nodes_expr = "n[" + std::to_string(first) + "-" + std::to_string(std::min(nodes, first + block - 1)) + "]";
    bc.nodes = *expand_hostlist(bc.nodes_expr);
    s.topology.blocks.push_back(std::move(bc));
  }
}

// --tree L: a switch tree (topology/tree) of leaves of L nodes, a spine over every 8 leaves
// and one root over the spines.
void add_tree(ClusterState& s, int32_t nodes, int32_t leaf) {
  s.topology = TopologyConfig{};
  s.topology.present = true;
  std::vector<std::string> spines;
  int32_t leaves = 0;
  for (int32_t first = 1; first <= nodes; first += leaf, ++leaves) {
    SwitchConfig sw;
    sw.name = "l" + std::to_string(leaves);
    sw.nodes_expr = "n[" + std::to_string(first) + "-" + std::to_string(std::min(nodes, first + leaf - 1)) + "]";
    sw.nodes = *expand_hostlist(sw.nodes_expr);
    s.topology.switches.push_back(std::move(sw));
  }
  for (int32_t first = 0; first < leaves; first += 8) {
    SwitchConfig sp;
    sp.name = "sp" + std::to_string(spines.size());
    sp.switches_expr = "l[" + std::to_string(first) + "-" + std::to_string(std::min(leaves, first + 8) - 1) + "]";
    sp.switches = *expand_hostlist(sp.switches_expr);
    spines.push_back(sp.name);
    s.topology.switches.push_back(std::move(sp));
  }
  SwitchConfig root;
  root.name = "root";
  root.switches_expr = "sp[0-" + std::to_string(spines.size() - 1) + "]";
  root.switches = spines;
  s.topology.switches.push_back(std::move(root));
}

void run_case(int32_t nodes, int32_t pending, int32_t depth, int32_t repeat, bool limits, int32_t blocks, int32_t tree) {
  std::mt19937 rng(42);
  ClusterState s = busy_cluster(nodes, rng);
  if (blocks > 0) add_blocks(s, nodes, blocks);
  if (tree > 0) add_tree(s, nodes, tree);
  int64_t before = rss_kib(getpid());
  add_pending(s, pending, rng, limits);
  int64_t after = rss_kib(getpid());
  SchedulerConfig cfg;
  cfg.bf_max_job_test = depth;
  Scheduler sched(cfg, limits ? bench_limits(nodes) : nullptr);
  Plan plan;
  std::vector<double> ms = timed_ms(repeat, [&] { plan = sched.schedule(s, 3600); });
  std::vector<double> quick = timed_ms(repeat, [&] { (void)sched.quick_pass(s, 3600); });
  if (limits) std::printf("with limits (MaxJobs 50 per user, GrpTRES cpu per account): ");
  if (blocks > 0) std::printf("in blocks of %d nodes: ", blocks);
  if (tree > 0) std::printf("on leaf switches of %d nodes (8 per spine, one root): ", tree);
  std::printf("%6d nodes x %7d pending: cycle %8.1f ms (median of %d; min %.1f)  tested %d, reservations %zu, "
              "starts %zu, time-map classes %d, sweeps %d reading %.2fM entries;  quick pass %.1f ms;  "
              "memory %.0f B per pending job\n",
              nodes, pending, ms[ms.size() / 2], repeat, ms.front(), plan.stats.tested, plan.reservations.size(),
              plan.starts.size(), plan.stats.classes, plan.stats.sweeps, static_cast<double>(plan.stats.swept) / 1e6,
              quick[quick.size() / 2], 1024.0 * static_cast<double>(after - before) / pending);
}

}  // namespace

int bench_sched(const Args& args) {
  auto flag = [&](const char* name, int32_t def) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == name) return std::stoi(args[i + 1]);
    return def;
  };
  keep_freed_memory();  // as the controller does
  int32_t depth = flag("--depth", 500), repeat = flag("--repeat", 5);
  int32_t nodes = flag("--nodes", 0), jobs = flag("--jobs", 0);
  bool limits = std::find(args.begin(), args.end(), "--limits") != args.end();
  int32_t blocks = flag("--blocks", 0), tree = flag("--tree", 0);
  std::printf("hq bench sched: full cycle (priority sort + backfill, bf_max_job_test %d)\n", depth);
  if (nodes > 0 && jobs > 0) {
    run_case(nodes, jobs, depth, repeat, limits, blocks, tree);
    return 0;
  }
  run_case(1000, 10000, depth, repeat, limits, blocks, tree);
  run_case(10000, 100000, depth, repeat, limits, blocks, tree);
  return 0;
}

// `hq bench metrics`: the /metrics page (core/metrics) over the same synthetic cluster: the
// whole page, the snapshot a scrape takes on the controller's loop thread (all it holds the
// loop for), the text written from it on a worker thread, and the page's size.
int bench_metrics(const Args& args) {
  auto flag = [&](const char* name, int32_t def) {
    for (size_t i = 0; i + 1 < args.size(); ++i)
      if (args[i] == name) return std::stoi(args[i + 1]);
    return def;
  };
  int32_t repeat = flag("--repeat", 5);
  keep_freed_memory();  // as the controller does
  std::vector<std::pair<int32_t, int32_t>> cases{{1000, 10000}, {10000, 100000}};
  if (flag("--nodes", 0) > 0 && flag("--jobs", 0) > 0) cases = {{flag("--nodes", 0), flag("--jobs", 0)}};
  std::printf("hq bench metrics: one /metrics page (OpenMetrics) over a busy cluster\n");
  for (const auto& [nodes, jobs] : cases) {
    std::mt19937 rng(7);
    ClusterState s = busy_cluster(nodes, rng);
    add_pending(s, jobs, rng, true);
    MetricsInput in;
    in.state = &s;
    in.now = 1000;
    size_t bytes = 0;
    auto ms = timed_ms(repeat, [&] { bytes = metrics_text(in).size(); });
    std::shared_ptr<const MetricsSnapshot> snapshot;
    auto loop_ms = timed_ms(repeat, [&] { snapshot = metrics_snapshot(in); });
    auto text_ms = timed_ms(repeat, [&] { bytes = metrics_text(*snapshot).size(); });
    std::printf("%6d nodes x %7zu jobs: page %7.1f ms = on the loop %5.1f ms (snapshot) + worker %5.1f ms (text); "
                "median of %d; %zu KiB\n", nodes, s.jobs.size(), median_ms(ms), median_ms(loop_ms), median_ms(text_ms),
                repeat, bytes / 1024);
  }
  return 0;
}

}  // namespace hq::cmd
