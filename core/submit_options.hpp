// sbatch-compatible submission options: one option table shared by the command line
// and by #SBATCH / #HQ script directives (reference §8.1), so both parse identically.
// Pure functions; thread-safe.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cli_options.hpp"
#include "core/job.hpp"
#include "core/status.hpp"

namespace hq {

struct SubmitRequest {
  JobSpec spec;
  bool name_set = false;
  bool parsable = false;
  bool quiet = false;
  bool wait = false;
  bool json = false;
  bool wrap_set = false;
  bool test_only = false;
  std::string begin;                   // --begin as given; resolved by resolve_begin()
  std::string deadline;                // --deadline as given (--begin's forms); resolved likewise
  std::string wrap;
  std::string export_spec = "ALL";
  std::string controller;              // --controller HOST:PORT (hq's): where to submit
  std::string ca_file;                 // --ca FILE (hq's): the cluster's CA certificate
  std::string as_user, as_group;       // --uid, --gid as given (root only): resolved by the client
  bool immediate = false;              // salloc's -I: fail unless the allocation starts at once
  int kill_signal = 0;                 // salloc's -K: signal its command if the allocation is revoked
  // "--mail-type: no mail is sent yet": options taken that do not act on hq yet
  // (core/submit_inert), for sbatch to tell once each on stderr.
  std::vector<std::string> notices;
  // The command line's option that was unknown or refused its value (sbatch answers those
  // with Slurm's own words and exit code, core/submit_options' sbatch_option_error).
  CliOptionError option_error;
};

// sbatch's answer to a refused command-line option, as Slurm 22.05's: its stderr lines,
// whole, and exit code (255 for most; 1 where Slurm checks later).
struct SbatchOptionAnswer {
  std::vector<std::string> lines;
  int exit_code = 255;
};
SbatchOptionAnswer sbatch_option_error(const CliOptionError& e);

// Shell-like split of one directive's argument text: quotes group, backslash escapes,
// an unquoted '#' starts a comment. Errors: "Unmatched `'`", leading ':'.
Result<std::vector<std::string>> split_directive(std::string_view text);

// All directive arguments of a script, in order; scanning stops at the first command line.
// Lines starting "#SLURM" are accepted like "#SBATCH", with one message in `warnings`.
Result<std::vector<std::string>> parse_directives(std::string_view script,
                                                  std::vector<std::string>* warnings = nullptr);

// The long names of the options that act (not those of core/submit_inert), in table order:
// docs/slurm-compat.md's "Works" list is checked against them.
std::vector<std::string> acting_submit_options();

// sbatch's (salloc's) --help, --usage or --version, if the command line asks for one
// before its first non-option word (core/cli_options' find_meta_option).
MetaOption submit_meta_option(const std::vector<std::string>& args);
MetaOption salloc_meta_option(const std::vector<std::string>& args);

// core/cli_options' getopt_prefix_answer() for sbatch's table (tests/cmd/getopt_prefix_test.cpp).
std::string sbatch_prefix_answer(std::string_view prefix);
std::string salloc_prefix_answer(std::string_view prefix);

// Applies options to `req`. When `positional` is given, the first non-option argument and
// everything after it are moved there (script path + script args); otherwise a
// positional argument is an error (directives).
Status apply_submit_options(const std::vector<std::string>& args, SubmitRequest& req,
                            std::vector<std::string>* positional);

// salloc's: the options of sbatch's that Slurm's salloc has too (not --array, --wrap,
// --output, ...: unknown, as to Slurm's salloc), hq's own, and salloc's -I, -K, --bell,
// --no-bell and --no-shell (refused). Its command is the first non-option and the rest.
Status apply_salloc_options(const std::vector<std::string>& args, SubmitRequest& req,
                            std::vector<std::string>& command);

// The environment a job receives for an --export spec, from the submitter's environment.
Result<std::vector<std::string>> export_environment(std::string_view spec,
                                                    const std::vector<std::string>& client_env);

// --begin forms: "now", "now+N[seconds|minutes|hours|days|weeks]", "HH:MM[:SS]" (today,
// or tomorrow if past), "YYYY-MM-DD[THH:MM[:SS]]". Civil times are local to the caller:
// `utc_offset` is the caller's offset from UTC in seconds.
Result<Time> resolve_begin(std::string_view text, Time now, int64_t utc_offset);

// Slurm insists on "#!" on the first line of a batch script.
Status check_script(std::string_view script);

}  // namespace hq
