// proc_stat (cmd/process): /proc/PID/stat's fields past the command name, which may hold
// spaces and parentheses, picked by index without a string each.
#include <doctest/doctest.h>

#include <unistd.h>

#include "cmd/process.hpp"

using hq::cmd::ProcStat;

TEST_CASE("proc_stat: fields past a command name with spaces and parentheses") {
  ProcStat stat("4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 12 0 0 0 7 3 0 0 20 0 1 0 98765 2 3\n");
  REQUIRE(stat.size() == 22);
  CHECK(stat[0] == "S");
  CHECK(stat[1] == "1");
  CHECK(stat[11] == "7");
  CHECK(stat[12] == "3");
  CHECK(stat[19] == "98765");
  CHECK(stat[20] == "2");
  CHECK(stat[21] == "3");  // the last, without its newline
  CHECK(stat[22].empty());
  CHECK(stat[500].empty());
}

TEST_CASE("proc_stat: a text without the command's parentheses is no process") {
  CHECK(ProcStat("").empty());
  CHECK(ProcStat("4242 no-parentheses S 1").empty());
  CHECK(ProcStat("4242 (truncated)").size() == 0);
  CHECK(ProcStat("4242 (x)").empty());
}

TEST_CASE("proc_stat: this process is running, and a pid that is not one has no fields") {
  auto self = hq::cmd::proc_stat(getpid());
  REQUIRE(self.size() > 20);
  CHECK(self[0] == "R");
  CHECK_FALSE(self[19].empty());  // the start time
  CHECK(hq::cmd::proc_stat(-5).empty());
}
