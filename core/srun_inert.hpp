// The options of Slurm 22.05's srun that hq's srun takes without acting on them, each with
// why, and the ones it refuses with a reason (core/submit_inert's InertOption): a command
// line written for Slurm's srun is not refused as unknown for an option hq has no use for.
// `notice` ones are told on stderr ("srun: Warning: --NAME: ..."). docs/slurm-compat.md lists
// every one (tests/core/srun_options_test.cpp keeps it in step). Pure data; thread-safe.
#pragma once
#include <vector>

#include "core/submit_inert.hpp"

namespace hq {

const std::vector<InertOption>& inert_srun_options();

// Why an option of the allocation's does not act inside a job.
inline constexpr std::string_view kInsideAJob = "inside a job it is the job's: set it with sbatch or salloc";

}  // namespace hq
