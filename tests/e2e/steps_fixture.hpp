// End-to-end helper for job steps: a batch job whose script runs srun lines, with the
// Slurm persona links first in PATH (tests/e2e/steps_test.cpp, pmi_test.cpp).
#pragma once
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "cluster_fixture.hpp"

namespace hq::test {

// A batch job running `body` with the persona links first in PATH; its output file, once
// the job COMPLETED (within `wait_s`).
inline std::string run_steps(LocalCluster& c, const std::string& sbatch_args, const std::string& body,
                             int wait_s = 30) {
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/steps.sh") << "#!/bin/bash\nexport PATH=" << c.dir() << "/bin:$PATH\n" << body;
  std::string id = c.submit(sbatch_args + " -o steps-%j.out steps.sh");
  REQUIRE(id.find("ERROR") == std::string::npos);
  REQUIRE(c.wait_state(id, "COMPLETED", wait_s));
  return slurp(c.dir() + "/steps-" + id + ".out");
}

}  // namespace hq::test
