// The real binary on a damaged state: `hq controller --check-state` verifies a state
// directory offline and read-only; a controller refuses to start on a state it cannot
// read in full, naming the file, the bad part and what to do.
#include <doctest/doctest.h>

#include <filesystem>

#include "../raw_sql.hpp"
#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

// Checks the state of cluster `c` and starts a controller on it: both must fail, say
// `what` and name the file and the remedy.
void check_refused(const LocalCluster& c, const std::string& what) {
  std::string db = c.dir() + "/state/state.db";
  auto check = sh(std::string(HQ_BINARY) + " controller --check-state --state-dir " + c.dir() + "/state");
  auto start = sh("timeout 30 " + std::string(HQ_BINARY) + " controller --config " + c.dir() + "/config.toml");
  for (const auto& r : {check, start}) {
    CHECK(r.rc == 1);
    for (const std::string& part : std::vector<std::string>{db + ": ", what, "restore " + db + " from a backup", db + "-wal",
                                                             "aside", "hq controller --check-state --state-dir " + c.dir() + "/state"})
      CHECK_MESSAGE(r.out.find(part) != std::string::npos, part << " in: " << r.out);
  }
}

}  // namespace

TEST_CASE("check-state: a crashed controller's state checks out read-only, and damage stops the controller") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  for (int i = 0; i < 3; ++i) REQUIRE(c.submit("--hold --wrap true").find("ERROR") == std::string::npos);
  c.kill9_controller();  // the journal's last transactions wait in state.db-wal
  std::string state = c.dir() + "/state", db = state + "/state.db";
  REQUIRE(std::filesystem::exists(db + "-wal"));
  std::string db_before = slurp(db), wal_before = slurp(db + "-wal");

  auto by_config = sh(std::string(HQ_BINARY) + " controller --check-state -c " + c.dir() + "/config.toml");
  CHECK_MESSAGE(by_config.rc == 0, by_config.out);
  CHECK_MESSAGE(by_config.out.find(db + ": OK") != std::string::npos, by_config.out);
  CHECK_MESSAGE(by_config.out.find(", 3 jobs, next job id 4") != std::string::npos, by_config.out);
  auto by_dir = sh(std::string(HQ_BINARY) + " controller --check-state --state-dir " + state);
  CHECK_MESSAGE(by_dir.rc == 0, by_dir.out);
  CHECK(by_dir.out == by_config.out);
  CHECK(slurp(db) == db_before);  // read-only: the database and its -wal are untouched
  CHECK(slurp(db + "-wal") == wal_before);

  SUBCASE("an event that does not decode") {
    raw_sql(db, "UPDATE events SET body = x'ffff' WHERE seq = (SELECT max(seq) FROM events)");
    check_refused(c, "journal event seq ");
    check_refused(c, "undecodable journal event");
  }
  SUBCASE("a file that is not a database") {
    std::filesystem::remove(db + "-wal");
    std::filesystem::remove(db + "-shm");
    std::ofstream(db, std::ios::binary | std::ios::trunc) << std::string(16384, '\x5a');
    check_refused(c, "file is not a database");
    CHECK(slurp(db) == std::string(16384, '\x5a'));  // never replaced by an empty state
  }
}

TEST_CASE("check-state: `hq controller --help` documents it and touches nothing") {
  TempDir dir;
  auto r = sh("cd " + dir.path() + " && HQ_HOME=" + dir.path() + " " + HQ_BINARY + " controller --help");
  CHECK(r.rc == 0);
  CHECK(r.out.find("--check-state") != std::string::npos);
  CHECK(r.out.find("--state-dir") != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path()));
}
