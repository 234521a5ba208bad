// End to end: nodes that join without being in the config (dynamic nodes, partitions by
// feature{} and ALL), and drain / resume / delete by operators, drains surviving a
// controller restart.
#include <doctest/doctest.h>

#include <csignal>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

// Partition "gpu" takes nodes by feature, "all" takes every node; e1 is in the config.
const char* const kPartitions =
    "[[partition]]\nname = \"gpu\"\nnodes = \"feature{gpu}\"\n"
    "[[partition]]\nname = \"all\"\nnodes = \"ALL\"\n"
    "[[partition]]\nname = \"rack\"\nnodes = \"block{b1}\"\n";

}  // namespace

TEST_CASE("e2e: an agent the config does not declare joins, and its features decide its partitions") {
  LocalCluster c(1, 2, 20, kPartitions);
  REQUIRE(c.ready());
  pid_t dyn = c.spawn_extra_agent("dyn7", {"--feature", "gpu,fast", "--block", "b1", "--switch", "s3"});
  REQUIRE(wait_until([&] { return c.responding_nodes() == 2; }, 20));
  auto node = c.hq("show node dyn7").out;
  CHECK(node.find("Partitions=gpu,all,rack") != std::string::npos);
  CHECK(node.find("Block=b1 Switch=s3") != std::string::npos);
  CHECK(node.find("AvailableFeatures=gpu,fast") != std::string::npos);
  CHECK(node.find("State=IDLE") != std::string::npos);
  CHECK(c.hq("show node e1").out.find("Partitions=all,debug") != std::string::npos);
  auto sinfo = c.hq("nodes").out;
  CHECK(sinfo.find("gpu ") != std::string::npos);
  CHECK(sinfo.find("dyn7") != std::string::npos);

  std::string job = c.submit("-p gpu -o dyn-%j.out --wrap 'echo $SLURMD_NODENAME'");
  REQUIRE(c.wait_state(job, "COMPLETED", 15));
  CHECK(slurp(c.dir() + "/dyn-" + job + ".out") == "dyn7\n");

  // Restarted with other flags: it leaves the partitions that took it by what it lost.
  kill(dyn, SIGTERM);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 1; }, 20));
  dyn = c.spawn_extra_agent("dyn7", {"--feature", "fast", "--block", "b2"});
  REQUIRE(wait_until([&] { return c.responding_nodes() == 2; }, 20));
  node = c.hq("show node dyn7").out;
  CHECK(node.find("Partitions=all\n") != std::string::npos);
  CHECK(node.find("AvailableFeatures=fast\n") != std::string::npos);
  CHECK(node.find("Block=b2") != std::string::npos);
  CHECK(c.hq("submit -p gpu --wrap true").rc != 0);  // no node for it any more

  // A node in the config cannot be deleted; a dynamic one can, once it runs nothing.
  CHECK(c.hq("control delete node e1").rc != 0);
  kill(dyn, SIGTERM);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 1; }, 20));
  auto deleted = c.hq("control delete node dyn7");
  CHECK(deleted.rc == 0);
  CHECK(c.hq("show node dyn7").out.find("NodeName=dyn7") == std::string::npos);
  CHECK(c.hq("nodes").out.find("dyn7") == std::string::npos);
}

TEST_CASE("e2e: drain lets running jobs finish and starts nothing new, survives a restart, resume undoes it") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string running = c.submit("--wrap '" + until_file("go") + "'");
  REQUIRE(c.wait_state(running, "RUNNING", 10));
  CHECK(c.hq("control drain e1").rc != 0);  // a reason is required
  REQUIRE(c.hq("control drain e1 --reason 'disk check'").rc == 0);
  CHECK(c.hq("show node e1").out.find("State=DRAINING") != std::string::npos);
  CHECK(c.hq("show node e1").out.find("Reason=disk check") != std::string::npos);
  std::string waiting = c.submit("--wrap true");
  REQUIRE(c.wait_considered(waiting, 10));  // one CPU is free, but the node starts nothing new
  CHECK(c.state(waiting) == "PENDING");
  c.release("go");
  REQUIRE(c.wait_state(running, "COMPLETED", 15));
  CHECK(wait_until([&] { return c.hq("show node e1").out.find("State=DRAINED") != std::string::npos; }, 5));
  CHECK(c.hq("nodes").out.find("drain") != std::string::npos);
  CHECK(c.state(waiting) == "PENDING");

  c.kill9_controller();
  c.start_controller();
  REQUIRE(wait_until([&] { return c.responding_nodes() == 1; }, 20));
  CHECK(c.hq("show node e1").out.find("State=DRAINED") != std::string::npos);
  CHECK(c.hq("show node e1").out.find("Reason=disk check") != std::string::npos);
  CHECK(c.state(waiting) == "PENDING");

  REQUIRE(c.hq("control resume e1").rc == 0);
  CHECK(c.wait_state(waiting, "COMPLETED", 15));
  CHECK(c.hq("show node e1").out.find("Reason=(null)") != std::string::npos);
  // The scontrol spelling does the same.
  REQUIRE(c.hq("scontrol update NodeName=e1 State=DRAIN Reason=maint").rc == 0);
  CHECK(c.hq("show node e1").out.find("State=DRAINED") != std::string::npos);
  REQUIRE(c.hq("scontrol update NodeName=e1 State=RESUME").rc == 0);
  CHECK(c.hq("show node e1").out.find("State=IDLE") != std::string::npos);
}

TEST_CASE("e2e: only root may drain a node") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  CHECK(as_user(65534, shared, "control drain e1 --reason mine").out.find("permission denied") != std::string::npos);
  CHECK(c.hq("show node e1").out.find("State=IDLE") != std::string::npos);
}

TEST_CASE("e2e: with return_to_service = 0 a node that fell silent stays DOWN until resumed") {
  LocalCluster c(1, 2, 3, "return_to_service = 0\n");  // node_timeout 3 s
  REQUIRE(c.ready());
  kill(c.agent_pid(1), SIGSTOP);
  CHECK(wait_until([&] { return c.hq("show node e1").out.find("State=DOWN") != std::string::npos; }, 10));
  kill(c.agent_pid(1), SIGCONT);
  // Heard again: "responding" turns true with the heartbeat that would have returned the
  // node to service (return_to_service = 1), so the state below is that decision, not a guess.
  REQUIRE(wait_until([&] { return c.responding_nodes() == 1; }, 10));
  CHECK(c.hq("show node e1").out.find("State=DOWN Weight=1") != std::string::npos);
  CHECK(c.hq("show node e1").out.find("Reason=Not responding") != std::string::npos);
  REQUIRE(c.hq("control resume e1").rc == 0);
  CHECK(c.hq("show node e1").out.find("State=IDLE") != std::string::npos);
  std::string job = c.submit("--wrap true");
  CHECK(c.wait_state(job, "COMPLETED", 10));
}

TEST_CASE("e2e: scontrol update PartitionName= - DOWN holds jobs back, MaxTime shows, the change outlives a restart") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string scontrol = c.dir() + "/bin/scontrol ";
  REQUIRE(sh(scontrol + "update PartitionName=debug State=DOWN MaxTime=30:00").rc == 0);
  auto id = c.submit("-t 10 --wrap true");
  REQUIRE(c.wait_considered(id, 10));
  CHECK(c.reason(id) == "PartitionDown");
  CHECK(sh(c.dir() + "/bin/sinfo -h -o '%P %a %l'").out == "debug* down 30:00\n");
  hq::cmd::stop_process(c.controller_pid(), 5000);
  c.start_controller();
  CHECK(sh(c.dir() + "/bin/sinfo -h -o '%P %a %l'").out == "debug* down 30:00\n");  // journaled
  CHECK(c.state(id) == "PENDING");
  CHECK(sh(scontrol + "update PartitionName=debug State=UP").rc == 0);
  CHECK(c.wait_state(id, "COMPLETED", 20));
  auto bad = sh(scontrol + "update PartitionName=debug Nodes=e9");
  CHECK(bad.rc == 1);
  CHECK(bad.out == "scontrol: error: Update of this parameter is not supported: Nodes=e9\n");
  CHECK(sh(scontrol + "update PartitionName=nope State=UP").out == "scontrol: error: Invalid partition name specified\n");
}

TEST_CASE("e2e: scontrol update NodeName= State=DOWN kills the node's jobs (requeued) and keeps it down until RESUME") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  std::string job = c.submit("-w e1 -c 2 --wrap 'sleep 3017'");
  REQUIRE(c.wait_state(job, "RUNNING", 20));
  auto refused = c.hq("scontrol update NodeName=e1 State=DOWN");
  CHECK(refused.rc == 1);
  CHECK(refused.out.find("You must specify a reason when DOWNING or DRAINING a node") != std::string::npos);
  REQUIRE(c.hq("scontrol update NodeName=e1 State=DOWN Reason=psu").rc == 0);
  CHECK(wait_until([&] { return c.hq("show node e1").out.find("State=DOWN") != std::string::npos; }, 10));
  CHECK(c.hq("show node e1").out.find("Reason=psu") != std::string::npos);
  // Its job was requeued (-w e1 keeps it waiting for the node), and nothing of it runs there.
  CHECK(wait_until([&] { return c.hq("show job " + job).out.find("Restarts=1") != std::string::npos; }, 10));
  CHECK(c.hq("queue -h -o %T -j " + job).out == "PENDING\n");
  CHECK(wait_until([&] { return sh("pgrep -f '[s]leep 3017' >/dev/null").rc != 0; }, 15));
  // Its agent is alive and heartbeats: the node stays DOWN until an operator resumes it.
  std::string other = c.submit("-w e1 --wrap true");
  REQUIRE(c.wait_considered(other, 20));
  CHECK(c.hq("show node e1").out.find("State=DOWN") != std::string::npos);
  CHECK(c.hq("queue -h -o %T -j " + other).out == "PENDING\n");
  REQUIRE(c.hq("scontrol update NodeName=e1 State=RESUME").rc == 0);
  CHECK(c.wait_state(job, "RUNNING", 20));  // first in line: it takes the node again
  REQUIRE(c.hq("cancel " + job).rc == 0);
  CHECK(c.wait_state(other, "COMPLETED", 20));
}

TEST_CASE("e2e: scontrol update NodeName= Features= Weight= - constraints and placement follow, the change outlives a restart") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string scontrol = c.dir() + "/bin/scontrol ";
  std::string sbatch = "cd " + c.dir() + " && " + c.dir() + "/bin/sbatch ";
  CHECK(sh(sbatch + "-C big --wrap true").out.find("Invalid feature specification") != std::string::npos);  // no node has it yet
  REQUIRE(sh(scontrol + "update NodeName=e2 Features=big,fast Weight=5").rc == 0);
  auto bigs = c.submit("-C big --wrap true");
  auto shown = sh(scontrol + "show node e2").out;
  CHECK(shown.find("AvailableFeatures=big,fast") != std::string::npos);
  CHECK(shown.find("Weight=5") != std::string::npos);
  CHECK(c.wait_state(bigs, "COMPLETED", 10));
  CHECK(c.hq("show job " + bigs).out.find("NodeList=e2") != std::string::npos);
  auto light = c.submit("--wrap true");  // e1 (weight 1) is allocated first
  CHECK(c.wait_state(light, "COMPLETED", 10));
  CHECK(c.hq("show job " + light).out.find("NodeList=e1") != std::string::npos);
  // What hq has no counterpart for is refused, naming why; nothing changes.
  auto power = sh(scontrol + "update NodeName=e1 State=POWER_DOWN");
  CHECK(power.rc == 1);
  CHECK(power.out.find("no power saving") != std::string::npos);
  CHECK(sh(scontrol + "update NodeName=e1 Weight=-3").rc == 1);
  CHECK(c.hq("show node e1").out.find("Weight=1 ") != std::string::npos);
  c.kill9_controller();  // the update was journaled: a restart (and the agent's re-registration) keeps it
  c.start_controller();
  REQUIRE(wait_until([&] { return c.responding_nodes() == 2; }, 20));
  shown = sh(scontrol + "show node e2").out;
  CHECK(shown.find("AvailableFeatures=big,fast") != std::string::npos);
  CHECK(shown.find("Weight=5") != std::string::npos);
}
