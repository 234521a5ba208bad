// srun's command line and input environment, as Slurm 22.05 reads them (srun(1) OPTIONS
// and INPUT ENVIRONMENT VARIABLES; docs/design/steps-plan.md): options stop at the first
// word that is not one (the command), which is kept with every later word byte for byte.
// Environment variables (SLURM_NTASKS, SLURM_NNODES, ... that a batch job or mpirun set)
// are defaults that the command line overrides. A -c from the environment does not imply
// --exact; only the command line's does. Pure.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/cli_options.hpp"
#include "core/job.hpp"
#include "core/status.hpp"
#include "core/step_layout.hpp"
#include "core/time.hpp"

namespace hq {

struct SrunRequest {
  StepRequest step;
  std::vector<std::string> argv;   // the command and its arguments, verbatim
  uint64_t job_id = 0;             // --jobid / SLURM_JOB_ID: inside that allocation (0: none)
  std::string job_name;            // -J
  std::string controller;          // --controller HOST:PORT (hq's): outside an allocation
  std::string ca_file;             // --ca FILE (hq's): the cluster's CA certificate
  std::string partition;           // -p (outside an allocation: the job's partition)
  bool exclusive = false;          // --exclusive (outside an allocation: whole nodes; a step: --exact)
  std::string output, error, input;  // -o/-e/-i as given (patterns); empty: srun's own streams
  bool label = false;              // -l
  bool unbuffered = false;         // -u
  bool kill_on_bad_exit = false;   // -K
  bool oom_kill_step = false;      // --oom-kill-step[=0|1] (Slurm 24.11's OOMKillStep)
  int32_t wait_s = 0;              // -W: after the first task exits (0: no limit)
  int32_t immediate_s = -1;        // -I[secs]: refuse instead of waiting (-1: wait)
  std::string mpi = "none";        // --mpi: none, pmi2, pmix; list: print the types and exit
  std::string cpu_bind;            // --cpu-bind
  std::string export_spec = "ALL"; // --export
  std::string chdir;               // -D
  Duration time_limit = 0;         // -t (0: the job's)
  int64_t mem_mib = 0;             // --mem per node (0: the job's)
  int32_t gpus = 0, gpus_per_node = 0, gpus_per_task = 0;
  bool external_launcher = false;  // --external-launcher: overlaps, holds every CPU
  int32_t verbose = 0;             // -v, counted
  bool quiet = false;              // -Q
  std::vector<std::string> warnings;  // for srun to print as "srun: Warning: ..."
  // The allocation's options as given ("--account=x"; core/srun_inert's `allocation` ones):
  // outside a job, srun's allocation reads them with sbatch's table; inside one they are
  // told as not acting (in `warnings`) and this is empty.
  std::vector<std::string> allocation_options;
  JobSpec allocation;  // outside a job: what allocation_options set, as sbatch's table reads them
};

// Parses srun's arguments (after the program name) over `env` (the caller's environment).
// Errors name the option or variable and the value, as srun's do.
// srun's --help, --usage or --version, if asked for before the command (find_meta_option).
MetaOption srun_meta_option(const std::vector<std::string>& args);

// core/cli_options' getopt_prefix_answer() for srun's table (tests/cmd/getopt_prefix_test.cpp).
std::string srun_prefix_answer(std::string_view prefix);
Result<SrunRequest> parse_srun(const std::vector<std::string>& args, const std::map<std::string, std::string>& env);

// What `srun --mpi=list` prints (stdout), in Slurm 22.05's format: the MPI types that do something.
std::string mpi_types_list();

}  // namespace hq
