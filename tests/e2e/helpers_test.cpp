// End to end: the operator programs of node agents: a failing health check drains the
// node with its output as the reason (and a passing one lifts that drain); a failing
// prolog requeues the job and drains the node; a failing epilog drains the node.
#include <doctest/doctest.h>

#include <fstream>
#include <sys/stat.h>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

std::string write_script(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), 0755);
  return path;
}

std::string node(const LocalCluster& c, const std::string& name) { return c.hq("show node " + name).out; }

}  // namespace

TEST_CASE("e2e: a failing health check drains the node with its output, a passing one lifts it") {
  hq::test::TempDir scripts;
  std::string sick = scripts.path() + "/sick";
  ScopedEnv env;
  env.set("HQ_HEALTH_CHECK", write_script(scripts.path() + "/health",
                                          "[ -e " + sick + " ] && { echo 'disk /scratch full'; exit 1; }\nexit 0\n"));
  env.set("HQ_HEALTH_INTERVAL", "1");
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::ofstream(sick) << "x";
  CHECK(wait_until([&] { return node(c, "e1").find("State=DRAINED") != std::string::npos; }, 10));
  CHECK(node(c, "e1").find("Reason=health check failed: exit 1: disk /scratch full") != std::string::npos);
  std::string waits = c.submit("--wrap true");
  REQUIRE(c.wait_considered(waits, 10));
  CHECK(c.state(waits) == "PENDING");
  std::remove(sick.c_str());
  CHECK(wait_until([&] { return node(c, "e1").find("State=IDLE") != std::string::npos; }, 10));
  CHECK(c.wait_state(waits, "COMPLETED", 15));
}

TEST_CASE("e2e: a failing prolog requeues the job and drains the node - a failing epilog drains it") {
  hq::test::TempDir scripts;
  ScopedEnv env;
  env.set("HQ_PROLOG", write_script(scripts.path() + "/prolog",
                                    "[ \"$SLURMD_NODENAME\" = e1 ] && { echo 'no /scratch'; exit 1; }\nexit 0\n"));
  env.set("HQ_EPILOG", write_script(scripts.path() + "/epilog",
                                    "[ \"$SLURM_JOB_NAME\" = bad-epilog ] && { echo 'cleanup left files'; exit 2; }\n"
                                    "echo $SLURM_JOB_ID >> " + scripts.path() + "/epilog.log\nexit 0\n"));
  LocalCluster c(2);
  REQUIRE(c.ready());
  std::string pinned = c.submit("-w e1 --wrap true");
  CHECK(wait_until([&] { return node(c, "e1").find("State=DRAINED") != std::string::npos; }, 10));
  CHECK(node(c, "e1").find("Reason=prolog failed: exit 1: no /scratch") != std::string::npos);
  CHECK(c.state(pinned) == "PENDING");
  CHECK(c.hq("show job " + pinned).out.find("Restarts=1") != std::string::npos);
  std::string elsewhere = c.submit("--wrap true");
  CHECK(c.wait_state(elsewhere, "COMPLETED", 15));
  CHECK(wait_until([&] { return slurp(scripts.path() + "/epilog.log").find(elsewhere) != std::string::npos; }, 10));

  std::string bad = c.submit("-J bad-epilog --wrap true");
  CHECK(c.wait_state(bad, "COMPLETED", 15));  // the job itself succeeded
  CHECK(wait_until([&] { return node(c, "e2").find("State=DRAINED") != std::string::npos; }, 10));
  CHECK(node(c, "e2").find("Reason=epilog failed: exit 2: cleanup left files") != std::string::npos);
}

TEST_CASE("e2e: agents take [agents] programs and settings from the controller's config (configless)") {
  hq::test::TempDir scripts;
  std::string log = scripts.path() + "/served.log";
  std::string prolog = write_script(scripts.path() + "/prolog", "echo prolog $SLURM_JOB_ID >> " + log + "\n");
  std::string health = write_script(scripts.path() + "/health", "echo health >> " + log + "\n");
  LocalCluster c(1, 2, 20,
                 "[agents]\nprolog = \"" + prolog + "\"\nhealth_check = \"" + health + "\"\nhealth_interval = \"1s\"\n");
  REQUIRE(c.ready());
  std::string id = c.submit("--wrap true");
  REQUIRE(c.wait_state(id, "COMPLETED", 15));
  CHECK(slurp(log).find("prolog " + id + "\n") != std::string::npos);
  CHECK(wait_until([&] { return slurp(log).find("health\nhealth\n") != std::string::npos; }, 10));  // every second
  // The agent runs its cached copies, and caches the config it was served.
  CHECK(slurp(c.dir() + "/e1/config/prolog") == slurp(prolog));
  CHECK(slurp(c.dir() + "/e1/config/config.toml").find("[agents]") != std::string::npos);
  CHECK(c.hq("config check " + c.dir() + "/config.toml").rc == 0);
}
