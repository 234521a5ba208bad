// End to end: configless join. A node agent that has only the cluster secret (no CA file,
// no config) fetches the CA from the controller, checks it with the secret, caches it,
// and joins as a dynamic node; a restart uses the cached CA.
#include <doctest/doctest.h>

#include <csignal>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: an agent with only the secret fetches the CA, checks it, caches it and joins") {
  LocalCluster c(1, 2, 20, "[[partition]]\nname = \"all\"\nnodes = \"ALL\"\n");
  REQUIRE(c.ready());
  std::string ca_file = getenv("HQ_CA_FILE");
  unsetenv("HQ_CA_FILE");
  pid_t agent = c.spawn_extra_agent("bare1");
  setenv("HQ_CA_FILE", ca_file.c_str(), 1);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 2; }, 20));
  std::string log = slurp(c.dir() + "/bare1.log");
  CHECK(log.find("fetched the cluster CA") != std::string::npos);
  CHECK(slurp(c.dir() + "/bare1/ca.pem") == slurp(ca_file));
  std::string job = c.submit("-p all -w bare1 -o bare-%j.out --wrap 'echo $SLURMD_NODENAME'");
  REQUIRE(c.wait_state(job, "COMPLETED", 15));
  CHECK(slurp(c.dir() + "/bare-" + job + ".out") == "bare1\n");

  // Restarted, it uses the cached CA: no second fetch.
  kill(agent, SIGTERM);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 1; }, 20));
  unsetenv("HQ_CA_FILE");
  c.spawn_extra_agent("bare1");
  setenv("HQ_CA_FILE", ca_file.c_str(), 1);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 2; }, 20));
  std::string again = slurp(c.dir() + "/bare1.log");  // both runs log here
  CHECK(again.find("fetched the cluster CA") == again.rfind("fetched the cluster CA"));
}
