// parse_srun: srun's options and input environment, including the exact command line Open
// MPI 4.1.4's mpirun gives srun inside a batch job (literal quotes are argv bytes).
#include <doctest/doctest.h>

#include "core/srun_inert.hpp"
#include "core/srun_options.hpp"
#include "tests/fixture_file.hpp"

using namespace hq;

namespace {
// What a `sbatch -N3 -n6` job's environment gives srun.
std::map<std::string, std::string> batch_env() {
  return {{"SLURM_JOB_ID", "12"}, {"SLURM_NNODES", "3"}, {"SLURM_NTASKS", "6"}, {"SLURM_CPUS_PER_TASK", "1"}};
}
}  // namespace

TEST_CASE("srun options: Open MPI's orted line keeps every word after the command byte for byte") {
  std::vector<std::string> args = {"--ntasks-per-node=1", "--kill-on-bad-exit", "--mpi=none", "--ntasks=3", "orted",
                                   "-mca", "ess", "\"slurm\"", "-mca", "ess_base_jobid", "\"281673728\"", "-mca",
                                   "orte_hnp_uri", "\"281673728.0;tcp://127.0.0.1:46039\"", "-n", "--label"};
  auto env = batch_env();
  env["SLURM_CPU_BIND"] = "none";
  auto r = parse_srun(args, env);
  REQUIRE(r.is_ok());
  CHECK(r->job_id == 12);
  CHECK(r->step.ntasks == 3);          // the command line beats SLURM_NTASKS=6
  CHECK(r->step.nodes_min == 3);       // SLURM_NNODES
  CHECK(r->step.ntasks_per_node == 1);
  CHECK(r->kill_on_bad_exit);
  CHECK(r->mpi == "none");
  CHECK(r->cpu_bind == "none");
  CHECK_FALSE(r->label);               // "--label" after the command is the command's
  CHECK_FALSE(r->step.cpus_per_task_set);  // -c from the environment does not imply --exact
  REQUIRE(r->argv.size() == 12);
  CHECK(r->argv[0] == "orted");
  CHECK(r->argv[3] == "\"slurm\"");
  CHECK(r->argv[9] == "\"281673728.0;tcp://127.0.0.1:46039\"");
  CHECK(r->argv[10] == "-n");
}

TEST_CASE("srun options: short and long forms, values inline or separate, -- ends options") {
  auto r = parse_srun({"-n4", "-N", "2-3", "-l", "-m", "cyclic:block", "-w", "n[1-2]", "-x", "n3", "-c2", "-K0",
                       "-W", "5", "-J", "step", "-o", "out-%t", "--exact", "-I", "--", "-weird", "arg"}, {});
  REQUIRE(r.is_ok());
  CHECK(r->step.ntasks == 4);
  CHECK(r->step.nodes_min == 2);
  CHECK(r->step.nodes_max == 3);
  CHECK(r->label);
  CHECK(r->step.distribution == TaskDistribution::kCyclic);
  CHECK(r->step.nodelist == std::vector<std::string>{"n1", "n2"});
  CHECK(r->step.exclude == std::vector<std::string>{"n3"});
  CHECK(r->step.cpus_per_task == 2);
  CHECK(r->step.cpus_per_task_set);
  CHECK_FALSE(r->kill_on_bad_exit);
  CHECK(r->wait_s == 5);
  CHECK(r->job_name == "step");
  CHECK(r->output == "out-%t");
  CHECK(r->step.exact);
  CHECK(r->immediate_s == 0);
  CHECK(r->argv == std::vector<std::string>{"-weird", "arg"});
  auto plane = parse_srun({"--distribution=plane=2", "--external-launcher", "--mpi=pmix_v4", "true"}, {});
  REQUIRE(plane.is_ok());
  CHECK(plane->step.distribution == TaskDistribution::kPlane);
  CHECK(plane->step.plane_size == 2);
  CHECK(plane->step.overlap);
  CHECK(plane->mpi == "pmix");
  CHECK(parse_srun({"--mpi=pmi2", "a.out"}, {})->mpi == "pmi2");
  auto list = parse_srun({"--mpi=list"}, {});  // needs no command: srun prints the types
  REQUIRE(list.is_ok());
  CHECK(list->mpi == "list");
  CHECK(parse_srun({"-t", "0:05", "true"}, {})->time_limit == 60);  // Slurm's whole minutes, rounded up
}

TEST_CASE("srun options: the environment's flags and what a bad value says") {
  auto flags = parse_srun({"true"}, {{"SLURM_OVERLAP", "1"}, {"SLURM_LABELIO", "1"}, {"SLURM_EXACT", "0"}});
  REQUIRE(flags.is_ok());
  CHECK(flags->step.overlap);
  CHECK(flags->label);
  CHECK_FALSE(flags->step.exact);
  auto bad_env = parse_srun({"true"}, {{"SLURM_NTASKS", "lots"}});
  REQUIRE_FALSE(bad_env.is_ok());
  CHECK(bad_env.status().message() == "Invalid numeric value \"lots\" for --ntasks. (from SLURM_NTASKS)");
  CHECK(parse_srun({"-n", "0", "true"}, {}).status().message() == "Invalid numeric value \"0\" for --ntasks.");
  CHECK(parse_srun({"--mpi=openmpi", "true"}, {}).status().message() ==
        "Invalid MPI type 'openmpi', --mpi=list for acceptable types");
  CHECK(parse_srun({"-N", "3-2", "true"}, {}).status().message() == "Invalid node count specification: 3-2");
  CHECK(parse_srun({"--bogus", "true"}, {}).status().message() == "unrecognized option '--bogus'");
  CHECK(parse_srun({"-n"}, {}).status().message() == "option requires an argument -- 'n'");
  CHECK(parse_srun({"--ntasks"}, {}).status().message() == "option '--ntasks' requires an argument");
  CHECK(parse_srun({"--nt=1", "true"}, {}).status().message() ==
        "option '--nt=1' is ambiguous; possibilities: '--ntasks' '--ntasks-per-core' '--ntasks-per-gpu' "
        "'--ntasks-per-node' '--ntasks-per-socket' '--ntasks-per-tres'");  // Slurm 22.05's srun, captured
  CHECK(parse_srun({"--exact=1", "true"}, {}).status().message() == "option '--exact' doesn't allow an argument");
  // getopt_long's unique prefixes (unique in Slurm 22.05's srun too)
  auto abbreviated = parse_srun({"--job-n=x", "--parti", "p", "--lab", "true"}, {});
  REQUIRE(abbreviated);
  CHECK(abbreviated->job_name == "x");
  CHECK(abbreviated->partition == "p");
  CHECK(abbreviated->label);
  CHECK(parse_srun({"-l"}, {}).status().message() == "No command given to execute.");
  CHECK_FALSE(parse_srun({"-m", "arbitrary", "true"}, {}).is_ok());
}

TEST_CASE("srun options: tasks per node that do not fit the tasks and nodes are ignored, with Slurm's warning") {
  auto env = batch_env();  // SLURM_NTASKS=6, SLURM_NNODES=3
  env["SLURM_NTASKS_PER_NODE"] = "2";
  auto three = parse_srun({"-n3", "true"}, env);
  REQUIRE(three.is_ok());
  CHECK(three->step.ntasks_per_node == 0);
  REQUIRE(three->warnings.size() == 1);
  CHECK(three->warnings[0] ==
        "can't honor --ntasks-per-node set to 2 which doesn't match the requested tasks 3 with the number of "
        "requested nodes 3. Ignoring --ntasks-per-node.");
  auto one = parse_srun({"--ntasks-per-node=1", "true"}, env);  // 6 tasks from the job
  REQUIRE(one.is_ok());
  CHECK(one->step.ntasks == 6);
  CHECK(one->step.ntasks_per_node == 0);
  REQUIRE(one->warnings.size() == 1);
  CHECK(one->warnings[0].find("set to 1 which doesn't match the requested tasks 6") != std::string::npos);
  auto fits = parse_srun({"true"}, env);  // 6 tasks, 3 nodes, 2 per node
  REQUIRE(fits.is_ok());
  CHECK(fits->step.ntasks_per_node == 2);
  CHECK(fits->warnings.empty());
  auto orted = parse_srun({"--ntasks-per-node=1", "--ntasks=3", "orted"}, env);
  REQUIRE(orted.is_ok());
  CHECK(orted->step.ntasks_per_node == 1);
  CHECK(orted->warnings.empty());
}

TEST_CASE("srun options: --mpi=list prints the types as Slurm 22.05 does") {
  CHECK(mpi_types_list() ==
        "MPI plugin types are...\n\tnone\n\tpmi2\n\tpmix\nspecific pmix plugin versions available: pmix_v4\n");
}

TEST_CASE("srun options: --oom-kill-step takes 0 or 1, or SLURM_OOM_KILL_STEP") {
  auto bare = parse_srun({"--oom-kill-step", "true"}, {});
  REQUIRE(bare.is_ok());
  CHECK(bare->oom_kill_step);
  auto off = parse_srun({"--oom-kill-step=0", "true"}, {{"SLURM_OOM_KILL_STEP", "1"}});
  REQUIRE(off.is_ok());
  CHECK_FALSE(off->oom_kill_step);  // the command line beats the environment
  auto env = parse_srun({"true"}, {{"SLURM_OOM_KILL_STEP", "1"}});
  REQUIRE(env.is_ok());
  CHECK(env->oom_kill_step);
  CHECK_FALSE(parse_srun({"true"}, {})->oom_kill_step);
  auto bad = parse_srun({"--oom-kill-step=yes", "true"}, {});
  REQUIRE_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("--oom-kill-step takes 0 or 1") != std::string::npos);
}

TEST_CASE("srun options: every Slurm option hq's srun does not act on is taken and told, or refused with why") {
  // Told once, with the option's reason; the command after the options is kept.
  auto told = parse_srun({"-A", "acct", "--qos=normal", "--acco=other", "--bb=x", "true"}, batch_env());
  REQUIRE(told.is_ok());
  CHECK(told->argv == std::vector<std::string>{"true"});
  // Inside a job (batch_env's SLURM_JOB_ID) the allocation's options are the job's: told.
  CHECK(told->warnings == std::vector<std::string>{"--account: inside a job it is the job's: set it with sbatch or salloc",
                                                   "--qos: inside a job it is the job's: set it with sbatch or salloc"});
  CHECK(told->allocation_options.empty());
  // Outside a job srun makes the allocation: they act, read as sbatch reads them.
  auto outside = parse_srun({"-A", "acct", "-C", "gpu", "--mem-per-cpu=2G", "--licenses=x", "-n2", "true"}, {});
  REQUIRE(outside.is_ok());
  CHECK(std::string(outside->allocation.account) == "acct");
  CHECK(std::string(outside->allocation.constraint) == "gpu");
  CHECK(outside->allocation.mem_per_cpu_mib == 2048);
  CHECK(outside->warnings == std::vector<std::string>{"--licenses: licenses are not tracked"});  // as sbatch tells it
  CHECK(parse_srun({"--mem-per-cpu=lots", "true"}, {}).status().message() == "Invalid --mem-per-cpu specification");
  // Refused: they would change what runs.
  CHECK(parse_srun({"--pty", "bash"}, batch_env()).status().message() ==
        "--pty: a pseudo-terminal for the first task is not supported by hq yet");
  CHECK(parse_srun({"--multi-prog", "conf"}, batch_env()).status().message() ==
        "--multi-prog: a program per task rank is not supported by hq yet");
  CHECK(parse_srun({"-Z", "true"}, batch_env()).status().message() == "--no-allocate: hq's srun runs in an allocation");
  // Slurm's other names of hq's options.
  auto alias = parse_srun({"--tasks-per-node=2", "--cpu_bind=none", "-N1", "-n2", "true"}, batch_env());
  REQUIRE(alias.is_ok());
  CHECK(alias->step.ntasks_per_node == 2);
  CHECK(alias->cpu_bind == "none");
}

TEST_CASE("srun options: docs/slurm-compat.md names every option srun takes without effect or refuses, and why") {
  std::string doc = hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/docs/slurm-compat.md");
  size_t from = doc.find("<!-- srun-inert -->"), to = doc.find("<!-- /srun-inert -->");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  std::string section = doc.substr(from, to - from);
  for (const auto& o : inert_srun_options()) {
    INFO("--" << o.name);
    size_t at = section.find("| `--" + std::string(o.name) + "`");
    REQUIRE(at != std::string::npos);
    size_t eol = section.find('\n', at);
    CHECK(section.substr(at, eol - at).find(std::string(o.why)) != std::string::npos);
  }
}
