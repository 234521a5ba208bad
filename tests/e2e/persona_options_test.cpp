// Every option of Slurm 22.05's `squeue --help`, `sinfo --help` and `scancel --help`
// (captured from the real commands: tests/fixtures/slurm/*-help-22.05.txt) is taken by hq's
// persona (it gets past the options to the controller lookup; none is "unknown"), and
// docs/slurm-compat.md's section for the command names each one. sbatch's are checked the
// same way in tests/core/sbatch_options_test.cpp.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <sstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

struct HelpOption {
  std::string name;  // long name
  bool takes_value = false;
};

std::vector<HelpOption> help_options(const std::string& command) {
  std::vector<HelpOption> out;
  std::istringstream in(slurp(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/" + command + "-help-22.05.txt"));
  std::regex opt(R"(^\s+(?:-\w,? +)?--([A-Za-z][A-Za-z-]*)(\[?=)?)");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, opt)) continue;
    HelpOption o{m[1], m[2].matched};
    if (o.name == "help" || o.name == "usage" || o.name == "version") continue;  // answered before parsing: e2e help_test
    out.push_back(o);
  }
  return out;
}

// Values the options take (Slurm's help leaves "=..." off some that take one).
std::string value_for(const std::string& command, const std::string& name, bool& takes) {
  static const std::map<std::string, std::string> values = {
      {"states", "PD"}, {"state", "PD"}, {"sort", "i"}, {"format", "%i"}, {"Format", "JobID"}, {"iterate", "1"},
      {"signal", "USR1"}, {"jobs", "1"}, {"steps", "1"}, {"nodes", "n1"}, {"nodelist", "n1"}, {"user", "root"},
      {"clusters", "c"}, {"cluster", "c"}, {"reservation", "r"}, {"partition", "p"}, {"name", "j"},
      {"account", "a"}, {"qos", "q"}, {"licenses", "l"}, {"wckey", "w"}, {"sibling", "c"}};
  if (name == "nodelist" || name == "clusters" || (command == "squeue" && name == "jobs")) takes = true;
  if (command == "squeue" && (name == "steps" || name == "jobs")) takes = false;  // -j, -s: optional lists
  auto it = values.find(name);
  return it == values.end() ? "x" : it->second;
}

// docs/slurm-compat.md from "## <command>" to the next "## ".
std::string doc_section(const std::string& command) {
  std::string doc = slurp(std::string(HQ_SOURCE_DIR) + "/docs/slurm-compat.md");
  size_t at = doc.find("\n## " + command);
  if (at == std::string::npos) return "";
  size_t end = doc.find("\n## ", at + 4);
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace

TEST_CASE("personas take every option of Slurm 22.05's squeue, sinfo and scancel --help - the docs name each") {
  TempDir dir;
  REQUIRE(sh(std::string(HQ_BINARY) + " install-links " + dir.path()).rc == 0);
  for (std::string command : {"squeue", "sinfo", "scancel"}) {
    auto options = help_options(command);
    CHECK(options.size() > 15);
    std::string section = doc_section(command);
    CHECK(!section.empty());
    for (const HelpOption& o : options) {
      CAPTURE(command);
      CAPTURE(o.name);
      bool takes = o.takes_value;
      std::string value = value_for(command, o.name, takes);
      auto r = sh("cd " + dir.path() + " && HQ_CONFIG=/nonexistent HQ_CONTROLLER=127.0.0.1:1 timeout 10 ./" + command +
                  " --" + o.name + (takes ? "=" + value : ""));
      CAPTURE(r.out);
      CHECK(r.out.find("not expected") == std::string::npos);
      CHECK(r.out.find("unrecognized option") == std::string::npos);
      CHECK(r.out.find("requires") == std::string::npos);
      CHECK(section.find("--" + o.name) != std::string::npos);
    }
  }
}
