// End-to-end: srun inside a batch job (job steps on the job's batch node), through the
// srun persona link, compared with what Slurm 22.05 prints and returns for the same
// command lines (tests/fixtures/slurm/steps-inside-allocation.golden).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>
#include <fstream>

#include "steps_fixture.hpp"

using namespace hq::test;

namespace {

// One host plays three nodes: TCP over loopback between the ranks; root may run MPI here.
// Python writes each line whole (PYTHONUNBUFFERED makes print write the newline apart, and
// the ranks' lines could then interleave: step output is relayed as it comes, not by lines).
const char kMpiEnv[] =
    "unset PYTHONUNBUFFERED\nexport OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp "
    "OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo\n";

// Open MPI by its own names: MPICH (mpich, for srun --mpi=pmi2) also provides mpirun.
#define HQ_SKIP_UNLESS_MPI()                                                                  \
  do {                                                                                        \
    if (sh("command -v mpirun.openmpi && /usr/bin/python3 -c 'import mpi4py'").rc != 0)       \
      HQ_SKIP("Open MPI (openmpi-bin) or mpi4py (python3-mpi4py) is not installed");         \
  } while (0)

std::string ring_py() { return std::string(HQ_SOURCE_DIR) + "/tests/fixtures/mpi/ring.py"; }

}  // namespace

TEST_CASE("e2e: srun in a batch job runs tasks with the step environment, labels, stdin to all, Slurm's exit codes") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string out = run_steps(c, "-n2",
                              "srun -l bash -c 'echo rank $SLURM_PROCID step $SLURM_STEP_ID local $SLURM_LOCALID "
                              "tpn $SLURM_STEP_TASKS_PER_NODE node $SLURMD_NODENAME' | sort\necho rc=${PIPESTATUS[0]}\n"
                              "srun -n2 sh -c 'exit $SLURM_PROCID'\necho rc=$?\n"
                              "srun nosuchcmd\necho rc=$?\n"
                              "printf 'a\\nb\\n' | srun -n2 -l cat | sort\n"
                              "srun -n3 true\necho rc=$?\n"
                              "srun -n1 sh -c 'kill -9 $$'\necho rc=$?\n"
                              "srun -n1 -- echo '\"quoted\"' -n --label\n"
                              "echo batch-step-id=${SLURM_STEP_ID:-unset}\n"
                              "srun -K -n2 sh -c 'if [ $SLURM_PROCID = 1 ]; then exit 3; fi; exec sleep 300'\n"
                              "echo rc=$?\n");
  INFO(out);
  CHECK(out.find("0: rank 0 step 0 local 0 tpn 2 node e1\n1: rank 1 step 0 local 1 tpn 2 node e1\nrc=0\n") !=
        std::string::npos);
  CHECK(out.find("srun: error: e1: task 1: Exited with exit code 1\nrc=1\n") != std::string::npos);
  CHECK(out.find("execve(): nosuchcmd: No such file or directory") != std::string::npos);
  CHECK(out.find("srun: error: e1: tasks 0-1: Exited with exit code 2\nrc=2\n") != std::string::npos);
  CHECK(out.find("0: a\n0: b\n1: a\n1: b\n") != std::string::npos);
  CHECK(out.find("srun: error: Unable to create step for job ") != std::string::npos);
  CHECK(out.find(": More processors requested than permitted\nrc=1\n") != std::string::npos);
  CHECK(out.find("srun: error: e1: task 0: Killed\n") != std::string::npos);
  CHECK(out.find("rc=137\n") != std::string::npos);
  CHECK(out.find("\"quoted\" -n --label\n") != std::string::npos);  // argv verbatim, options after the command are its own
  CHECK(out.find("batch-step-id=unset\n") != std::string::npos);    // Open MPI needs it absent in the batch script
  // -K, as Slurm 22.05: the first failure terminates the others (SIGTERM), which srun reports.
  CHECK(out.find("srun: error: e1: task 1: Exited with exit code 3\nsrun: launch/slurm: _step_signal: Terminating StepId=") !=
        std::string::npos);
  CHECK(out.find(" ON e1 CANCELLED AT ") != std::string::npos);
  CHECK(out.find("srun: error: e1: task 0: Terminated\nsrun: Force Terminated StepId=") != std::string::npos);
  CHECK(out.rfind("rc=143\n") == out.size() - 7);
}

TEST_CASE("e2e: a second step waits for the first's CPUs - --overlap shares them - hq run outside a job gets an allocation") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string out = run_steps(c, "-n2",
                              "srun -n2 sh -c 'echo x > first.$SLURM_PROCID; " + until_file("go") + "' &\n"
                              "while [ ! -s first.1 ]; do sleep 0.05; done\n"
                              "srun --overlap -n1 echo overlapped\n"
                              "srun -n1 sh -c 'echo second' 2> second.err &\n"
                              "while ! grep -q retrying second.err 2>/dev/null; do sleep 0.05; done\n"
                              "echo go > go\nwait\ncat second.err\n");
  INFO(out);
  CHECK(out.find("overlapped\n") != std::string::npos);
  CHECK(out.find("second\n") != std::string::npos);
  CHECK(out.find("step creation temporarily disabled, retrying (Requested nodes are busy)") != std::string::npos);
  CHECK(out.find("srun: Step created for StepId=") != std::string::npos);
  auto outside = sh("env -u SLURM_JOB_ID -u SLURM_JOBID " + std::string(HQ_BINARY) + " run echo outside");
  CHECK(outside.rc == 0);
  CHECK(outside.out == "outside\n");
  CHECK(sh(std::string(HQ_BINARY) + " run --help").rc == 0);
}

TEST_CASE("e2e: srun killed with SIGKILL leaves no task behind - a task of an ended job dies with it") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/steps.sh") << "#!/bin/bash\nexport PATH=" << c.dir() << "/bin:$PATH\n"
                                        << "srun -n1 sh -c 'echo $$ > task.pid; exec sleep 300' &\n"
                                        << "echo $! > srun.pid\nwait\n" << until_file("go") << "\n";
  std::string id = c.submit("-n1 -o steps-%j.out steps.sh");
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/task.pid").empty() && !slurp(c.dir() + "/srun.pid").empty(); }, 10));
  pid_t task = std::stoi(slurp(c.dir() + "/task.pid"));
  pid_t srun = std::stoi(slurp(c.dir() + "/srun.pid"));
  REQUIRE(hq::cmd::process_alive(task));
  kill(srun, SIGKILL);
  CHECK(wait_until([&] { return !hq::cmd::process_alive(task); }, 10));
  c.release("go");
  CHECK(c.wait_state(id, "COMPLETED", 20));
}

TEST_CASE("e2e: srun spans the job's nodes - block and cyclic layouts, each node's environment, argv byte for byte, "
          "stdin, exit codes and -K across nodes") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::string out = run_steps(
      c, "-N3 --ntasks-per-node=2",
      "srun -N3 -n3 cat < /dev/null\necho catrc=$?\n"  // the first step dials the other agents: its EOF waits for that
      "srun -l -N3 -n3 bash -c 'echo node $SLURMD_NODENAME id $SLURM_NODEID local $SLURM_LOCALID "
      "of $SLURM_STEP_NUM_TASKS on \"$SLURM_STEP_NODELIST\" tpn $SLURM_STEP_TASKS_PER_NODE' | sort\n"
      "srun -l -n4 sh -c 'echo block $SLURM_PROCID@$SLURMD_NODENAME' | sort\n"
      "srun -l -n4 -m cyclic sh -c 'echo cyclic $SLURM_PROCID@$SLURMD_NODENAME' | sort\n"
      "srun -N3 -n3 -l /bin/echo -mca ess '\"slurm\"' 'a;b' '[x]' '(y)' | sort\n"
      "printf 'in\\n' | srun -N3 -n3 -l cat | sort\n"
      "srun -N3 -n3 sh -c 'exit $SLURM_PROCID'\necho rc=$?\n"
      "srun -N3 -n3 nosuchcmd 2>&1 | sort\n"
      "srun -N3 -n4 -o 'task-%t-%N.out' sh -c 'echo out $SLURM_PROCID; echo err $SLURM_PROCID >&2'\n"
      "srun -N3 -n3 -l -o all-%s.out sh -c 'echo all $SLURM_PROCID' && sort all-*.out\n"
      "srun -N3 -n3 -o 1 sh -c 'echo only $SLURM_PROCID'\n"
      "echo from-file > in.txt\nsrun -N3 -n3 -l -i in.txt cat | sort\n"
      "srun -N3 -n3 -i none sh -c 'cat; echo eof $SLURM_PROCID' | sort\n"
      "srun -W 1 -N3 -n3 sh -c 'if [ $SLURM_PROCID = 0 ]; then exit 0; fi; exec sleep 300'\necho wrc=$?\n"
      "srun -K -N3 -n3 sh -c 'if [ $SLURM_PROCID = 2 ]; then exit 3; fi; exec sleep 300'\necho rc=$?\n");
  INFO(out);
  CHECK(out.find("0: node e1 id 0 local 0 of 3 on e[1-3] tpn 1(x3)\n"
                 "1: node e2 id 1 local 0 of 3 on e[1-3] tpn 1(x3)\n"
                 "2: node e3 id 2 local 0 of 3 on e[1-3] tpn 1(x3)\n") != std::string::npos);
  CHECK(out.find("catrc=0\n") != std::string::npos);
  CHECK(out.find("0: block 0@e1\n1: block 1@e1\n2: block 2@e2\n3: block 3@e3\n") != std::string::npos);
  CHECK(out.find("0: cyclic 0@e1\n1: cyclic 1@e2\n2: cyclic 2@e3\n3: cyclic 3@e1\n") != std::string::npos);
  CHECK(out.find("0: -mca ess \"slurm\" a;b [x] (y)\n1: -mca ess \"slurm\" a;b [x] (y)\n"
                 "2: -mca ess \"slurm\" a;b [x] (y)\n") != std::string::npos);
  CHECK(out.find("0: in\n1: in\n2: in\n") != std::string::npos);
  CHECK(out.find("srun: error: e2: task 1: Exited with exit code 1\n") != std::string::npos);
  CHECK(out.find("srun: error: e3: task 2: Exited with exit code 2\n") != std::string::npos);
  CHECK(out.find("rc=2\n") != std::string::npos);
  for (const char* node : {"e1", "e2", "e3"})
    CHECK(out.find(std::string("slurmstepd-") + node + ": error: execve(): nosuchcmd: No such file or directory") !=
          std::string::npos);
  // -o with %t and %N: a file per task, stderr with it; without: one file, labels kept;
  // -o N: only that task's output; -i FILE and -i none reach every task.
  for (const char* t : {"0-e1", "1-e1", "2-e2", "3-e3"}) {
    std::string task(t, 1);
    std::string file = c.dir() + "/task-" + t + ".out";
    CHECK(slurp(file) == "out " + task + "\nerr " + task + "\n");
  }
  CHECK(out.find("0: all 0\n1: all 1\n2: all 2\n") != std::string::npos);
  CHECK(out.find("only 1\n") != std::string::npos);
  CHECK(out.find("only 0\n") == std::string::npos);
  CHECK(out.find("0: from-file\n1: from-file\n2: from-file\n") != std::string::npos);
  CHECK(out.find("eof 0\neof 1\neof 2\n") != std::string::npos);
  // -W 1: a second after the first task ended, the others are killed.
  CHECK(out.find("srun: First task exited 1s ago\nsrun: StepId=1.") != std::string::npos);
  CHECK(out.find(" tasks 1-2: running\nsrun: StepId=1.") != std::string::npos);
  CHECK(out.find(" task 0: exited\nsrun: launch/slurm: _step_signal: Terminating StepId=1.") != std::string::npos);
  CHECK(out.find("srun: Job step aborted: Waiting up to 3 seconds for job step to finish.\n") != std::string::npos);
  CHECK(out.find("srun: error: e2: task 1: Killed\n") != std::string::npos);
  CHECK(out.find("srun: error: e3: task 2: Killed\n") != std::string::npos);
  CHECK(out.find("wrc=137\n") != std::string::npos);
  CHECK(out.find("srun: error: e3: task 2: Exited with exit code 3\n") != std::string::npos);
  CHECK(out.find("srun: error: e2: task 1: Terminated\n") != std::string::npos);
  CHECK(out.rfind("rc=143\n") == out.size() - 7);
}

TEST_CASE("e2e: Open MPI's mpirun in a 3-node batch job starts its daemons through srun and runs an mpi4py ring") {
  HQ_SKIP_UNLESS_MPI();
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::string ring = ring_py();
  std::string out = run_steps(c, "-N3 --ntasks-per-node=1",
                              kMpiEnv + std::string("echo nodes $SLURM_JOB_NUM_NODES tasks $SLURM_NTASKS\n"
                              "mpirun.openmpi /usr/bin/python3 ") + ring + " | sort\necho rc=${PIPESTATUS[0]}\n");
  INFO(out);
  CHECK(out.find("nodes 3 tasks 3\n") != std::string::npos);
  CHECK(out.find("rank 0 of 3 on e1 got 2 sum 3\nrank 1 of 3 on e2 got 0 sum 3\nrank 2 of 3 on e3 got 1 sum 3\nrc=0\n") !=
        std::string::npos);
}

TEST_CASE("e2e: srun --mpi=pmix runs an mpi4py ring on one node - MPI_Abort(7) makes srun exit 7 - --mpi=none has no PMIx") {
  HQ_SKIP_UNLESS_MPI();
  LocalCluster c(1, 3);
  REQUIRE(c.ready());
  std::string ring = "/usr/bin/python3 " + ring_py();
  std::string out = run_steps(c, "-n3",
                              kMpiEnv + std::string("srun --mpi=pmix -N1 -n3 ") + ring + " | sort\necho rc=${PIPESTATUS[0]}\n"
                              "srun --mpi=pmix -n1 env | grep -E '^(PMIX_NAMESPACE|PMIX_RANK|OMPI_MCA_orte_precondition)' | sort\n"
                              "srun --mpi=none -n1 env | grep -c '^PMIX_'\n"
                              "RING_ABORT=1 srun --mpi=pmix -n3 " + ring + " >/dev/null 2>abort.err\necho rc=$?\ncat abort.err\n",
                              60);
  INFO(out);
  CHECK(out.find("rank 0 of 3 on e1 got 2 sum 3\nrank 1 of 3 on e1 got 0 sum 3\nrank 2 of 3 on e1 got 1 sum 3\nrc=0\n") !=
        std::string::npos);
  CHECK(out.find("OMPI_MCA_orte_precondition_transports=0000000100000001-0000000100000001\n"
                 "PMIX_NAMESPACE=slurm.pmix.1.1\nPMIX_RANK=0\n0\n") != std::string::npos);
  CHECK(out.find("rc=7\n") != std::string::npos);
  CHECK(!std::filesystem::exists(c.dir() + "/e1/run/pmix/1.0"));  // the step's directory went with it
}

TEST_CASE("e2e: srun --mpi=pmix runs an mpi4py ring across 3 nodes - 1 and 2 ranks a node - an abort or a lost rank on another node ends the step") {
  HQ_SKIP_UNLESS_MPI();
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::string ring = "/usr/bin/python3 " + ring_py();
  std::string out = run_steps(c, "-N3 -n6",
                              kMpiEnv + std::string("srun --mpi=pmix -N3 -n3 ") + ring + " | sort\necho rc=${PIPESTATUS[0]}\n"
                              "srun --mpi=pmix -N3 -n6 " + ring + " | sort\necho rc=${PIPESTATUS[0]}\n"
                              "RING_ABORT=2 srun --mpi=pmix -N3 -n3 " + ring + " >/dev/null 2>abort.err\necho rc=$?\n"
                              "RING_DIE=1 srun --mpi=pmix -N3 -n3 " + ring + " 2>&1 | grep '^srun: error'\n",
                              90);
  INFO(out);
  INFO(slurp(c.dir() + "/abort.err"));
  CHECK(out.find("rank 0 of 3 on e1 got 2 sum 3\nrank 1 of 3 on e2 got 0 sum 3\nrank 2 of 3 on e3 got 1 sum 3\nrc=0\n") !=
        std::string::npos);
  CHECK(out.find("rank 0 of 6 on e1 got 5 sum 15\nrank 1 of 6 on e1 got 0 sum 15\nrank 2 of 6 on e2 got 1 sum 15\n"
                 "rank 3 of 6 on e2 got 2 sum 15\nrank 4 of 6 on e3 got 3 sum 15\nrank 5 of 6 on e3 got 4 sum 15\nrc=0\n") !=
        std::string::npos);
  CHECK(out.find("rc=7\n") != std::string::npos);
  std::string aborted = slurp(c.dir() + "/abort.err");  // as Slurm 22.05: the others are killed at once
  CHECK(aborted.find("MPI_ABORT was invoked on rank 2") != std::string::npos);
  CHECK(aborted.find("slurmstepd-e1: error: *** STEP 1.2 ON e1 CANCELLED AT ") != std::string::npos);
  CHECK(aborted.find("srun: error: e1: task 0: Killed\n") != std::string::npos);
  // A rank gone without MPI_Finalize ends the step (as mpirun would; Slurm 22.05 hangs).
  CHECK(out.find("srun: error: e2: task 1: Exited with exit code 3\n") != std::string::npos);
  CHECK(slurp(c.dir() + "/e2.log").find("StepId=1.3: an MPI rank ended without MPI_Finalize") != std::string::npos);
  for (const char* node : {"e1", "e2", "e3"})  // every node's step directories went with the steps
    for (int step = 0; step < 4; ++step)
      CHECK(!std::filesystem::exists(c.dir() + "/" + node + "/run/pmix/1." + std::to_string(step)));
}

TEST_CASE("e2e: srun --mpi=pmix in another user's job - the ranks are that user's PMIx clients on every node") {
  HQ_SKIP_UNLESS_MPI();
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(shared + "/ring.sh") << "#!/bin/bash\nexport PATH=" << c.dir() << "/bin:$PATH\n" << kMpiEnv
                                     << "srun --mpi=pmix -N3 -n3 /usr/bin/python3 " << ring_py()
                                     << " | sort\necho rc=${PIPESTATUS[0]}\nsrun --mpi=pmix -N3 -n3 id -u\n";
  auto sub = as_user(65534, shared, "submit --parsable -N3 -n3 -o " + shared + "/ring-%j.out " + shared + "/ring.sh");
  REQUIRE(sub.rc == 0);
  std::string id = sub.out.substr(0, sub.out.find('\n'));
  REQUIRE(c.wait_state(id, "COMPLETED", 60));
  std::string out = slurp(shared + "/ring-" + id + ".out");
  INFO(out);
  CHECK(out.find("rank 0 of 3 on e1 got 2 sum 3\nrank 1 of 3 on e2 got 0 sum 3\nrank 2 of 3 on e3 got 1 sum 3\nrc=0\n65534\n65534\n65534\n") !=
        std::string::npos);
}

TEST_CASE("e2e: a node agent that dies mid-step ends the step - srun reports the node failure and exits") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/lost.sh") << "#!/bin/bash\nexport PATH=" << c.dir() << "/bin:$PATH\n"
                                      << "srun -N3 -n3 sh -c 'echo up > up.$SLURM_PROCID; " << until_file("release")
                                      << "'\necho rc=$?\n";
  std::string id = c.submit("-N3 -o lost-%j.out lost.sh");
  REQUIRE(id.find("ERROR") == std::string::npos);
  std::string out_file = c.dir() + "/lost-" + id + ".out";
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/up.1").empty() && !slurp(c.dir() + "/up.2").empty(); }, 30));
  c.kill9_agent(2);
  bool ended = wait_until([&] { return slurp(out_file).find("rc=") != std::string::npos; }, 20);
  std::ofstream(c.dir() + "/release") << "go\n";  // what the dead agent left running ends
  std::string out = slurp(out_file);
  INFO(out);
  REQUIRE(ended);
  CHECK(out.find("srun: error: Node failure on e2\n") != std::string::npos);
  CHECK(out.find("srun: error: e2: task 1: Killed\n") != std::string::npos);
  CHECK(out.find("rc=137\n") != std::string::npos);
  // An agent on e2 again, stopped with the cluster: it sweeps the job's cgroup groups the
  // killed one left, and removes the node's directories when it stops.
  c.respawn_agent(2);
  CHECK(wait_until([&] { return c.responding_nodes() == 3; }, 20));
}

TEST_CASE("e2e: steps reach a node whose agent restarted during the job - its listener keeps its port") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::string out = run_steps_across_restart(c, "-N3", "srun -N3 -n3 -l sh -c 'echo first $SLURMD_NODENAME' | sort\n",
                                             "srun -N3 -n3 -l sh -c 'echo second $SLURMD_NODENAME' | sort\n", 2);
  INFO(out);
  CHECK(out.find("0: first e1\n1: first e2\n2: first e3\n") != std::string::npos);
  CHECK(out.find("0: second e1\n1: second e2\n2: second e3\n") != std::string::npos);
}

TEST_CASE("e2e: a node agent that hangs mid-step is given up after three silent ping intervals") {
  LocalCluster c(3);  // heartbeat_interval 1 s: the links ping every second
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/hang.sh") << "#!/bin/bash\nexport PATH=" << c.dir() << "/bin:$PATH\n"
                                      << "srun -N3 -n3 sh -c 'echo up > up.$SLURM_PROCID; " << until_file("release")
                                      << "'\necho rc=$?\n";
  std::string id = c.submit("-N3 -o hang-%j.out hang.sh");
  REQUIRE(id.find("ERROR") == std::string::npos);
  std::string out_file = c.dir() + "/hang-" + id + ".out";
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/up.1").empty() && !slurp(c.dir() + "/up.2").empty(); }, 30));
  kill(c.agent_pid(2), SIGSTOP);  // alive but silent: no connection closes
  bool ended = wait_until([&] { return slurp(out_file).find("rc=") != std::string::npos; }, 15);
  kill(c.agent_pid(2), SIGCONT);
  c.release("release");
  std::string out = slurp(out_file);
  INFO(out);
  REQUIRE(ended);
  CHECK(out.find("srun: error: Node failure on e2\n") != std::string::npos);
  CHECK(out.find("rc=137\n") != std::string::npos);
}

TEST_CASE("e2e: srun passes task output on by whole lines unless -u - tasks' half lines never mix") {
  LocalCluster c(1, 4);
  REQUIRE(c.ready());
  // Each task writes half a line and waits until every task has (bounded), then ends it:
  // the halves come out together, yet line buffering keeps each task's line whole.
  std::string out = run_steps(c, "-n4",
                              "srun -n4 sh -c 'printf \"a$SLURM_PROCID\"; touch half.$SLURM_PROCID; n=0; "
                              "while [ $(ls half.* | wc -l) -lt 4 ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; "
                              "printf \"b$SLURM_PROCID\\n\"; printf tail$SLURM_PROCID' | sort\n"
                              "echo\n"
                              "srun -u -n1 sh -c 'printf x; printf y'; echo\n");
  INFO(out);
  for (int t = 0; t < 4; ++t) CHECK(out.find("a" + std::to_string(t) + "b" + std::to_string(t) + "\n") != std::string::npos);
  CHECK(out.find("xy\n") != std::string::npos);
}

TEST_CASE("e2e: step ids go on after the first node's agent restarts during the job - no second J.0") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string out = run_steps_across_restart(c, "", "srun true\nsrun sh -c 'echo before $SLURM_STEP_ID'\n",
                                             "srun sh -c 'echo after $SLURM_STEP_ID'\n", 1);
  INFO(out);
  CHECK(out.find("before 1\n") != std::string::npos);
  CHECK(out.find("after 2\n") != std::string::npos);
  std::string again = run_steps(c, "", "srun sh -c 'echo next job $SLURM_STEP_ID'\n");
  CHECK(again.find("next job 0\n") != std::string::npos);  // a new job starts from 0
}

TEST_CASE("e2e: srun -i N gives srun's stdin to task N alone - on another node too - the others read EOF at once") {
  LocalCluster c(2);
  REQUIRE(c.ready());
  std::string out = run_steps(c, "-N2 -n3",
                              "printf 'one\\ntwo\\n' | srun -N2 -n3 -l -i 2 sh -c 'cat; echo done' | sort\n"
                              "printf 'three\\n' | srun -n2 -l --input=0 sh -c 'cat; echo done' | sort\n"
                              "srun -n2 -i 5 cat; echo \"past rc=$?\"\n");
  INFO(out);
  CHECK(out.find("0: done\n1: done\n2: done\n2: one\n2: two\n") != std::string::npos);
  CHECK(out.find("0: done\n0: three\n1: done\n") != std::string::npos);
  // Past the last task, 5 is a file name, as in Slurm 22.05.
  CHECK(out.find("srun: error: Could not open stdin file: No such file or directory\npast rc=1\n") != std::string::npos);
}

TEST_CASE("e2e: a cancelled or timed-out job's steps get Slurm's CANCELLED line and SIGTERM on every node before the job ends") {
  LocalCluster c(2, 1);
  REQUIRE(c.ready());
  // srun in a session of its own (setsid): the script's SIGTERM does not reach it, so what
  // its tasks see comes from the step manager.
  std::string body = "setsid -w srun -n2 sh -c 'trap \"echo TERM on $SLURMD_NODENAME | tee term-$SLURM_JOB_ID-$SLURM_PROCID; "
                     "exit 0\" TERM; echo up > up-$SLURM_JOB_ID-$SLURM_PROCID; while :; do sleep 0.1; done'\n";
  std::string cancelled = submit_steps(c, "-N2 -n2 -o term-%j.out", body, "cancel.sh");
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/up-" + cancelled + "-1").empty(); }, 20));
  REQUIRE(c.hq("cancel " + cancelled).rc == 0);
  REQUIRE(c.wait_state(cancelled, "CANCELLED", 20));
  std::string out;  // srun may still be writing what it got when the job's end is recorded
  wait_until([&] { return (out = slurp(c.dir() + "/term-" + cancelled + ".out")).find("TERM on e2") != std::string::npos; }, 10);
  INFO(out);
  CHECK(out.find("*** STEP " + cancelled + ".0 ON e1 CANCELLED AT ") != std::string::npos);
  CHECK(out.find("DUE TO TIME LIMIT") == std::string::npos);
  CHECK(slurp(c.dir() + "/term-" + cancelled + "-0") == "TERM on e1\n");  // each node's task got SIGTERM
  CHECK(slurp(c.dir() + "/term-" + cancelled + "-1") == "TERM on e2\n");
  CHECK(out.find("TERM on e1\n") != std::string::npos);  // the job's end waited for its steps and srun
  CHECK(out.find("TERM on e2\n") != std::string::npos);

  std::string limited = submit_steps(c, "-N2 -n2 --time=3s -o term-%j.out", body, "limit.sh");
  REQUIRE(c.wait_state(limited, "TIMEOUT", 30));
  std::string late;
  wait_until([&] { return (late = slurp(c.dir() + "/term-" + limited + ".out")).find("TERM on e2") != std::string::npos; }, 10);
  INFO(late);
  CHECK(late.find("*** STEP " + limited + ".0 ON e1 CANCELLED AT ") != std::string::npos);
  CHECK(late.find(" DUE TO TIME LIMIT ***") != std::string::npos);
  CHECK(late.find("TERM on e2\n") != std::string::npos);
}

TEST_CASE("e2e: srun -i with %t feeds each task its own file, on every node - a missing one fails the step") {
  LocalCluster c(2);
  REQUIRE(c.ready());
  const char* names[] = {"zero", "one", "two"};
  for (int t = 0; t < 3; ++t) std::ofstream(c.dir() + "/in-" + std::to_string(t) + ".txt") << names[t] << "\n";
  std::string out = run_steps(c, "-N2 -n3",
                              "srun -N2 -n3 -i in-%t.txt sh -c 'echo \"$SLURM_PROCID on $SLURMD_NODENAME read $(cat)\"' | sort\n"
                              "srun -n4 -i in-%t.txt cat; echo \"missing rc=$?\"\n");
  INFO(out);
  CHECK(out.find("0 on e1 read zero\n1 on e1 read one\n2 on e2 read two\n") != std::string::npos);
  CHECK(out.find("srun: error: Could not open stdin file: No such file or directory") != std::string::npos);
  CHECK(out.find("missing rc=1\n") != std::string::npos);
}

TEST_CASE("e2e: srun --jobid from outside the job runs a step in it over the network - an unknown job is refused as Slurm does") {
  LocalCluster c(2);
  REQUIRE(c.ready());
  std::string id = submit_steps(c, "-N2 -n2", "echo up > outside.up\n" + until_file("outside.go") + "\n", "outside.sh");
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/outside.up").empty(); }, 20));
  auto r = c.hq("run --jobid=" + id + " -l -n2 sh -c 'echo $SLURM_JOB_ID $SLURMD_NODENAME $SLURM_STEP_ID $SLURM_JOB_NUM_NODES'");
  INFO(r.out);
  CHECK(r.rc == 0);
  CHECK(r.out.find("0: " + id + " e1 0 2\n") != std::string::npos);
  CHECK(r.out.find("1: " + id + " e2 0 2\n") != std::string::npos);
  auto bad = c.hq("run --jobid=999999 true");
  INFO(bad.out);
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("srun: error: Unable to confirm allocation for job 999999: Invalid job id specified\n"
                     "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job 999999\n") != std::string::npos);
  c.release("outside.go");
  CHECK(c.wait_state(id, "COMPLETED", 20));
  auto ended = c.hq("run --jobid=" + id + " true");
  CHECK(ended.rc == 1);
  CHECK(ended.out.find("srun: error: Slurm job " + id + " has expired\nsrun: Check SLURM_JOB_ID") != std::string::npos);
}

namespace {
// In `out`, the text after `start` up to `end` (both found after `from`); "" when absent.
std::string between(const std::string& out, const std::string& start, const std::string& end, size_t from = 0) {
  size_t a = out.find(start, from);
  if (a == std::string::npos) return "";
  a += start.size();
  size_t b = out.find(end, a);
  return b == std::string::npos ? "" : out.substr(a, b - a);
}
// /proc's Cpus_allowed ("00000000,00000003") as Slurm's mask ("3").
std::string proc_mask(std::string text) {
  std::erase(text, ',');
  size_t nz = text.find_first_not_of('0');
  return nz == std::string::npos ? "0" : text.substr(nz);
}
}  // namespace

TEST_CASE("e2e: srun --cpu-bind=verbose - each task's stderr gets Slurm's line with its pid and the mask it runs on") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string out = run_steps(c, "-n2",
                              "srun -l --cpu-bind=verbose,cores -n2 sh -c 'echo pid=$$; grep Cpus_allowed: /proc/self/status'"
                              " 2>&1 | sort\n"
                              "srun --cpu-bind=verbose,none -n1 true\necho rc=$?\n"
                              "srun --cpu-bind=quiet -n1 true\necho quiet-done\n");
  INFO(out);
  for (const std::string task : {"0", "1"}) {
    std::string head = task + ": cpu-bind-cores=MASK - e1, task  " + task + "  " + task + " [";
    std::string pid = between(out, head, "]: mask 0x");
    std::string mask = between(out, head + pid + "]: mask 0x", " set\n");
    CHECK(!pid.empty());
    CHECK(pid == between(out, task + ": pid=", "\n"));
    CHECK(!mask.empty());
    CHECK(mask == proc_mask(between(out, task + ": Cpus_allowed:\t", "\n")));
  }
  CHECK(between(out, "0: cpu-bind-cores=MASK", "\n") != between(out, "1: cpu-bind-cores=MASK", "\n"));
  CHECK(out.find("cpu-bind=NONE - e1, task  0  0 [") != std::string::npos);
  CHECK(out.find("rc=0\n") != std::string::npos);
  CHECK(out.find("quiet-done") != std::string::npos);
  CHECK(out.find("cpu-bind=MASK") == std::string::npos);  // quiet (and no --cpu-bind) print nothing
}

namespace {
// Writes MIB MiB to stdout, counting what it wrote so far in progress.NAME (after each
// 64 KiB its stdout took; NAME "-": the task's rank). With WAIT other than "-", it first
// reads the FIFO WAIT.NAME to its end: it starts when the test has written and closed it.
const char kWriterPy[] = R"(import os, sys
mib, name, wait = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if name == "-": name = os.environ["SLURM_PROCID"]
def note(n):
    with open("progress." + name + ".tmp", "w") as f: f.write(str(n))
    os.replace("progress." + name + ".tmp", "progress." + name)
note(0)
if wait != "-": open(wait + "." + name).read()
chunk, n = b"x" * 65536, 0
for i in range(mib * 16):
    sys.stdout.buffer.write(chunk); sys.stdout.buffer.flush(); n += len(chunk); note(n)
)";

// Until the sum of the named progress files stays the same for a second (their writers
// block: nobody reads); that sum, or -1 when they never stood still within `seconds`.
long stalled_progress(const LocalCluster& c, const std::vector<std::string>& names, double seconds) {
  long last = -2;
  int still = 0;
  bool stalled = wait_until([&] {
    long now = 0;
    for (const auto& n : names) {
      std::string text = slurp(c.dir() + "/progress." + n);
      now += text.empty() ? -1 : std::stol(text);
    }
    still = now == last ? still + 1 : 0;
    last = now;
    return still >= 20;
  }, seconds);
  return stalled ? last : -1;
}

// FIFOs go.0 and go.1 in the cluster's directory, for release_fifo.
void make_fifos(const LocalCluster& c) {
  for (const char* n : {"/go.0", "/go.1"}) REQUIRE(::mkfifo((c.dir() + n).c_str(), 0666) == 0);
}

// Once the reader of FIFO `path` has it open (within 30 s): "go" written to it and closed,
// so that its read returns. No file polled, no sleep: the reader blocks until then.
bool release_fifo(const std::string& path) {
  int fd = -1;
  if (!wait_until([&] { return (fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC)) >= 0; }, 30)) return false;
  bool ok = ::write(fd, "go\n", 3) == 3;
  ::close(fd);
  return ok;
}

long progress_of(const LocalCluster& c, int rank) {
  std::string text = slurp(c.dir() + "/progress." + std::to_string(rank));
  return text.empty() ? -1 : std::stol(text);
}
}  // namespace

TEST_CASE("e2e: a stopped srun holds its tasks' output back on their pipes, on every node - a few MiB buffered, "
          "nothing lost when it goes on") {
  LocalCluster c(2);
  REQUIRE(c.ready());
  std::ofstream(c.dir() + "/writer.py") << kWriterPy;
  make_fifos(c);
  const long mib = 40;
  std::string id = submit_steps(c, "-N2 -n2 -o flow-%j.out",
                                "cd " + c.dir() + "\nsrun -N2 -n2 python3 writer.py " + std::to_string(mib) +
                                    " - go > out.bin &\necho $! > srun.pid\nwait $!\necho rc=$?\n");
  REQUIRE(wait_until([&] { return progress_of(c, 0) == 0 && progress_of(c, 1) == 0; }, 30));
  pid_t srun = std::stoi(slurp(c.dir() + "/srun.pid"));
  REQUIRE(::kill(srun, SIGSTOP) == 0);
  REQUIRE(release_fifo(c.dir() + "/go.0"));
  REQUIRE(release_fifo(c.dir() + "/go.1"));
  long written = stalled_progress(c, {"0", "1"}, 60);
  INFO("written while srun was stopped: " << written << " bytes");
  CHECK(written >= 0);
  CHECK(written < 24L << 20);  // the high-water mark (4 MiB) and the pipes, not the 80 MiB
  REQUIRE(::kill(srun, SIGCONT) == 0);
  REQUIRE(c.wait_state(id, "COMPLETED", 60));
  CHECK(slurp(c.dir() + "/flow-" + id + ".out").find("rc=0") != std::string::npos);
  CHECK(std::filesystem::file_size(c.dir() + "/out.bin") == static_cast<uintmax_t>(2 * mib) << 20);
}

TEST_CASE("e2e: srun stops reading its stdin while the step's tasks leave it unread - a few MiB held, all of it "
          "delivered when they read") {
  LocalCluster c(2);
  REQUIRE(c.ready());
  std::ofstream(c.dir() + "/writer.py") << kWriterPy;
  make_fifos(c);
  const long mib = 40;
  std::string id = submit_steps(c, "-N2 -n2 -o stdin-%j.out",
                                "cd " + c.dir() + "\npython3 writer.py " + std::to_string(mib) +
                                    " in - | srun -N2 -n2 -l sh -c 'cat go.$SLURM_PROCID >/dev/null; wc -c'\n"
                                    "echo rc=$?\n");
  long held = stalled_progress(c, {"in"}, 60);
  INFO("written to srun's stdin while no task read it: " << held << " bytes");
  CHECK(held >= 0);
  CHECK(held < 24L << 20);  // 4 MiB on each node and the pipes, not the 40 MiB
  REQUIRE(release_fifo(c.dir() + "/go.0"));
  REQUIRE(release_fifo(c.dir() + "/go.1"));
  REQUIRE(c.wait_state(id, "COMPLETED", 60));
  std::string out = slurp(c.dir() + "/stdin-" + id + ".out");
  INFO(out);
  std::string all = std::to_string(mib << 20);
  CHECK(out.find("0: " + all + "\n") != std::string::npos);  // every task read all of it
  CHECK(out.find("1: " + all + "\n") != std::string::npos);
  CHECK(out.find("rc=0") != std::string::npos);
}
