// squeue's command line as Slurm 22.05's getopt reads it: -j/-s with optional values, the
// word after the options, bundles, and a value that looks like an option.
#include <doctest/doctest.h>

#include "core/squeue_args.hpp"

using namespace hq;

namespace {

// squeue's options that take a value (the letters of Slurm's "A:i:L:n:M:O:o:p:q:R:S:t:u:U:w:").
bool takes_value(std::string_view w) {
  if (w.size() == 2) return std::string_view("AiLnMOopqRStuUw").find(w[1]) != std::string_view::npos;
  return w == "--format" || w == "--user" || w == "--states";
}

// Long names as the table gives them: whole, or "jo"/"ste" abbreviated (as getopt_long takes them).
std::string_view long_name(std::string_view w) {
  std::string_view name = w.substr(2, w.find('=') == std::string_view::npos ? std::string_view::npos : w.find('=') - 2);
  for (std::string_view full : {"jobs", "job", "steps", "step", "format", "user", "states"})
    if (name == full) return full;
  if (name == "jo") return "jobs";
  if (name == "ste") return "steps";
  return {};
}

const SqueueOptionLookup kLookup{takes_value, long_name};

SqueueWords words(std::vector<std::string> args) {
  args.insert(args.begin(), "squeue");
  auto w = squeue_words(args, kLookup);
  REQUIRE(w);
  return *w;
}

std::string error(std::vector<std::string> args) {
  args.insert(args.begin(), "squeue");
  auto w = squeue_words(args, kLookup);
  REQUIRE_FALSE(w);
  return std::string(w.status().message());
}

}  // namespace

TEST_CASE("squeue -s and -j take a value in the same word or the word after the options") {
  for (auto args : {std::vector<std::string>{"-s", "12.batch"}, {"-s12.batch"}, {"--steps=12.batch"}, {"--steps", "12.batch"}}) {
    auto w = words(args);
    CHECK(w.steps_flag);
    CHECK(w.steps == "12.batch");
    CHECK(w.rest.empty());
  }
  auto j = words({"-j", "-h"});  // -j without a value; -h is --noheader
  CHECK(j.jobs_flag);
  CHECK(j.jobs.empty());
  CHECK(j.rest == std::vector<std::string>{"-h"});
  auto attached = words({"-jh"});  // the rest of the word is -j's value
  CHECK(attached.jobs == "h");
  CHECK(attached.rest.empty());
  auto bundle = words({"-hlj5", "-o", "-j", "-t", "R"});  // -o's value is "-j", not an option
  CHECK(bundle.jobs == "5");
  CHECK(bundle.rest == std::vector<std::string>{"-h", "-l", "-o", "-j", "-t", "R"});
  auto both = words({"-j", "-s", "7"});  // the word goes to -j: steps of job 7
  CHECK_FALSE(both.jobs_flag);
  CHECK(both.steps_flag);
  CHECK(both.jobs == "7");
  auto after = words({"-j", "--", "-5"});
  CHECK(after.jobs == "-5");
}

TEST_CASE("squeue: a word no option takes is an error, and so are -j and -s without jobs") {
  CHECK(error({"12"}) == "Unrecognized option: 12");
  CHECK(error({"-j", "1", "2"}) == "Unrecognized option: 2");
  CHECK(error({"-j", "-s"}) == "Incompatible options --jobs and --steps");
  CHECK(words({"--format", "%i", "-j"}).rest == std::vector<std::string>{"--format", "%i"});
}
