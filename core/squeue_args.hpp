// squeue's command line as Slurm 22.05's getopt_long reads it (src/squeue/opts.c,
// "A:ahi:j::lL:n:M:O:o:p:Pq:R:rs::S:t:u:U:vVw:"): bundled short options spelled out,
// -j/--jobs and -s/--steps with optional values (a value only in the same word: "-j12",
// "--jobs=12"), and the words that are no option's value (getopt moves them to the end):
// the first is the job list when -j was given, else the step list when -s was; any more is
// an error. Pure; thread-safe.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

struct SqueueWords {
  bool jobs_flag = false, steps_flag = false;  // -j / -s given, with or without a value
  std::string jobs, steps;                      // their values ("" when none)
  std::vector<std::string> rest;                // the other options, for the option table
};

// `args[0]` is the command's name. `takes_value(word)` says whether the option word ("-o",
// "--format") takes the next word as its value. Errors in Slurm's words (after "squeue:
// error: "): "Unrecognized option: X" (Slurm then prints its brief usage), "Incompatible
// options --jobs and --steps".
Result<SqueueWords> squeue_words(const std::vector<std::string>& args,
                                 const std::function<bool(std::string_view)>& takes_value);

}  // namespace hq
