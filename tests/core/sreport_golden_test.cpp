// sreport against Slurm 22.05's own output: every command line of
// tests/fixtures/slurm/sreport/commands.txt (captured with slurmdbd) run through
// core/sreport over the same scenario (scenario.sql and db-state.tsv there: the cluster's
// registrations, the node events, the job records and the association tree, given here as
// the inputs hq's controller would give), at the capture's time, comparing stdout, stderr
// and the exit code byte for byte.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "core/sreport.hpp"

#include "../fixture_file.hpp"

using hq::test::slurp_file;

namespace hq {
namespace {

const std::string kSreportGoldenDir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sreport/";
constexpr Time kNow = 1795603980;  // 2026-11-25T10:53:00Z, inside the capture's minutes

// "1=4,2=2000,1001=4" with Slurm's TRES ids.
SreportTres tres(const std::string& ids) {
  static const std::map<int, std::string> names{{1, "cpu"},     {2, "mem"},     {3, "energy"}, {4, "node"},    {5, "billing"},
                                                {6, "fs/disk"}, {7, "vmem"},    {8, "pages"},  {1001, "gres/gpu"}};
  SreportTres out;
  std::stringstream in(ids);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t eq = item.find('=');
    out[names.at(std::stoi(item.substr(0, eq)))] = std::stoll(item.substr(eq + 1));
  }
  return out;
}

// db-state.tsv's hqbench tables as sreport's inputs.
SreportData scenario() {
  SreportData d;
  d.cluster = "hqbench";
  const std::string all = "1=4,2=2000,3=0,4=2,5=4,6=0,7=0,8=0";
  d.capacity = {{1795392000, 1795603633, tres(all + ",1001=4")},
                {1795603633, 1795603644, tres(all)},
                {1795603644, 0, tres(all + ",1001=4")}};
  d.down = {{1795528800, 1795537800, false, tres("1=2,2=1000,5=2,1001=2")},
            {1795550400, 1795554000, true, tres("1=2,2=1000,5=2,1001=2")},
            {1795603633, 1795603634, false, tres("1=2,2=1000,5=2")},
            {1795603633, 1795603634, false, tres("1=2,2=1000,5=2")},
            {1795603645, 1795603670, false, tres("1=2,2=1000,5=2,1001=2")},
            {1795603645, 1795603670, false, tres("1=2,2=1000,5=2,1001=2")}};
  auto at = [](int day, int h, int m, int s = 0) -> Time { return 1795392000 + day * 86400 + h * 3600 + m * 60 + s; };
  auto job = [&](const char* acct, const char* user, Time elig, Time start, Time end, int64_t cpus, const char* t) {
    d.jobs.push_back({acct, user, "bench", elig, start, end, cpus, tres(t)});
  };
  // The sacct-steps jobs of 2026-11-25 10:48 (user root), then the scenario's.
  job("root", "root", at(2, 10, 48, 9), at(2, 10, 48, 10), at(2, 10, 48, 11), 2, "1=2,4=2,5=2");
  job("root", "root", at(2, 10, 48, 11), at(2, 10, 48, 13), at(2, 10, 48, 14), 1, "1=1,4=1,5=1");
  job("root", "root", at(2, 10, 48, 15), at(2, 10, 48, 16), at(2, 10, 48, 16), 2, "1=2,4=1,5=2");
  job("root", "root", at(2, 10, 48, 16), at(2, 10, 48, 16), at(2, 10, 48, 16), 1, "1=1,4=1,5=1");
  job("root", "root", at(2, 10, 48, 16), at(2, 10, 48, 19), at(2, 10, 48, 19), 1, "1=1,4=1,5=1");
  job("root", "root", at(2, 10, 48, 19), at(2, 10, 48, 22), at(2, 10, 48, 23), 1, "1=1,4=1,5=1");
  job("root", "root", at(2, 10, 48, 24), at(2, 10, 48, 24), at(2, 10, 48, 29), 1, "1=1,4=1,5=1,1001=1");
  job("root", "root", at(2, 10, 48, 29), at(2, 10, 48, 29), at(2, 10, 48, 30), 1, "1=1,4=1,5=1");
  job("physics", "alice", at(1, 2, 0), at(1, 2, 0), at(1, 4, 0), 2, "1=2,2=1000,4=1,5=2,1001=1");
  job("astro", "alice", at(1, 3, 30), at(1, 3, 30), at(1, 5, 15), 1, "1=1,2=500,4=1,5=1,1001=2");
  job("physics", "bob", at(1, 6, 0), at(1, 6, 0), at(1, 9, 20), 4, "1=4,2=2000,4=2,5=4");
  job("chem", "bob", at(1, 8, 30), at(1, 10, 0), at(1, 13, 45), 2, "1=2,2=800,4=1,5=2,1001=1");
  job("chem", "carol", at(1, 17, 0), at(1, 17, 0), at(1, 23, 30), 1, "1=1,2=200,4=1,5=1");
  job("chem", "carol", at(1, 22, 0), at(1, 22, 0), at(2, 2, 30), 2, "1=2,2=400,4=1,5=2,1001=2");
  job("root", "root", at(1, 11, 10), at(1, 11, 10), at(1, 11, 40), 1, "1=1,2=100,4=1,5=1");
  job("physics", "alice", at(2, 1, 0), at(2, 1, 0), at(2, 3, 0), 2, "1=2,2=1000,4=1,5=2,1001=1");
  job("chem", "bob", at(2, 4, 0), at(2, 4, 0), at(2, 6, 0), 1, "1=1,2=100,4=1,5=1");
  job("chem", "carol", at(1, 12, 0), at(1, 12, 0), at(1, 12, 0, 50), 1, "1=1,2=100,4=1,5=1");
  job("astro", "alice", at(1, 7, 0), at(1, 9, 30), at(1, 9, 31, 31), 1, "1=1,2=100,4=1,5=1");
  // hqbench_assoc_table in lft order.
  d.assocs = {{1, "root", "", ""},     {5, "physics", "", "root"}, {11, "physics", "bob", ""}, {8, "physics", "alice", ""},
              {7, "astro", "", "physics"}, {9, "astro", "alice", ""}, {6, "chem", "", "root"},  {12, "chem", "carol", ""},
              {10, "chem", "bob", ""},  {3, "hqtest", "", "root"},  {4, "hqtest", "root", ""},  {2, "root", "root", ""}};
  d.proper_names = {{"root", "root"}};
  return d;
}

struct Capture {
  std::string file;
  int rc = 0;
  std::vector<std::string> args;
};

std::vector<Capture> captures() {
  std::vector<Capture> out;
  std::ifstream in(kSreportGoldenDir + "commands.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    Capture c;
    std::string prog, w;
    words >> c.file >> c.rc >> prog;
    while (words >> w) c.args.push_back(w);
    out.push_back(c);
  }
  return out;
}

std::string stem(const std::string& file) { return file.substr(0, file.size() - 4); }

TEST_CASE("sreport: every captured command line prints what Slurm 22.05 printed") {
  SreportData data = scenario();
  auto all = captures();
  REQUIRE(all.size() == 92);
  for (const Capture& c : all) {
    CAPTURE(c.file);
    SreportOutput got = run_sreport(c.args, data, kNow, 0);
    CHECK(got.out == slurp_file(kSreportGoldenDir + c.file));
    std::ifstream err(kSreportGoldenDir + stem(c.file) + ".stderr");
    CHECK(got.err == (err ? slurp_file(kSreportGoldenDir + stem(c.file) + ".stderr") : std::string()));
    CHECK(got.rc == c.rc);
  }
}

TEST_CASE("sreport: hours count once they are over, and a window is at least an hour") {
  SreportData data = scenario();
  // 10:00-11:00 on 2026-11-24, asked at 10:30 that day: nothing rolled up yet.
  Time day = 1795392000 + 86400;
  auto early = run_sreport({"-n", "-P", "cluster", "utilization", "start=2026-11-24T10:10:00", "end=2026-11-24T10:20:00"},
                           data, day + 10 * 3600 + 1800, 0);
  CHECK(early.out.empty());
  auto later = run_sreport({"-n", "-P", "-t", "seconds", "cluster", "utilization", "start=2026-11-24T10:10:00",
                            "end=2026-11-24T10:20:00"},
                           data, day + 11 * 3600, 0);
  // job 104 holds 2 of the 4 CPUs for the whole hour
  CHECK(later.out == "hqbench|7200|0|0|7200|0|14400\n");
}

TEST_CASE("sreport: the title's times are the caller's local times") {
  SreportData data = scenario();
  auto r = run_sreport({"cluster", "utilization", "start=2026-11-24T00:00:00", "end=2026-11-25T00:00:00"}, data, kNow, 3600);
  CHECK(r.out.find("Cluster Utilization 2026-11-24T00:00:00 - 2026-11-24T23:59:59\n") != std::string::npos);
  CHECK(r.rc == 0);
}

TEST_CASE("sreport: job reports take one TRES") {
  auto r = run_sreport({"-T", "cpu,mem", "job", "sizesbyaccount"}, scenario(), kNow, 0);
  CHECK(r.out.empty());
  CHECK(r.err == " Job report only supports a single --tres type.\n Generate a separate report for each TRES type.\n");
  CHECK(r.rc == 1);
}

}  // namespace
}  // namespace hq
