// core/metrics: the /metrics page has Slinky slurm-exporter's names and labels with the
// values the state gives (jobs by state and scope, nodes by state, per node and partition),
// the scheduler's counters, and is well-formed OpenMetrics (every sample's family declared
// once before it, label values escaped, "# EOF" last).
#include <doctest/doctest.h>

#include <memory>

#include <map>
#include <set>
#include <sstream>

#include "builders.hpp"
#include "core/metrics.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;
using hq::test::start;

namespace {

// sample line (name and labels) -> value
std::map<std::string, std::string> samples(const std::string& page) {
  std::map<std::string, std::string> out;
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.rfind(' ');
    out[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return out;
}

ClusterState busy_cluster() {
  auto s = cluster("n[1-3]", 4, 1000);
  apply(s, JobBuilder(1).nodes(1).cpus(4));
  start(s, 1, {"n1"}, 4, 0, 500);
  apply(s, JobBuilder(2).nodes(2).cpus(1));                   // pending, wants 2 nodes
  apply(s, JobBuilder(3).nodes(5).cpus(1).held());           // pending and held
  s.nodes.at("n3").drain = true;
  s.nodes.at("n2").responding = false;
  return s;
}

}  // namespace

TEST_CASE("metrics: jobs and nodes by state with Slinky's names, per partition, user and account") {
  ClusterState s = busy_cluster();
  for (auto& [id, j] : s.jobs) j.spec.user = "alice", j.spec.uid = 1000, j.spec.account = "physics";
  MetricsInput in;
  in.state = &s;
  in.now = 100;
  auto m = samples(metrics_text(in));
  CHECK(m["slurm_jobs_total"] == "3");
  CHECK(m["slurm_jobs_pending_total"] == "2");
  CHECK(m["slurm_jobs_running_total"] == "1");
  CHECK(m["slurm_jobs_hold_total"] == "1");
  CHECK(m["slurm_jobs_cpus_alloc_total"] == "4");
  CHECK(m["slurm_jobs_memory_alloc_bytes"] == "500");  // MiB, as Slinky's
  CHECK(m["slurm_partition_jobs_total{partition=\"batch\"}"] == "3");
  CHECK(m["slurm_partition_jobs_pending_maxnodecount_total{partition=\"batch\"}"] == "5");
  CHECK(m["slurm_user_jobs_running_total{userid=\"1000\",username=\"alice\"}"] == "1");
  CHECK(m["slurm_account_jobs_pending_total{account=\"physics\"}"] == "2");
  CHECK(m["slurm_nodes_total"] == "3");
  CHECK(m["slurm_nodes_allocated_total"] == "1");
  CHECK(m["slurm_nodes_idle_total"] == "2");
  CHECK(m["slurm_nodes_drain_total"] == "1");
  CHECK(m["slurm_nodes_notresponding_total"] == "1");
  CHECK(m["slurm_node_cpus_alloc_total{node=\"n1\"}"] == "4");
  CHECK(m["slurm_node_cpus_idle_total{node=\"n2\"}"] == "4");
  CHECK(m["slurm_node_memory_alloc_bytes{node=\"n1\"}"] == "500");
  CHECK(m["slurm_node_memory_free_bytes{node=\"n1\"}"] == "500");
  CHECK(m["slurm_partition_nodes_cpus_total{partition=\"batch\"}"] == "12");
  CHECK(m["slurm_partition_nodes_allocated_total{partition=\"batch\"}"] == "1");
  CHECK(m["hq_cpus_idle_total"] == "8");
  CHECK(m["slurm_scheduler_queue_total"] == "2");
}

TEST_CASE("metrics: the scheduler's counters, journal commits and requests") {
  ClusterState s = cluster("n1", 2);
  MetricsInput in;
  in.state = &s;
  in.now = 160;
  in.sched.started_at = 100;
  for (int64_t us : {500, 2500, 500, 500}) in.sched.passes.add(us, 10);
  in.sched.backfill.add(1000, 10);
  in.sched.backfill.add(2000, 20);
  in.sched.jobs_submitted = 7;
  in.rpcs["submit"] = {7, 0.25};
  in.journal_commits = {9, 0.5};
  auto m = samples(metrics_text(in));
  CHECK(m["slurm_scheduler_cycle_total"] == "4");
  CHECK(m["slurm_scheduler_cycle_mean_seconds"] == "1000");
  CHECK(m["slurm_scheduler_cycle_max_seconds"] == "2500");
  CHECK(m["slurm_scheduler_cycle_perminute_total"] == "4");
  CHECK(m["slurm_bfscheduler_cycle_mean_seconds"] == "1500");
  CHECK(m["slurm_bfscheduler_lastdepth_total"] == "20");
  CHECK(m["slurm_scheduler_cycle_depth_total"] == "40");
  CHECK(m["slurm_scheduler_jobs_submitted_total"] == "7");
  CHECK(m["hq_requests_total{type=\"submit\"}"] == "7");
  CHECK(m["hq_request_seconds_total{type=\"submit\"}"] == "0.25");
  CHECK(m["hq_journal_commits_total"] == "9");
}

TEST_CASE("metrics: well-formed OpenMetrics - families declared once before their samples, escapes, # EOF") {
  ClusterState s = busy_cluster();
  s.jobs.begin()->second.spec.account = "we\"ird\\acct\nx";
  MetricsInput in;
  in.state = &s;
  std::string page = metrics_text(in);
  REQUIRE(page.size() > 6);
  CHECK(page.substr(page.size() - 6) == "# EOF\n");
  CHECK(page.find("account=\"we\\\"ird\\\\acct\\nx\"") != std::string::npos);
  std::set<std::string> declared;
  std::map<std::string, std::string> types;
  std::istringstream lines(page);
  std::string line;
  int samples_seen = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::string rest = line.substr(7);
      std::string name = rest.substr(0, rest.find(' '));
      CHECK_MESSAGE(declared.insert(name).second, "declared twice: " << name);
      types[name] = rest.substr(rest.find(' ') + 1);
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    ++samples_seen;
    std::string name = line.substr(0, line.find_first_of("{ "));
    std::string family = name;
    if (!types.count(family) && name.size() > 6 && name.substr(name.size() - 6) == "_total") family = name.substr(0, name.size() - 6);
    INFO(line);
    REQUIRE(types.count(family) == 1);
    if (family != name) CHECK(types[family] == "counter");  // a counter's sample ends in _total
  }
  CHECK(samples_seen > 150);
}

TEST_CASE("metrics: a snapshot holds copies - its page is the same after the state it came from is gone") {
  auto s = std::make_unique<ClusterState>(busy_cluster());
  MetricsInput in;
  in.state = s.get();
  in.now = 1000;
  std::string page = metrics_text(in);
  std::shared_ptr<const MetricsSnapshot> snapshot = metrics_snapshot(in);
  s->jobs.clear();  // what a worker thread must not see: the loop goes on changing the state
  s->nodes.clear();
  s.reset();
  CHECK(metrics_text(*snapshot) == page);
  CHECK(page.find("slurm_node_cpus_total{node=") != std::string::npos);
}
