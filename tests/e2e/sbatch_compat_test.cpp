// End to end: a batch script written for Slurm, with lines hq has no use for yet (mail,
// QOS, time-min, ...), is submitted through the sbatch persona and runs; sbatch tells once
// on stderr what does not act; a refused option fails the submission with its reason.
#include <doctest/doctest.h>

#include <fstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: a Slurm script with mail, QOS and other unused lines runs - sbatch warns once each - --container is refused") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/real.sh") << "#!/bin/bash\n"
                                         "#SBATCH --job-name=real --output=real-%j.out\n"
                                         "#SBATCH --mail-type=END,FAIL\n"
                                         "#SBATCH --mail-user=someone@example.org\n"
                                         "#SBATCH --qos=normal --time-min=5 --get-user-env --comment=\"a b\"\n"
                                         "#SBATCH --hint=nomultithread --exclusive=user --nice\n"
                                         "echo ran\n";
  auto r = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch --parsable real.sh");
  INFO(r.out);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("sbatch: warning: --mail-type: no mail is sent yet\n") != std::string::npos);
  CHECK(r.out.find("--mail-user: no mail is sent yet") != std::string::npos);
  CHECK(r.out.find("--qos: ") != std::string::npos);
  CHECK(r.out.find("--get-user-env") == std::string::npos);  // means nothing here: silent
  std::string id = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  id.erase(id.find_last_not_of("\n") + 1);
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  CHECK(slurp(c.dir() + "/real-" + id + ".out") == "ran\n");
  auto refused = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch --container=/b --wrap true");
  CHECK(refused.rc == 1);
  CHECK(refused.out.find("sbatch: error: --container: OCI containers are not supported by hq") != std::string::npos);
}
