// sprio against Slurm 22.05's own answers (tests/fixtures/slurm/sshare/*sprio*, multifactor
// with weights age 1000, fair share 10000, partition 1000, QOS 1000): the captured pending
// jobs with their factors (fair share as sshare showed it, QOS high = 1.0, nice 50) rendered
// by core/sprio_format for each captured command line, byte for byte.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "core/sprio_format.hpp"

#include "../fixture_file.hpp"

using namespace hq;
using hq::test::for_each_capture;
using hq::test::slurp_file;

namespace {

const std::string kSprioGoldenDir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sshare/";

const SprioWeights kWeights{1000, 0, 10000, 0, 1000, 1000};

SprioJob job(uint64_t id, const std::string& user, double fairshare, double qos = 0, int64_t nice = 0) {
  SprioJob j;
  j.id = id, j.partition = "bench", j.user = user, j.fairshare = fairshare, j.partition_factor = 1.0, j.qos = qos;
  j.nice = nice;
  j.total = static_cast<int64_t>(10000 * fairshare + 1000 + 1000 * qos) - nice;
  return j;
}

// The options of a captured sprio command line; the jobs it selects from `all`.
SprioOptions options_of(const std::string& cmd, const std::vector<SprioJob>& all, std::vector<SprioJob>& jobs) {
  SprioOptions o;
  jobs = all;
  std::istringstream in(cmd);
  std::string w;
  in >> w;
  while (in >> w) {
    if (w == "-l") o.long_list = true;
    else if (w == "-n") o.normalized = true;
    else if (w == "-w") o.weights = true;
    else if (w == "-u") {
      in >> w;
      o.user_column = true;
      std::erase_if(jobs, [&](const SprioJob& j) { return j.user != w; });
    } else if (w == "-j") {
      in >> w;
      o.jobs_given = true;
      std::erase_if(jobs, [&](const SprioJob& j) { return std::to_string(j.id) != w; });
    } else if (w == "-o") {
      std::getline(in, w);
      o.format = w.substr(w.find('"') + 1, w.rfind('"') - w.find('"') - 1);
    } else {
      FAIL("option not handled here: " << w);
    }
  }
  return o;
}

void check_set(const std::string& prefix, const std::vector<SprioJob>& all) {
  int compared = 0;
  for_each_capture(kSprioGoldenDir, [&](const std::string& file, const std::string& cmd) {
    if (cmd.rfind("sprio", 0) != 0 || (file.rfind("usage-", 0) == 0) != (prefix == "usage-")) return;
    INFO(file << ": " << cmd);
    std::vector<SprioJob> jobs;
    SprioOptions o = options_of(cmd, all, jobs);
    auto text = render_sprio(jobs, kWeights, o);
    REQUIRE(text.is_ok());
    CHECK(*text == slurp_file(kSprioGoldenDir + file));
    ++compared;
  });
  CHECK(compared >= 7);
}

}  // namespace

TEST_CASE("sprio: Slurm 22.05's answers byte for byte - default, -l, -n, -w, -u, -o, -j") {
  // Before usage: every fair share 1.0; job 3 in QOS high; job 6 --nice=50.
  check_set("", {job(2, "nobody", 1.0), job(3, "nobody", 1.0, 1.0), job(4, "daemon", 1.0), job(5, "nobody", 1.0),
                 job(6, "nobody", 1.0, 0, 50)});
  // After usage: physics/nobody 0.2, theory/nobody 0.4, chem/daemon 0.6.
  check_set("usage-", {job(10, "nobody", 0.2), job(11, "nobody", 0.4, 1.0), job(12, "daemon", 0.6), job(13, "nobody", 0.2),
                       job(14, "nobody", 0.2, 0, 50), job(15, "nobody", 0.4)});
}

TEST_CASE("sprio: an unknown format letter is refused") {
  SprioOptions o;
  o.format = "%.15i %Z";
  auto r = render_sprio({}, kWeights, o);
  REQUIRE(!r.is_ok());
  CHECK(r.status().message() == "Invalid job format specification: Z");
}
