// End-to-end helper for job steps: a batch job whose script runs srun lines, with the
// Slurm persona links first in PATH (tests/e2e/steps_test.cpp, pmi_test.cpp).
#pragma once
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "cluster_fixture.hpp"

namespace hq::test {

// Submits a batch job (script `name` in the cluster's dir) running `body` with the persona
// links first in PATH; its id.
inline std::string submit_steps(LocalCluster& c, const std::string& sbatch_args, const std::string& body,
                                const std::string& name = "steps.sh") {
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/" + name) << "#!/bin/bash\nexport PATH=" << c.dir() << "/bin:$PATH\n" << body;
  std::string id = c.submit(sbatch_args + " " + name);
  REQUIRE(id.find("ERROR") == std::string::npos);
  return id;
}

// A batch job running `body`; its output file, once the job COMPLETED (within `wait_s`).
inline std::string run_steps(LocalCluster& c, const std::string& sbatch_args, const std::string& body,
                             int wait_s = 30) {
  std::string id = submit_steps(c, sbatch_args + " -o steps-%j.out", body);
  REQUIRE(c.wait_state(id, "COMPLETED", wait_s));
  return slurp(c.dir() + "/steps-" + id + ".out");
}

// A batch job running `before`, then, once agent `agent` was killed and came back (seen by
// the controller both times), `after`; its output once it COMPLETED.
inline std::string run_steps_across_restart(LocalCluster& c, const std::string& sbatch_args,
                                            const std::string& before, const std::string& after, int agent) {
  std::string id = submit_steps(c, sbatch_args + " -o restart-%j.out",
                                before + "echo ready > ready\n" + until_file("go") + "\n" + after);
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/ready").empty(); }, 30));
  c.restart_agent_seen(agent);
  c.release("go");
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  return slurp(c.dir() + "/restart-" + id + ".out");
}

}  // namespace hq::test
