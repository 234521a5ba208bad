// The real binary restarting on a state of 100,000 jobs (issue 14: restart to accepting
// submissions in under a second): how long until it listens and until `hq submit` is
// answered, in wall time and in the controller's CPU time.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>

#include "cluster_fixture.hpp"
#include "cmd/controller/recovery.hpp"
#include "net/convert.hpp"
#include "store/journal.hpp"

using namespace hq::test;

namespace {

// `jobs` pending jobs shaped like submissions (each its own script; 50 users, each with
// one login environment of 40 variables; idempotency keys) in one snapshot, and 1,000
// events after it: the state of a controller restarted (by kill -9) under a deep queue.
// Built in a child process: this one stays small, so that forking the clients it runs
// does not take seconds.
bool write_deep_queue(const std::string& state_dir, int jobs) {
  pid_t child = fork();
  if (child < 0) return false;
  if (child > 0) {
    int status = 0;
    return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  hq::ClusterState s;
  std::vector<hq::Shared<std::vector<std::string>>> envs;
  for (int u = 0; u < 50; ++u) {
    std::vector<std::string> env;
    for (int v = 0; v < 40; ++v)
      env.push_back("VAR" + std::to_string(v) + "=/home/user" + std::to_string(u) + "/value/of/variable/" + std::to_string(v));
    envs.emplace_back(std::move(env));
  }
  for (int i = 1; i <= jobs; ++i) {
    int u = i % 50;
    hq::Job job;
    job.id = hq::JobId{static_cast<uint64_t>(i)};
    job.partition = "debug";
    job.submit_time = job.eligible_time = 1000 + i;
    job.spec.name = "job" + std::to_string(i);
    job.spec.script = "#!/bin/bash\n#SBATCH -t 10\nsrun ./step " + std::to_string(i) + "\n" + std::string(200, '#') + "\n";
    job.spec.env = envs[static_cast<size_t>(u)];
    job.spec.user = "user" + std::to_string(u);
    job.spec.uid = job.spec.gid = static_cast<uint32_t>(2000 + u);
    job.spec.workdir = "/home/user" + std::to_string(u) + "/project";
    job.spec.submit_host = "login1";
    char key[33];
    snprintf(key, sizeof key, "%016x%016x", i * 2654435761u, i);
    job.submit_key = key;
    hq::apply(s, hq::JobSubmitted{std::move(job)});
  }
  auto j = hq::store::Journal::open(hq::cmd::state_db_path(state_dir));
  if (!j || !(*j)->load()) _exit(1);
  std::atomic<bool> ok{true};
  auto check = [&ok](const hq::Status& st) { ok = ok && st.is_ok(); };
  (*j)->start([](std::function<void()> fn) { fn(); });
  (*j)->snapshot(hq::net::encode_snapshot(s), check);
  for (int i = 1; i <= 1000; ++i)
    (*j)->append(hq::net::encode_event(hq::JobHoldChanged{hq::JobId{static_cast<uint64_t>(i)}, 5000, hq::HoldKind::kUser}),
                 check);
  (*j)->stop();
  _exit(ok ? 0 : 1);
}

double cpu_seconds(pid_t pid) {
  auto stat = hq::cmd::proc_stat(pid);  // [11] utime, [12] stime, in clock ticks
  if (stat.size() < 13) return -1;
  return static_cast<double>(std::stoll(std::string(stat[11])) + std::stoll(std::string(stat[12]))) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

}  // namespace

TEST_CASE("restart: how long a controller on 100,000 jobs takes to accept a submission") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  c.kill9_agent(1);  // the controller alone: no agent reconnects meanwhile
  c.kill9_controller();
  std::string state = c.dir() + "/state";
  for (const char* file : {"/state.db", "/state.db-wal", "/state.db-shm"}) std::filesystem::remove(state + file);
  REQUIRE(write_deep_queue(state, 100000));

  auto start = std::chrono::steady_clock::now();
  auto since_start = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  c.spawn_controller();
  REQUIRE(wait_until([&] {
    int fd = raw_connect(c.port());
    if (fd >= 0) close(fd);
    return fd >= 0;
  }, 60));
  double listening = since_start(), listening_cpu = cpu_seconds(c.controller_pid());
  std::string id = c.submit("--hold --wrap true");
  double accepted = since_start(), accepted_cpu = cpu_seconds(c.controller_pid());
  CHECK(id == "100001");
  CHECK(c.state("100000") == "PENDING");

  MESSAGE("100,000 jobs: listening after " << listening << " s (controller CPU " << listening_cpu
          << " s), submission " << id << " accepted after " << accepted << " s (controller CPU " << accepted_cpu << " s)");
  // On the 2-core development VM: 0.7-1.0 s of the controller's CPU and 0.9-1.3 s of wall
  // time, a tenth of it the first scheduling pass over the 100,000 pending jobs, which the
  // submission waits for (2.6-2.9 s and 3.2-3.4 s before issue 14's work). The bound
  // catches a regression, not a busy machine.
  CHECK(accepted_cpu < 2.0);
  // An agent again, stopped with the cluster: it removes the node's cgroup directories
  // that the one killed above could not.
  c.respawn_agent(1);
  CHECK(wait_until([&] { return c.responding_nodes() == 1; }, 20));
}
