// Parsing a Slurm persona's command line with CLI11 the way Slurm's commands answer:
// --help prints usage and exits 0; a bad option is one "<prog>: error: ..." line and a
// hint, exit 1. Include only where CLI11 is already used. One thread.
#pragma once
#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace hq::cmd {

// Parses `args` (args[0] the command's name) into `app`; an exit code when the command
// is done (help, or an error), nullopt when it goes on.
inline std::optional<int> parse_persona_args(CLI::App& app, const std::vector<std::string>& args,
                                             const std::string& prog) {
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << prog << ": error: " << e.what() << "\nTry \"" << prog << " --help\" for more information\n";
    return 1;
  }
  return std::nullopt;
}

}  // namespace hq::cmd
