// End to end: the controller's HTTPS listener ([controller] http_port) as curl (and so
// Prometheus) meets it: the cluster CA's certificate, the probes without a token, /metrics
// refused without a token or with a forged one and served with one from `hq token` (and
// `scontrol token`), with Slinky's metric names and the cluster's values.
#include <doctest/doctest.h>

#include <fstream>

#include "http_fixture.hpp"

using namespace hq::test;

namespace {

// curl for the controller's HTTPS port: the cluster CA, and its certificate's name.
std::string curl_for(const LocalCluster& c) {
  std::string addr = http_addr(c);
  std::string port = addr.substr(addr.find(':') + 1);
  return "curl -sS --max-time 10 --cacert " + c.dir() + "/keys/ca.pem --resolve hq-controller:" + port +
         ":127.0.0.1 https://hq-controller:" + port;
}

}  // namespace

TEST_CASE("e2e: HTTPS on the controller - probes, /metrics only with a token from hq token, Slinky's names") {
  LocalCluster c(2, 1, 20, "http_port = 0\n");
  REQUIRE(c.ready());
  REQUIRE(!http_addr(c).empty());
  std::string curl = curl_for(c);
  CHECK(sh(curl + "/healthz").out == "ok\n");
  CHECK(sh(curl + "/readyz").out == "ok\n");
  // The certificate names 127.0.0.1 too: curl verifies it against the CA without --resolve.
  std::string addr = http_addr(c);
  CHECK(sh("curl -sS --max-time 10 --cacert " + c.dir() + "/keys/ca.pem https://" + addr + "/healthz").out == "ok\n");
  auto anonymous = sh(curl + "/metrics -w ' %{http_code}'");
  CHECK(anonymous.out.find("Authentication required") != std::string::npos);
  CHECK(trimmed(anonymous.out).substr(trimmed(anonymous.out).size() - 3) == "401");
  auto forged = sh(curl + "/metrics -H 'X-SLURM-USER-TOKEN: AAAAAAAAAAAAAAAAAAAA' -w ' %{http_code}'");
  CHECK(trimmed(forged.out).substr(trimmed(forged.out).size() - 3) == "401");
  auto missing = sh(curl + "/nope -w ' %{http_code}'");
  CHECK(missing.out.find("\"errors\":[{") != std::string::npos);
  CHECK(trimmed(missing.out).substr(trimmed(missing.out).size() - 3) == "404");

  auto token = c.hq("token --lifespan 600");
  REQUIRE(token.rc == 0);
  REQUIRE(token.out.rfind("SLURM_JWT=", 0) == 0);
  std::string jwt = trimmed(token.out.substr(10));
  CHECK(c.hq("token --lifespan 0").rc != 0);  // 1 s to a day
  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string job = c.submit("-N1 hold.sh");
  REQUIRE(c.wait_state(job, "RUNNING", 30));
  auto metrics = sh(curl + "/metrics -H 'X-SLURM-USER-TOKEN: " + jwt + "'");
  CHECK(metrics.out.find("slurm_nodes_total 2\n") != std::string::npos);
  CHECK(metrics.out.find("slurm_nodes_allocated_total 1\n") != std::string::npos);
  CHECK(metrics.out.find("slurm_jobs_running_total 1\n") != std::string::npos);
  CHECK(metrics.out.find("slurm_node_cpus_total{node=\"e1\"} 1\n") != std::string::npos);
  CHECK(metrics.out.find("slurm_partition_jobs_running_total{partition=\"debug\"} 1\n") != std::string::npos);
  CHECK(metrics.out.find("hq_requests_total{type=\"submit\"} 1\n") != std::string::npos);
  CHECK(metrics.out.size() > 6);
  CHECK(metrics.out.substr(metrics.out.size() - 6) == "# EOF\n");
  auto bearer = sh(curl + "/metrics -H 'Authorization: Bearer " + jwt + "' -o /dev/null -w '%{http_code}'");
  CHECK(bearer.out == "200");

  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto scontrol = sh(c.dir() + "/bin/scontrol token lifespan=60");
  CHECK(scontrol.rc == 0);
  CHECK(scontrol.out.rfind("SLURM_JWT=", 0) == 0);
  c.hq("cancel " + job);
}

TEST_CASE("e2e: a node agent's own /metrics - its CPUs, its jobs with their cgroups' use, only with a token") {
  ScopedEnv env("HQ_METRICS_PORT", "0");  // agents take HQ_* settings from their environment
  LocalCluster c(1, 2, 20);
  REQUIRE(c.ready());
  std::string addr_file = c.dir() + "/e1/metrics.addr";
  REQUIRE(wait_until([&] { return !trimmed(slurp(addr_file)).empty(); }, 10));
  std::string url = "curl -sS --max-time 10 http://" + trimmed(slurp(addr_file));
  CHECK(sh(url + "/healthz").out == "ok\n");
  CHECK(sh(url + "/metrics -o /dev/null -w '%{http_code}'").out == "401");
  CHECK(sh(url + "/metrics -H 'X-SLURM-USER-TOKEN: AAAAAAAAAAAAAAAAAAAA' -o /dev/null -w '%{http_code}'").out == "401");
  std::string jwt = trimmed(c.hq("token").out.substr(10));
  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string job = c.submit("-N1 hold.sh");
  REQUIRE(c.wait_state(job, "RUNNING", 30));
  std::string page;
  REQUIRE(wait_until([&] {  // the agent has the job once it launched it
    page = sh(url + "/metrics -H 'X-SLURM-USER-TOKEN: " + jwt + "'").out;
    return page.find("hq_node_jobs{node=\"e1\"} 1\n") != std::string::npos;
  }, 10));
  CHECK(page.find("hq_node_controller_connected{node=\"e1\"} 1\n") != std::string::npos);
  CHECK(page.find("hq_node_cpus{node=\"e1\"} ") != std::string::npos);
  CHECK(page.find("hq_node_cpus_alloc{node=\"e1\"} 1\n") != std::string::npos);
  CHECK(page.find("hq_job_cpus{node=\"e1\",job=\"" + job + "\",user=\"root\"} 1\n") != std::string::npos);
  CHECK(page.find("hq_job_cgroup_oom_kills_total{node=\"e1\",job=\"" + job + "\",user=\"root\"} 0\n") != std::string::npos);
  CHECK(page.size() > 6);
  CHECK(page.substr(page.size() - 6) == "# EOF\n");
  c.hq("cancel " + job);
}
