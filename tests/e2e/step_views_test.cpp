// End-to-end: job step views. The step manager reports each step's start and end to the
// controller (squeue -s, scontrol show step, hq show job's Step= lines, with Slurm 22.05's
// layouts), and a node answers hq node list-jobs|list-steps|list-pids from its own agent.
#include <doctest/doctest.h>

#include <fstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: job steps in squeue -s, scontrol show step, hq show job and the node's own list-pids") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/steps.sh") << "#!/bin/bash\nexport PATH=" << c.dir() << "/bin:$PATH\n"
                                       << "srun -n1 --overlap true\n"
                                       << "srun -n1 --overlap sh -c 'exit 3'\n"
                                       << "srun -N2 -n2 --overlap -J viewed sh -c '" << until_file("go") << "'\n";
  std::string id = c.submit("-N2 -n2 -o steps.out steps.sh");
  REQUIRE(id.find("ERROR") == std::string::npos);
  std::string bin = "cd " + c.dir() + " && " + c.dir() + "/bin/";
  std::string listing;
  REQUIRE(wait_until([&] { return (listing = sh(bin + "squeue -s").out).find(" " + id + ".2 ") != std::string::npos; }, 30));
  INFO(listing);
  CHECK(listing.find("         STEPID     NAME PARTITION     USER      TIME NODELIST\n") == 0);
  CHECK(line_with(listing, id + ".2 ").find("   viewed ") != std::string::npos);
  CHECK(line_with(listing, id + ".2 ").find(" e[1-2]") != std::string::npos);
  CHECK(line_with(listing, id + ".batch ").find("    batch ") != std::string::npos);
  CHECK(listing.find(id + ".0 ") == std::string::npos);  // ended: not listed
  for (const std::string& form : {"-s " + id + ".2", "-s" + id + ".2", "--steps=" + id + ".2"}) {
    auto one = sh(bin + "squeue -h " + form).out;  // that step only, however the value is given
    INFO(form << "\n" << one);
    CHECK(one.find(id + ".2 ") != std::string::npos);
    CHECK(one.find(id + ".batch ") == std::string::npos);
  }

  auto step = sh(bin + "scontrol show step " + id + ".2");
  INFO(step.out);
  CHECK(step.rc == 0);
  CHECK(step.out.find("StepId=" + id + ".2 UserId=") == 0);
  CHECK(step.out.find("   State=RUNNING Partition=") != std::string::npos);
  CHECK(step.out.find(" NodeList=e[1-2]\n   Nodes=2 CPUs=2 Tasks=2 Name=viewed Network=(null)\n") != std::string::npos);
  CHECK(step.out.find("   CPUFreqReq=Default Dist=Cyclic\n   SrunHost:Pid=") != std::string::npos);
  auto missing = sh(bin + "scontrol show step " + id + ".7");
  CHECK(missing.rc == 1);
  CHECK(missing.out.find("Job step " + id + ".7 not found") != std::string::npos);
  CHECK(sh(bin + "scontrol show step 999999.0").out.find("Invalid job id specified") != std::string::npos);

  // The first node knows, without the controller: the batch script and the step's task 0.
  std::string sock = " --socket " + c.dir() + "/e1/run/step.sock";
  auto pids = c.hq("node list-pids" + sock);
  INFO(pids.out);
  CHECK(pids.rc == 0);
  CHECK(pids.out.find("PID      JOBID    STEPID   LOCALID GLOBALID\n") == 0);
  CHECK(line_with(pids.out, " batch ").find(" " + id + " ") != std::string::npos);
  CHECK(line_with(pids.out, " 2        0       0").find(" " + id + " ") != std::string::npos);
  auto on_e2 = c.hq("node list-pids " + id + ".2 --socket " + c.dir() + "/e2/run/step.sock");
  INFO(on_e2.out);
  CHECK(on_e2.out.find(" 2        0       1\n") != std::string::npos);  // task 1 runs on e2, its only task
  CHECK(on_e2.out.find(" batch ") == std::string::npos);
  CHECK(line_with(c.hq("node list-jobs" + sock).out, id + " ").find(" 2     steps.sh") != std::string::npos);

  c.release("go");
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  std::string shown;
  REQUIRE(wait_until([&] { return (shown = c.hq("show job " + id).out).find("Step=" + id + ".2 ") != std::string::npos; }, 10));
  INFO(shown);
  CHECK(shown.find("   Step=" + id + ".0 Name=true State=COMPLETED ExitCode=0:0 NodeList=e1 Tasks=1 ") != std::string::npos);
  CHECK(shown.find("   Step=" + id + ".1 Name=sh State=FAILED ExitCode=3:0 NodeList=e1 Tasks=1 ") != std::string::npos);
  CHECK(shown.find("   Step=" + id + ".2 Name=viewed State=COMPLETED ExitCode=0:0 NodeList=e[1-2] Tasks=2 ") !=
        std::string::npos);
  CHECK(sh(bin + "squeue -s -h").out.find(id + ".") == std::string::npos);
}
