// Every option of Slurm 22.05's `sbatch --help` (captured from the real command:
// tests/fixtures/slurm/sbatch-help-22.05.txt) is taken in an #SBATCH line: it acts, is
// accepted with a reason (core/submit_inert), or is refused with one; none is unknown.
// docs/slurm-compat.md names each accepted-without-effect or refused option with its reason.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "core/submit_inert.hpp"
#include "core/submit_options.hpp"
#include "tests/fixture_file.hpp"

using namespace hq;

namespace {

struct HelpOption {
  std::string name;
  bool takes_value = false;
  bool optional_value = false;
};

std::vector<HelpOption> sbatch_help_options() {
  std::vector<HelpOption> out;
  std::istringstream in(hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sbatch-help-22.05.txt"));
  std::regex opt(R"(^\s+(?:-\w,? +)?--([a-z][a-z-]*)(\[?=)?)");
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, opt)) continue;
    HelpOption o{m[1], m[2].matched, m[2].matched && std::string(m[2]) == "[="};
    if (o.name == "help" || o.name == "usage" || o.name == "version") continue;  // answered before parsing (submit_meta_option; e2e help_test)
    if (o.name == "container") o.takes_value = true;  // the help omits its "=path"
    if (std::any_of(out.begin(), out.end(), [&](const HelpOption& x) { return x.name == o.name; }))
      continue;  // named again in another option's text ("--mem >= --mem-per-cpu")
    out.push_back(o);
  }
  return out;
}

// A value each option takes (anything for the ones hq does not read).
std::string value_for(const std::string& name) {
  static const std::map<std::string, std::string> values = {
      {"array", "1-3"},        {"begin", "now"},          {"dependency", "afterok:1"}, {"time", "10"},
      {"time-min", "5"},       {"nodes", "1"},            {"mem", "1G"},              {"mem-per-cpu", "1G"},
      {"mem-per-gpu", "1G"},   {"gres", "gpu:1"},         {"signal", "USR1@30"},      {"export", "ALL"},
      {"chdir", "/tmp"},       {"cpu-bind", "cores"},     {"hint", "nomultithread"},  {"mail-type", "END"},
      {"distribution", "block"}, {"deadline", "now+1hour"}, {"exclusive", "user"},    {"nice", "10"}};
  auto it = values.find(name);
  return it == values.end() ? "1" : it->second;
}

}  // namespace

TEST_CASE("sbatch options: every option of Slurm 22.05's sbatch --help is taken in a script - none is unknown") {
  auto options = sbatch_help_options();
  REQUIRE(options.size() >= 85);  // the fixture was read
  for (const char* known : {"mail-type", "extra-node-info", "exclusive", "wrap", "gpus-per-socket"})
    CHECK(std::any_of(options.begin(), options.end(), [&](const HelpOption& o) { return o.name == known; }));
  std::set<std::string> refused;
  for (const auto& o : inert_submit_options())
    if (o.refused) refused.insert(std::string(o.name));
  for (const auto& o : options) {
    std::string word = "--" + o.name + (o.takes_value ? "=" + value_for(o.name) : "");
    SubmitRequest req;
    auto args = parse_directives("#!/bin/bash\n#SBATCH " + word + "\ntrue\n");
    REQUIRE(args.is_ok());
    Status s = apply_submit_options(*args, req, nullptr);
    INFO(word << ": " << s.message());
    if (refused.count(o.name)) {
      CHECK_FALSE(s.is_ok());
      CHECK(s.message().find("--" + o.name + ": ") != std::string::npos);  // says why
    } else {
      CHECK(s.is_ok());
    }
  }
}

TEST_CASE("sbatch options: one that does not act yet is told once - one that means nothing on hq is silent") {
  SubmitRequest req;
  auto args = parse_directives("#!/bin/bash\n#SBATCH --nodefile=a --nodefile=b --bb=x --time-min=5\n#SBATCH --tmp=1G\n");
  REQUIRE(args.is_ok());
  REQUIRE(apply_submit_options(*args, req, nullptr).is_ok());
  CHECK(req.notices == std::vector<std::string>{"--nodefile: the file is not read; use --nodelist",
                                                "--tmp: temporary disk is not tracked"});
  CHECK(req.spec.extra->time_min == 300);  // --time-min acts: stored, no notice
  SubmitRequest nice;
  REQUIRE(apply_submit_options({"--nice"}, nice, nullptr).is_ok());  // Slurm's default adjustment
  CHECK(nice.spec.nice == 100);
}

TEST_CASE("sbatch options: docs/slurm-compat.md lists every option that acts under Works") {
  std::string doc = hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/docs/slurm-compat.md");
  size_t works = doc.find("### Works"), next = doc.find("###", works + 3);
  REQUIRE(works != std::string::npos);
  std::string section = doc.substr(works, next - works);
  for (const auto& name : acting_submit_options()) {
    INFO("--" << name);
    CHECK(section.find("`--" + name + "`") != std::string::npos);
  }
}

TEST_CASE("sbatch options: docs/slurm-compat.md names every option taken without effect, and why") {
  std::string doc = hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/docs/slurm-compat.md");
  REQUIRE_FALSE(doc.empty());
  for (const auto& o : inert_submit_options()) {
    INFO("--" << o.name);
    size_t at = doc.find("`--" + std::string(o.name) + "`");
    REQUIRE(at != std::string::npos);
    size_t eol = doc.find('\n', at);
    CHECK(doc.substr(at, eol - at).find(std::string(o.why)) != std::string::npos);
  }
}

TEST_CASE("sbatch options: --exclusive=topo and --segment (Slurm 24.05), with Slurm's errors") {
  SubmitRequest topo;
  REQUIRE(apply_submit_options({"--exclusive=TOPO", "--segment=2", "-N4"}, topo, nullptr).is_ok());
  CHECK(topo.spec.exclusive_topo);
  CHECK_FALSE(topo.spec.exclusive);
  CHECK(topo.spec.segment == 2);
  SubmitRequest user;
  REQUIRE(apply_submit_options({"--exclusive=user"}, user, nullptr).is_ok());
  CHECK(user.spec.exclusive);
  CHECK_FALSE(user.spec.exclusive_topo);
  SubmitRequest bad;
  auto s = apply_submit_options({"--exclusive=rack"}, bad, nullptr);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("Invalid --exclusive specification") != std::string::npos);
  s = apply_submit_options({"--segment=two"}, bad, nullptr);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("Invalid --segment specification") != std::string::npos);
}

TEST_CASE("sbatch options: --switches=N[@wait] (topology/tree), with Slurm's error for a count") {
  SubmitRequest plain;
  REQUIRE(apply_submit_options({"--switches=2"}, plain, nullptr).is_ok());
  CHECK(plain.spec.switches == 2);
  CHECK(plain.spec.switch_wait == -1);  // the controller's max_switch_wait
  SubmitRequest waiting;
  REQUIRE(apply_submit_options({"--switches", "1@1:30"}, waiting, nullptr).is_ok());  // --time's format: 90 s
  CHECK(waiting.spec.switches == 1);
  CHECK(waiting.spec.switch_wait == 90);
  SubmitRequest minutes;
  REQUIRE(apply_submit_options({"--switches=1@5"}, minutes, nullptr).is_ok());
  CHECK(minutes.spec.switch_wait == 300);
  SubmitRequest none;
  REQUIRE(apply_submit_options({"--switches=1@0"}, none, nullptr).is_ok());
  CHECK(none.spec.switch_wait == 0);  // no wait at all
  SubmitRequest again;  // a later count alone keeps the wait; "@-1" and "@" ask for the default
  REQUIRE(apply_submit_options({"--switches=1@5", "--switches=2"}, again, nullptr).is_ok());
  CHECK(again.spec.switches == 2);
  CHECK(again.spec.switch_wait == 300);
  REQUIRE(apply_submit_options({"--switches=1@-1"}, again, nullptr).is_ok());
  CHECK(again.spec.switch_wait == -1);
  for (const char* bad : {"--switches=0", "--switches=x", "--switches=-1@5"}) {
    SubmitRequest r;
    auto s = apply_submit_options({bad}, r, nullptr);
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.message().find("Invalid numeric value \"") != std::string::npos);
    CHECK(s.message().find("\" for --switches.") != std::string::npos);
  }
  SubmitRequest r;
  CHECK_FALSE(apply_submit_options({"--switches=1@soon"}, r, nullptr).is_ok());
}
