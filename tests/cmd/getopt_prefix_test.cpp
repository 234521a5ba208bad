// Every one- and two-letter long option prefix ("--a", "--ac", ...) read by hq's persona
// tables as Slurm 22.05's clients read it: ambiguous with the same possibilities in the same
// order, unknown, or the same option (tests/fixtures/slurm/getopt/prefixes.txt, captured from
// Debian's slurm-client by prefixes.sh there), for sbatch, srun, salloc, squeue, scancel,
// sacct and sinfo.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "cmd/client/option_docs.hpp"
#include "core/srun_options.hpp"
#include "core/submit_options.hpp"

namespace {

const std::map<std::string, std::function<std::string(std::string_view)>>& tables() {
  static const std::map<std::string, std::function<std::string(std::string_view)>> t = {
      {"sbatch", hq::sbatch_prefix_answer},         {"srun", hq::srun_prefix_answer},
      {"salloc", hq::salloc_prefix_answer},
      {"squeue", hq::cmd::squeue_prefix_answer},    {"scancel", hq::cmd::scancel_prefix_answer},
      {"sacct", hq::cmd::sacct_prefix_answer},      {"sinfo", hq::cmd::sinfo_prefix_answer},
  };
  return t;
}

// hq's own options whose whole name is a prefix the fixture holds: an exact name is taken.
bool hqs_own_whole_name(const std::string& cmd, const std::string& word) {
  return (cmd == "sbatch" || cmd == "srun" || cmd == "salloc") && word == "--ca";  // the CA file for a remote controller
}

}  // namespace

TEST_CASE("getopt: every one- and two-letter long option prefix reads as in Slurm 22.05's clients") {
  std::ifstream in(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/getopt/prefixes.txt");
  REQUIRE(in.good());
  std::map<std::string, int> compared, differing;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string cmd, word;
    words >> cmd >> word;
    std::string slurm;
    std::getline(words >> std::ws, slurm);
    auto it = tables().find(cmd);
    if (it == tables().end() || hqs_own_whole_name(cmd, word)) continue;
    REQUIRE(word.rfind("--", 0) == 0);
    std::string hq = it->second(word.substr(2));
    ++compared[cmd];
    if (hq != slurm) ++differing[cmd];
    CHECK_MESSAGE(hq == slurm, cmd << " " << word << "\n  Slurm: " << slurm << "\n  hq:    " << hq);
  }
  for (const auto& [cmd, answer] : tables()) CHECK_MESSAGE(compared[cmd] > 1000, cmd << ": too few prefixes in the fixture");
  for (const auto& [cmd, n] : differing) MESSAGE(cmd << ": " << n << " of " << compared[cmd] << " prefixes differ");
}
