// Parsing a Slurm persona's command line with CLI11 the way Slurm's commands answer:
// --help prints usage and exits 0; a bad option is one "<prog>: error: ..." line and a
// hint, exit 1. Include only where CLI11 is already used. One thread.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cmd/cli_parse.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_usage.hpp"
#include "core/cli_options.hpp"
#include "core/std_streams.hpp"

namespace hq::cmd {

// What a persona takes and does nothing with (hq is one cluster and hides no partition).
// Kept by the caller for as long as `app` parses (CLI11 writes into it).
struct TakenOptions {
  bool flag = false;
  std::string text;
};

// Adds `flags` and `options` (CLI11 name lists) taken into `into`, and Slurm's
// -V/--version, which prints persona_version() and exits 0.
inline void add_persona_common(CLI::App& app, TakenOptions& into, const std::string& flags, const std::string& options) {
  app.add_flag(flags, into.flag, "taken: hq is one cluster and hides no partition");
  app.add_option(options, into.text, "taken: hq is one cluster");
  app.set_version_flag("-V,--version", persona_version(), "print the version");
}

// --help or --usage anywhere after the command's name: for personas whose -h is --noheader
// and whose usage is Slurm's own text (sshare, sprio).
inline bool asks_usage(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i] == "--help" || args[i] == "--usage") return true;
  return false;
}

// Parses `args` (args[0] the command's name) into `app`; an exit code when the command
// is done (help, or an error), nullopt when it goes on.
inline std::optional<int> parse_persona_args(CLI::App& app, const std::vector<std::string>& args,
                                             const std::string& prog) {
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    return cli_parse_failure(app, e, prog);
  }
  return std::nullopt;
}

}  // namespace hq::cmd
