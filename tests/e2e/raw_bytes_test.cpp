// End to end: bytes that are not UTF-8 in a script, a job name, an environment value and a
// step's arguments travel unchanged - through the controller, its journal (across a
// restart), the node and srun - and come back out of squeue and scontrol as they went in;
// JSON shows them as U+FFFD. A script with DOS line breaks is refused with Slurm's words.
#include <doctest/doctest.h>

#include <fstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: bytes are bytes - a script, a name, an environment value and srun's arguments - across a restart") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string script = "#!/bin/sh\n"
                       "printf 'caf\\351|%s|' \"$ODD\"\n"
                       "srun printf '%s' \"$(printf 'x\\375y')\"\n";
  std::ofstream(c.dir() + "/odd.sh") << script;
  auto r = sh("cd " + c.dir() + " && PATH=" + c.dir() + "/bin:$PATH ODD=$(printf '\\376') sbatch --parsable -J $(printf 'n\\377') -o odd.out odd.sh");
  INFO(r.out);
  REQUIRE(r.rc == 0);
  std::string id = r.out.substr(0, r.out.find('\n'));
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  CHECK(slurp(c.dir() + "/odd.out") == "caf\351|\376|x\375y");
  CHECK(sh(c.dir() + "/bin/squeue -h -t all -o %j -j " + id).out == "n\377\n");
  hq::cmd::stop_process(c.controller_pid(), 5000);  // the journal gives the same bytes back
  c.start_controller();
  CHECK(sh(c.dir() + "/bin/squeue -h -t all -o %j -j " + id).out == "n\377\n");
  CHECK(sh(c.dir() + "/bin/scontrol show job " + id).out.find("JobName=n\377\n") != std::string::npos);
  auto json = sh(c.dir() + "/bin/squeue --json -t all -j " + id);
  CHECK(json.rc == 0);
  CHECK(json.out.find("\"name\": \"n\357\277\275\"") != std::string::npos);  // U+FFFD in JSON's text
}

TEST_CASE("e2e: sbatch refuses a script with DOS line breaks, as Slurm does - --wrap takes them") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/dos.sh") << "#!/bin/sh\r\necho hi\r\n";
  auto r = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch dos.sh");
  CHECK(r.rc == 1);
  CHECK(r.out == "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
                 "sbatch: error: instead of expected UNIX line breaks (\\n).\n");
  CHECK(sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch --wrap \"$(printf 'true\\r\\n')\"").rc == 0);
}
