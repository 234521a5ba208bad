// Golden cases captured from real Slurm (tests/fixtures/slurm/<command>/cases.txt: NAME<TAB>
// args..., NAME.out with stderr then stdout, NAME.rc the exit code), and running a client
// command in-process with its output captured. Test helpers; one thread.
#pragma once
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../fixture_file.hpp"
#include "core/units.hpp"

namespace hq::test {

struct GoldenCase {
  std::string name;
  std::vector<std::string> args;  // args[0]: the command's name
  std::string out, rc;            // as captured
};

inline std::string golden_dir(const std::string& command) {
  return std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/" + command + "/";
}

inline std::vector<GoldenCase> golden_cases(const std::string& command) {
  std::vector<GoldenCase> out;
  std::istringstream cases(slurp_file(golden_dir(command) + "cases.txt"));
  for (std::string line; std::getline(cases, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto parts = split(line, '\t');
    GoldenCase c{std::string(parts[0]), {command}, "", ""};
    for (size_t i = 1; i < parts.size(); ++i) c.args.emplace_back(parts[i]);
    c.out = slurp_file(golden_dir(command) + c.name + ".out");
    c.rc = slurp_file(golden_dir(command) + c.name + ".rc");
    out.push_back(std::move(c));
  }
  return out;
}

struct Captured {
  std::string out;  // stderr, then stdout
  int rc = 0;
};

inline Captured capture_output(const std::function<int()>& run) {
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  int rc = run();
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  return {err.str() + out.str(), rc};
}

}  // namespace hq::test
