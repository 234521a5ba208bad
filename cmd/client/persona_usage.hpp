// Slurm's brief usage (--usage) of the personas that have one. No state.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "core/cli_options.hpp"

namespace hq::cmd {

// sbatch, salloc, srun, squeue, sinfo or scancel (as invoked, or hq's names for them:
// submit, alloc, run, queue, nodes, cancel); empty for any other command.
std::string_view slurm_brief_usage(std::string_view command);

// Answers a --help (with `help`), --usage or --version on stdout: exit code 0; nullopt for
// kNone (the command goes on).
std::optional<int> answer_meta_option(MetaOption meta, std::string_view command, std::string_view help);

}  // namespace hq::cmd
