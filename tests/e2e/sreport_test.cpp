// sreport against a real cluster: jobs' records in the accounting store give the reports'
// figures. The expected numbers come from the jobs' own times as sacct reports them (CPUs x
// run seconds) and from the cluster's size; the report is asked as of an hour after the jobs
// (HQ_REPORT_NOW), when their hours are rolled up.
#include <doctest/doctest.h>

#include <algorithm>
#include <ctime>
#include <sstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {


time_t local_epoch(const std::string& iso) {  // "YYYY-MM-DDTHH:MM:SS", local time
  std::tm tm{};
  strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  tm.tm_isdst = -1;
  return mktime(&tm);
}

std::string local_iso(time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, '|');) out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("e2e: sreport reports the CPU seconds of the jobs' records and the cluster's size") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string one = c.submit("-A root -n1 --wrap 'sleep 2'");
  std::string two = c.submit("-A root -n2 --wrap 'sleep 1'");
  REQUIRE(c.wait_state(one, "COMPLETED", 30));
  REQUIRE(c.wait_state(two, "COMPLETED", 30));
  // The jobs' CPUs and times as their records say.
  std::string rec;
  wait_until([&] {
    rec = sh(in_bin(c) + "sacct -n -P -X -j " + one + "," + two + " --format=NCPUS,Start,End").out;
    return std::count(rec.begin(), rec.end(), '\n') == 2;
  }, 10);
  int64_t cpu_secs = 0;
  time_t first = 0, last = 0;
  std::istringstream lines(rec);
  for (std::string line; std::getline(lines, line);) {
    auto f = fields(line);
    REQUIRE(f.size() == 3);
    time_t s = local_epoch(f[1]), e = local_epoch(f[2]);
    cpu_secs += std::stoll(f[0]) * (e - s);
    first = first ? std::min(first, s) : s;
    last = std::max(last, e);
  }
  REQUIRE(cpu_secs > 0);
  // A window of whole local hours around them, asked once it is over.
  time_t start = first - (first - local_epoch(local_iso(first).substr(0, 13) + ":00:00"));
  time_t end = start + 3600;
  while (end <= last) end += 3600;
  std::string env = "HQ_REPORT_NOW=" + std::to_string(end + 60) + " ";
  std::string window = " start=" + local_iso(start) + " end=" + local_iso(end);

  auto aubu = sh("cd " + c.dir() + " && " + env + c.dir() + "/bin/sreport -n -P -t seconds cluster AccountUtilizationByUser" + window);
  CHECK(aubu.rc == 0);
  CHECK(aubu.out.rfind("e2e|root|||" + std::to_string(cpu_secs) + "|0\n", 0) == 0);

  auto util = sh("cd " + c.dir() + " && " + env + c.dir() + "/bin/sreport -n -P -t seconds cluster utilization" + window);
  CHECK(util.rc == 0);
  auto u = fields(util.out.substr(0, util.out.find('\n')));
  REQUIRE(u.size() == 7);  // Cluster Allocated Down PLND-Down Idle Planned Reported
  CHECK(u[0] == "e2e");
  CHECK(std::stoll(u[1]) == cpu_secs);
  int64_t reported = std::stoll(u[6]);
  CHECK(reported == 4 * (end - start));  // 2 nodes x 2 CPUs, every hour of the window
  CHECK(std::stoll(u[1]) + std::stoll(u[2]) + std::stoll(u[3]) + std::stoll(u[4]) + std::stoll(u[5]) == reported);

  auto sizes = sh("cd " + c.dir() + " && " + env + c.dir() + "/bin/sreport -n -P -t seconds job sizesbyaccount printjobcount" + window);
  CHECK(sizes.out == "e2e|root|2|0|0|0|0|100.00%\n");

  // Before the hour is over, nothing of it is reported yet (Slurm's hourly rollup).
  auto early = sh("cd " + c.dir() + " && HQ_REPORT_NOW=" + std::to_string(start + 60) + " " + c.dir() +
                  "/bin/sreport -n -P cluster utilization start=" + local_iso(start));
  CHECK(early.out.empty());
  CHECK(sh(in_bin(c) + "sreport cluster bogus").rc == 1);
}
