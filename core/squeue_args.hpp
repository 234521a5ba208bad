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

// How squeue's option table reads an option word: whether it takes the next word as its
// value ("-o", "--form"), and the full long name it stands for ("--jo=1" -> "jobs"; "" when
// none or several: the table reports that).
struct SqueueOptionLookup {
  std::function<bool(std::string_view)> takes_value;
  std::function<std::string_view(std::string_view)> long_name;
};

// `args[0]` is the command's name. Errors in Slurm's words (after "squeue: error: "):
// "Unrecognized option: X" (Slurm then prints its brief usage), "Incompatible options
// --jobs and --steps".
Result<SqueueWords> squeue_words(const std::vector<std::string>& args, const SqueueOptionLookup& lookup);

}  // namespace hq
