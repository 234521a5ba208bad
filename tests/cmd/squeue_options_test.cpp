// squeue's option table (cmd/client/queue.cpp), read by core/cli_options' getopt-like
// parser: what reaches the controller, and what squeue answers by itself.
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

#include "cmd/client/queue_format.hpp"

using namespace hq;

namespace {

struct OptionsRun {
  int rc = 0;
  std::string out, err;
  pb::QueueRequest request;  // what was asked of the controller (none: empty)
  bool asked = false;
};

OptionsRun run_squeue_options(const std::vector<std::string>& args) {
  OptionsRun r;
  pb::QueueReply none;
  auto fetch = [&](const pb::QueueRequest& q) -> Result<cmd::QueueAnswer> {
    r.request = q;
    r.asked = true;
    return cmd::QueueAnswer{&none, {}, {}};
  };
  std::ostringstream out, err;
  auto* old_out = std::cout.rdbuf(out.rdbuf());
  auto* old_err = std::cerr.rdbuf(err.rdbuf());
  r.rc = cmd::queue_with(args, fetch);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace

TEST_CASE("squeue: a repeated option's last value counts, as with Slurm's getopt") {
  auto r = run_squeue_options({"squeue", "-t", "R", "--states=PD", "-u", "nobody-such-user", "--user", "root"});
  CHECK(r.rc == 0);
  REQUIRE(r.asked);
  CHECK(r.request.state_filter() == "PD");
  REQUIRE(r.request.users_size() == 1);
  CHECK(r.request.users(0) == "root");
}

TEST_CASE("squeue: bundled and attached short options - values joined or next - -v counts") {
  auto r = run_squeue_options({"squeue", "-htR", "-p", "debug,gpu", "-o%i"});
  CHECK(r.rc == 0);
  REQUIRE(r.asked);
  CHECK(r.request.state_filter() == "R");
  CHECK(std::vector<std::string>(r.request.partitions().begin(), r.request.partitions().end()) ==
        std::vector<std::string>{"debug", "gpu"});
  CHECK(r.request.render().format() == "%i");
  CHECK_FALSE(r.request.render().header());

  auto verbose = run_squeue_options({"squeue", "-vhv"});
  CHECK(verbose.rc == 0);
  CHECK(verbose.out.find("verbose     = 2\n") != std::string::npos);  // -v's listing, once per -v
}

TEST_CASE("squeue: --help lists the table's options and asks nothing - -i out of range and a missing value are refused") {
  auto help = run_squeue_options({"squeue", "--help"});
  CHECK(help.rc == 0);
  CHECK_FALSE(help.asked);
  CHECK(help.out.rfind("Usage: squeue [OPTIONS]", 0) == 0);
  CHECK(help.out.find("\n  -t, --states=VALUE ") != std::string::npos);
  CHECK(help.out.find("\n  -j, --jobs, --job ") != std::string::npos);
  CHECK(help.out.find("\n      --me ") != std::string::npos);
  CHECK(help.out.find("\n      --hide, --noconvert ") != std::string::npos);

  auto zero = run_squeue_options({"squeue", "-i", "0"});
  CHECK(zero.rc == 1);
  CHECK_FALSE(zero.asked);
  CHECK(zero.err == "squeue: error: --iterate=0\n");

  auto missing = run_squeue_options({"squeue", "--format"});
  CHECK(missing.rc == 1);
  CHECK_FALSE(missing.asked);
  CHECK(missing.err == "squeue: option '--format' requires an argument\nTry \"squeue --help\" for more information\n");

  auto usage = run_squeue_options({"squeue", "--usage", "--bogus"});  // answered where getopt meets it
  CHECK(usage.rc == 0);
  CHECK(usage.out.rfind("Usage: squeue", 0) == 0);
}
