// How every hq command that parses with CLI11 answers a parse error: --help / --version
// print and exit 0; anything else is one line in getopt's words (as Slurm's commands print
// them) or "PROG: error: ...", and a hint, exit 1. Include only where CLI11 is already used.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "cmd/commands.hpp"
#include "core/std_streams.hpp"

namespace hq::cmd {

// The help text's first line is "Usage: PROG [OPTIONS]": an unnamed app is named `prog` first.
inline int cli_parse_failure(CLI::App& app, const CLI::ParseError& e, const std::string& prog) {
  if (app.get_name().empty()) app.name(prog);
  if (e.get_exit_code() == 0) return app.exit(e, hq::cout(), hq::cerr());
  std::string what = e.what();
  std::string extra = dynamic_cast<const CLI::ExtrasError*>(&e) ? what.substr(what.rfind(": ") + 2) : "";
  extra = extra.substr(0, extra.find(' '));
  if (extra.size() > 1 && extra[0] == '-') return reject_option(prog, extra);
  hq::cerr() << prog << ": error: " << what << "\nTry \"" << prog << " --help\" for more information\n";
  return 1;
}

}  // namespace hq::cmd
