// End-to-end: srun --mpi=pmi2 (the PMI-1 simple wire, what MPICH speaks) across the nodes
// of a 3-agent cluster: a Python client speaking the wire itself over PMI_FD (always), and
// MPICH programs built with mpicc.mpich (skipped without it). Slurm 22.05's answers and
// lines, checked on slurm-bench, are in docs/steps.md.
#include <doctest/doctest.h>

#include "steps_fixture.hpp"

using namespace hq::test;

namespace {
const std::string kFixtures = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/mpi/";
}  // namespace

TEST_CASE("e2e: srun --mpi=pmi2 serves PMI-1 over PMI_FD on every node - puts seen after a barrier across 3 nodes, "
          "the process mapping, bad lines answered, a long line closes, abort exits with its code") {
  if (sh("command -v python3").rc != 0) HQ_SKIP("python3 is not installed");
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::string client = "python3 " + kFixtures + "pmi_client.py";
  std::string out = run_steps(
      c, "-N3 --ntasks-per-node=2",
      "srun --mpi=list\n"
      "srun --mpi=pmi2 -N3 -n3 -l " + client + " | sort\necho rc3=${PIPESTATUS[0]}\n"
      "srun --mpi=pmi2 -N3 -n6 -l " + client + " bad | sort\necho rc6=${PIPESTATUS[0]}\n"
      "srun --mpi=pmi2 -N3 -n4 -m cyclic sh -c 'echo $PMI_RANK $PMI_SIZE $PMI_FD $PMI_JOBID $SLURM_MPI_TYPE' | sort\n"
      "srun -N1 -n1 sh -c 'echo none: ${PMI_FD-unset} ${SLURM_MPI_TYPE-unset}'\n"
      "srun --mpi=pmi2 -N1 -n1 " + client + " long\necho rclong=$?\n"
      "srun --mpi=pmi2 -N3 -n3 " + client + " abort\necho rcabort=$?\n");
  INFO(out);
  CHECK(out.find("MPI plugin types are...\n\tnone\n\tpmi2\n") != std::string::npos);
  // One rank per node: every card is seen by every rank after the barrier; before, none.
  std::string cards = "cards rank 0 on e1|rank 1 on e2|rank 2 on e3\n";
  for (int r = 0; r < 3; ++r)
    CHECK(out.find(std::to_string(r) + ": rank " + std::to_string(r) + " of 3 init 0 vallen 1024 kvs 1.0 universe 3 put 0 before -1 "
                   "barrier 0 fin 0 map (vector,(0,3,1)) " + cards) != std::string::npos);
  CHECK(out.find("rc3=0\n") != std::string::npos);
  // Two ranks per node (block), each answering a bad line, an unknown command and a spawn.
  std::string six = "map (vector,(0,3,2)) cards rank 0 on e1|rank 1 on e1|rank 2 on e2|rank 3 on e2|rank 4 on e3|"
                    "rank 5 on e3 [cmd=error rc=-1 msg=bad_line] [cmd=frobnicate_result rc=-1 msg=unknown_command] "
                    "[cmd=spawn_result rc=-1 msg=not_supported]\n";
  for (int r = 0; r < 6; ++r)
    CHECK(out.find(std::to_string(r) + ": rank " + std::to_string(r) + " of 6 init 0 vallen 1024 kvs 1.1 universe 6 put 0 "
                   "before -1 barrier 0 fin 0 " + six) != std::string::npos);
  CHECK(out.find("rc6=0\n") != std::string::npos);
  CHECK(out.find("0 4 3 1.2 pmi2\n1 4 3 1.2 pmi2\n2 4 3 1.2 pmi2\n3 4 3 1.2 pmi2\n") != std::string::npos);
  CHECK(out.find("none: unset unset\n") != std::string::npos);
  CHECK(out.find("rank 0 long closed=True\nrclong=0\n") != std::string::npos);
  // abort: Slurm's lines; the step is killed; srun exits with the task's code.
  CHECK(out.find("srun: Job step aborted: Waiting up to 3 seconds for job step to finish.\n") != std::string::npos);
  CHECK(out.find("slurmstepd-e1: error: *** STEP 1.5 ON e1 CANCELLED AT ") != std::string::npos);
  CHECK(out.find("srun: error: e1: task 0: Killed\n") != std::string::npos);
  CHECK(out.find("srun: Force Terminated") == std::string::npos);
  CHECK(out.find("rcabort=7\n") != std::string::npos);
}

TEST_CASE("e2e: MPICH programs run under srun --mpi=pmi2 across 3 nodes - ranks, a ring and an allreduce - "
          "MPI_Abort(7) makes srun exit 7") {
  if (sh("command -v mpicc.mpich").rc != 0) HQ_SKIP("MPICH (mpich, libmpich-dev: mpicc.mpich) is not installed");
  LocalCluster c(3);
  REQUIRE(c.ready());
  auto built = sh("mpicc.mpich -o " + c.dir() + "/mpi_ring " + kFixtures + "mpi_ring.c");
  REQUIRE_MESSAGE(built.rc == 0, built.out);
  std::string ring = c.dir() + "/mpi_ring";
  std::string out = run_steps(c, "-N3 --ntasks-per-node=2",
                              "srun --mpi=pmi2 -N1 -n2 " + ring + " | sort\necho rc1=${PIPESTATUS[0]}\n"
                              "srun --mpi=pmi2 -N3 -n3 " + ring + " | sort\necho rc3=${PIPESTATUS[0]}\n"
                              "srun --mpi=pmi2 -N3 -n6 " + ring + " | sort\necho rc6=${PIPESTATUS[0]}\n"
                              "srun --mpi=pmi2 -N3 -n6 " + ring + " abort\necho rcabort=$?\n");
  INFO(out);
  CHECK(out.find("rank 0 of 2 on e1 got 1 sum 1\nrank 1 of 2 on e1 got 0 sum 1\nrc1=0\n") != std::string::npos);
  CHECK(out.find("rank 0 of 3 on e1 got 2 sum 3\nrank 1 of 3 on e2 got 0 sum 3\nrank 2 of 3 on e3 got 1 sum 3\n"
                 "rc3=0\n") != std::string::npos);
  CHECK(out.find("rank 0 of 6 on e1 got 5 sum 15\nrank 1 of 6 on e1 got 0 sum 15\nrank 2 of 6 on e2 got 1 sum 15\n"
                 "rank 3 of 6 on e2 got 2 sum 15\nrank 4 of 6 on e3 got 3 sum 15\nrank 5 of 6 on e3 got 4 sum 15\n"
                 "rc6=0\n") != std::string::npos);
  CHECK(out.find("application called MPI_Abort(MPI_COMM_WORLD, 7)") != std::string::npos);
  CHECK(out.find("srun: Job step aborted: Waiting up to 3 seconds for job step to finish.\n") != std::string::npos);
  CHECK(out.find("rcabort=7\n") != std::string::npos);
}
