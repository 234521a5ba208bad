#include <doctest/doctest.h>

#include "core/signal_names.hpp"
#include "core/submit_options.hpp"

using namespace hq;

TEST_CASE("directives: column 0 only, stop at first command, shell-like words") {
  const char* script =
      "#!/bin/bash\n"
      "# a comment\n"
      "\n"
      "#SBATCH -J 'my job' --time=5   # trailing comment\n"
      "  #SBATCH --ntasks=99\n"        // indented: a comment
      "#HQ -o \"out %j.txt\" -c2\n"
      "#SBATCHX --nodes=9\n"
      "echo hi\n"
      "#SBATCH --mem=1G\n";            // after the first command: ignored
  auto args = parse_directives(script);
  REQUIRE(args.is_ok());
  std::vector<std::string> want = {"-J", "my job", "--time=5", "-o", "out %j.txt", "-c2"};
  CHECK(*args == want);
}

TEST_CASE("directives: errors") {
  CHECK(!parse_directives("#!/bin/sh\n#SBATCH -J 'open\n").is_ok());
  CHECK(!parse_directives("#!/bin/sh\n#SBATCH :bad\n").is_ok());
  auto esc = split_directive(" a\\ b \"c d\" e");
  REQUIRE(esc.is_ok());
  CHECK(esc->size() == 3);
  CHECK((*esc)[0] == "a b");
}

TEST_CASE("options: one table for command line and directives - command line wins") {
  SubmitRequest req;
  auto dir = parse_directives("#!/bin/sh\n#SBATCH -J fromscript -N 2-4 --mem=2G -t 1-00:00:00\n");
  REQUIRE(dir.is_ok());
  REQUIRE(apply_submit_options(*dir, req, nullptr).is_ok());
  std::vector<std::string> pos;
  REQUIRE(apply_submit_options({"--job-name=cli", "-n", "4", "script.sh", "--arg"}, req, &pos).is_ok());
  CHECK(req.spec.name == "cli");
  CHECK(req.spec.nodes_min == 2);
  CHECK(req.spec.nodes_max == 4);
  CHECK(req.spec.mem_per_node_mib == 2048);
  CHECK(req.spec.time_limit == 86400);
  CHECK(req.spec.ntasks == 4);
  CHECK(pos == std::vector<std::string>{"script.sh", "--arg"});
}

TEST_CASE("options: -t and --time-min in Slurm's whole minutes, hq's unit forms in seconds") {
  SubmitRequest req;
  REQUIRE(apply_submit_options({"-t", "0:05", "--time-min=1:30"}, req, nullptr).is_ok());
  CHECK(req.spec.time_limit == 60);  // sbatch -t 0:05: TimeLimit=00:01:00
  CHECK(req.spec.extra->time_min == 120);
  REQUIRE(apply_submit_options({"--time=45s"}, req, nullptr).is_ok());
  CHECK(req.spec.time_limit == 45);
}

TEST_CASE("options: bad values and unknown options are named") {
  SubmitRequest req;
  auto s = apply_submit_options({"--bogus"}, req, nullptr);
  CHECK(!s.is_ok());
  CHECK(s.message().find("Invalid directive") != std::string::npos);
  CHECK(!apply_submit_options({"-N", "0"}, req, nullptr).is_ok());
  CHECK(!apply_submit_options({"-N", "4-2"}, req, nullptr).is_ok());
  CHECK(!apply_submit_options({"--time=abc"}, req, nullptr).is_ok());
  CHECK(!apply_submit_options({"--mem"}, req, nullptr).is_ok());
  CHECK(!apply_submit_options({"--hold=yes"}, req, nullptr).is_ok());
  CHECK(!apply_submit_options({"script.sh"}, req, nullptr).is_ok());
  CHECK(apply_submit_options({"-H", "--parsable", "-W"}, req, nullptr).is_ok());
  CHECK(req.spec.hold);
  CHECK(req.parsable);
  CHECK(req.wait);
}

TEST_CASE("export: ALL, NONE and lists - SLURM_* always passes") {
  std::vector<std::string> env = {"A=1", "B=2", "SLURM_X=3"};
  CHECK(export_environment("ALL", env)->size() == 3);
  auto none = export_environment("NONE", env);
  CHECK(*none == std::vector<std::string>{"SLURM_X=3"});
  auto some = export_environment("B,C=7", env);
  CHECK(*some == std::vector<std::string>{"B=2", "C=7", "SLURM_X=3"});
  CHECK(!check_script("echo hi").is_ok());
  CHECK(check_script("#!/bin/sh\necho hi").is_ok());
}

TEST_CASE("directives: #SLURM is accepted with one warning") {
  std::vector<std::string> warnings;
  auto args = parse_directives("#!/bin/sh\n#SLURM -J a\n#SLURM -n 2\n", &warnings);
  REQUIRE(args.is_ok());
  CHECK(args->size() == 4);
  CHECK(warnings.size() == 1);
  CHECK(warnings[0].find("Change from #SLURM to #SBATCH") == 0);
}

TEST_CASE("signal_number: names with or without SIG, numbers 1-64, anything else refused") {
  CHECK(*signal_number("USR1") == 10);
  CHECK(*signal_number("SIGTERM") == 15);
  CHECK(*signal_number("9") == 9);
  CHECK_FALSE(signal_number("0"));
  CHECK_FALSE(signal_number("65"));
  CHECK_FALSE(signal_number("SIGBOGUS"));
  CHECK_FALSE(signal_number(""));
}

TEST_CASE("apply_salloc_options: salloc's own options, sbatch's it shares, and sbatch's alone unknown") {
  SubmitRequest req;
  std::vector<std::string> command;
  REQUIRE(apply_salloc_options({"-I", "-N", "2", "-J", "x", "--kill=INT", "cmd", "-I"}, req, command).is_ok());
  CHECK(req.immediate);
  CHECK(req.kill_signal == 2);
  CHECK(req.spec.nodes_min == 2);
  CHECK(req.spec.name == "x");
  CHECK(command == std::vector<std::string>{"cmd", "-I"});  // the command's own words are untouched
  SubmitRequest bell;
  CHECK(apply_salloc_options({"--no-bell", "--imm=5", "-K"}, bell, command).is_ok());
  CHECK(bell.immediate);
  CHECK(bell.kill_signal == 15);
  // As Slurm 22.05's salloc: sbatch's own options are unknown, abbreviations are salloc's.
  CHECK(apply_salloc_options({"--wrap=true"}, req, command).message() == "unrecognized option '--wrap=true'");
  CHECK(apply_salloc_options({"--array=1-3"}, req, command).message() == "unrecognized option '--array=1-3'");
  CHECK(apply_salloc_options({"--par=p"}, req, command).is_ok());  // --partition: sbatch's --parsable is not salloc's
  CHECK(req.spec.partition == "p");
  CHECK(apply_salloc_options({"--no-shell"}, req, command).message() ==
        "--no-shell is not supported: an allocation lives as long as its salloc");
  CHECK(apply_salloc_options({"-I=x"}, req, command).message() == "invalid --immediate value '=x'");
}

TEST_CASE("options: comment, qos, wckey, input, open-mode and priority are kept in the spec's extras") {
  SubmitRequest r;
  REQUIRE(apply_submit_options({"--comment=two words", "-q", "high", "--wckey=w1", "-i", "in-%j.txt", "--open-mode=append",
                                "--priority=42"},
                               r, nullptr)
              .is_ok());
  const JobExtras& e = *r.spec.extra;
  CHECK(e.comment == "two words");
  CHECK(e.qos == "high");
  CHECK(e.wckey == "w1");
  CHECK(e.input == "in-%j.txt");
  CHECK(e.open_mode == 1);
  CHECK(e.priority == 42);
  CHECK(r.notices.empty());

  SubmitRequest copy_source = r;  // a copy shares the extras; a later change makes its own
  REQUIRE(apply_submit_options({"--open-mode=truncate", "--priority=TOP"}, r, nullptr).is_ok());
  CHECK(r.spec.extra->open_mode == 2);
  CHECK(r.spec.extra->priority == 4294967294LL);
  CHECK(copy_source.spec.extra->open_mode == 1);

  SubmitRequest bad;
  auto mode = apply_submit_options({"--open-mode=sometimes"}, bad, nullptr);
  CHECK(mode.message().find("--open-mode") != std::string::npos);
  CHECK_FALSE(apply_submit_options({"--priority=-3"}, bad, nullptr).is_ok());
  CHECK_FALSE(apply_submit_options({"--qos="}, bad, nullptr).is_ok());
  CHECK(*bad.spec.extra == JobExtras{});  // nothing was half-set
}

TEST_CASE("sbatch option errors: which option failed, for Slurm's words - hq's own refusals keep theirs") {
  SubmitRequest r;
  std::vector<std::string> pos;
  CHECK_FALSE(apply_submit_options({"--mem=abc", "x.sh"}, r, &pos).is_ok());
  CHECK(r.option_error.name == "mem");
  CHECK(r.option_error.value == "abc");
  CHECK(sbatch_option_error(r.option_error).lines == std::vector<std::string>{"sbatch: error: Invalid --mem specification"});
  CHECK(sbatch_option_error(r.option_error).exit_code == 255);
  SubmitRequest u;
  CHECK_FALSE(apply_submit_options({"-z"}, u, &pos).is_ok());
  CHECK(u.option_error.fault == CliFault::kUnknown);
  CHECK(sbatch_option_error(u.option_error).lines[0] == "sbatch: invalid option -- 'z'");
  SubmitRequest n;
  CHECK_FALSE(apply_submit_options({"-n", "0"}, n, &pos).is_ok());
  CHECK(sbatch_option_error(n.option_error).exit_code == 1);
  SubmitRequest container;  // hq's refusal: not a value error
  CHECK_FALSE(apply_submit_options({"--container=/b"}, container, &pos).is_ok());
  CHECK(container.option_error.name.empty());
  CHECK(container.option_error.fault == CliFault::kNone);
  SubmitRequest directive;  // #SBATCH lines are not the command line: no option error kept
  CHECK_FALSE(apply_submit_options({"--mem=abc"}, directive, nullptr).is_ok());
  CHECK(directive.option_error.name.empty());
}
