// core/cli_options: getopt_long's reading of long options (unique prefixes, ambiguity, an
// exact name first, aliases), glibc 2.36's words for what it refuses, and the meta options.
#include <doctest/doctest.h>

#include "core/cli_options.hpp"

using namespace hq;

namespace {

struct Seen {
  std::vector<std::string> set;  // "name=value" in the order applied
};

CliOption<Seen> opt(std::string_view name, char letter, bool has_arg) {
  return {name, letter, has_arg, [name](Seen& s, std::string_view v) {
            s.set.push_back(std::string(name) + "=" + std::string(v));
            return Status::ok();
          }};
}

// Shaped like sbatch's: --mem is a prefix of two others, --ntasks of one; --jobs has an alias.
const std::vector<CliOption<Seen>>& table() {
  static const std::vector<CliOption<Seen>> t = [] {
    std::vector<CliOption<Seen>> v{opt("mem", 0, true),          opt("mem-per-cpu", 0, true), opt("mem-per-gpu", 0, true),
                                   opt("ntasks", 'n', true),     opt("ntasks-per-node", 0, true), opt("partition", 'p', true),
                                   opt("hold", 'H', false),      opt("helpformat", 0, false),  opt("jobs", 'j', true),
                                   opt("use-min-nodes", 0, false)};
    v.push_back(v[8]);
    v.back().long_name = "job";
    v.back().short_name = 0;
    v.back().alias_for = "jobs";
    return v;
  }();
  return t;
}

struct Outcome {
  std::vector<std::string> set;
  std::string error;
  CliFault fault = CliFault::kNone;
};

Outcome parse(std::vector<std::string> args) {
  Outcome o;
  Seen seen;
  for (size_t i = 0; i < args.size(); ++i) {
    CliOptionError err;
    Status s = apply_cli_option(table(), args, i, seen, &err);
    if (!s) {
      o.error = s.message();
      o.fault = err.fault;
      CHECK(is_getopt_message(o.error) == err.getopt());
      if (err.getopt()) CHECK(err.message == o.error);
      break;
    }
  }
  o.set = seen.set;
  return o;
}

}  // namespace

TEST_CASE("cli options: a long name may be abbreviated to a prefix only one option begins") {
  CHECK(parse({"--part=gpu"}).set == std::vector<std::string>{"partition=gpu"});
  CHECK(parse({"--p", "gpu"}).set == std::vector<std::string>{"partition=gpu"});
  CHECK(parse({"--ho"}).set == std::vector<std::string>{"hold="});
  CHECK(parse({"--mem-per-c=2G"}).set == std::vector<std::string>{"mem-per-cpu=2G"});
  // An exact name wins over the longer ones it begins.
  CHECK(parse({"--mem=4G"}).set == std::vector<std::string>{"mem=4G"});
  CHECK(parse({"--ntasks", "3"}).set == std::vector<std::string>{"ntasks=3"});
  // Two names of one option are not two options.
  CHECK(parse({"--jo=5"}).set == std::vector<std::string>{"jobs=5"});
  CHECK(parse({"--job=5"}).set == std::vector<std::string>{"jobs=5"});  // the alias sets what --jobs does
}

TEST_CASE("cli options: glibc's words for what getopt refuses") {
  Outcome ambiguous = parse({"--me=1"});
  CHECK(ambiguous.fault == CliFault::kAmbiguous);
  CHECK(ambiguous.error == "option '--me=1' is ambiguous; possibilities: '--mem' '--mem-per-cpu' '--mem-per-gpu'");
  CHECK(parse({"--mem-per", "1"}).error == "option '--mem-per' is ambiguous; possibilities: '--mem-per-cpu' '--mem-per-gpu'");
  Outcome missing_long = parse({"--part"});
  CHECK(missing_long.fault == CliFault::kMissingValue);
  CHECK(missing_long.error == "option '--partition' requires an argument");  // the full name
  CHECK(parse({"-p"}).error == "option requires an argument -- 'p'");
  Outcome no_value = parse({"--hol=1"});
  CHECK(no_value.fault == CliFault::kValueNotAllowed);
  CHECK(no_value.error == "option '--hold' doesn't allow an argument");
  CHECK(parse({"--bogus=1"}).error == "unrecognized option '--bogus=1'");
  CHECK(parse({"-z"}).error == "invalid option -- 'z'");
  CHECK(parse({"-Hz"}).error == "invalid option -- 'z'");  // a bundle with a letter the table lacks
  CHECK(parse({"-z"}).fault == CliFault::kUnknown);
  CHECK(parse({"--"}).fault == CliFault::kUnknown);  // the empty name abbreviates nothing
}

TEST_CASE("cli options: --help, --usage and --version, abbreviated too, where the table lacks them") {
  auto meta = [](std::vector<std::string> args) { return find_meta_option(table(), args); };
  CHECK(meta({"--usa"}) == MetaOption::kUsage);
  CHECK(meta({"--vers"}) == MetaOption::kVersion);
  CHECK(meta({"-p", "--help", "--help"}) == MetaOption::kHelp);  // -p's value is --help; the next one counts
  CHECK(meta({"-V"}) == MetaOption::kVersion);
  CHECK(meta({"-h"}) == MetaOption::kHelp);
  CHECK(meta({"--he"}) == MetaOption::kNone);  // --helpformat or --help: ambiguous
  CHECK(parse({"--he"}).error == "option '--he' is ambiguous; possibilities: '--helpformat' '--help'");
  CHECK(meta({"--us"}) == MetaOption::kNone);  // --use-min-nodes or --usage
  CHECK(meta({"--bogus", "--help"}) == MetaOption::kNone);  // getopt stops at the unknown one first
  CHECK(meta({"-HV"}) == MetaOption::kVersion);  // in a bundle too
  CHECK(meta({"-Hh"}) == MetaOption::kHelp);
  CHECK(expand_short_bundles(table(), {"cmd", "-HV"}) == std::vector<std::string>{"cmd", "-H", "-V"});
  CHECK(meta({"--vers=1"}) == MetaOption::kNone);  // a value: refused, as glibc refuses it
  Outcome valued = parse({"--vers=1"});
  CHECK(valued.fault == CliFault::kValueNotAllowed);
  CHECK(valued.error == "option '--version' doesn't allow an argument");
  CHECK(parse({"--help=x"}).error == "option '--help' doesn't allow an argument");
  CHECK(long_option_name(table(), "-").empty());  // too short to be a long option: no throw
  CHECK(meta({"script.sh", "--help"}) == MetaOption::kNone);
}

TEST_CASE("cli options: an abbreviated option takes the next word as its value, as the whole name does") {
  std::vector<std::string> words = expand_short_bundles(table(), {"cmd", "--part", "-Hn2", "-Hn", "4"});
  CHECK(words == std::vector<std::string>{"cmd", "--part", "-Hn2", "-H", "-n", "4"});  // -Hn2 is --part's value
  CHECK(takes_next_word(table(), "--ntasks-per"));
  CHECK_FALSE(takes_next_word(table(), "--ntasks-per=2"));
  CHECK_FALSE(takes_next_word(table(), "--ntask"));  // ambiguous: no option, no value
  CHECK(long_option_name(table(), "--jo=3") == "jobs");
  CHECK(long_option_name(table(), "--mem-p").empty());
}
