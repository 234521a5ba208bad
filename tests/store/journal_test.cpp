#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "../raw_sql.hpp"
#include "../temp_dir.hpp"
#include "store/journal.hpp"

using namespace hq;
using hq::store::Journal;
using hq::test::raw_sql;

namespace {

std::unique_ptr<Journal> open_journal(const std::string& dir) {
  auto j = Journal::open(dir + "/state.db");
  REQUIRE_MESSAGE(j.is_ok(), j.status().message());
  return std::move(j).value();
}

}  // namespace

TEST_CASE("journal: appends are durable and reload in order") {
  test::TempDir dir;
  {
    auto j = open_journal(dir.path());
    REQUIRE(j->load().is_ok());
    j->start([](std::function<void()> fn) { fn(); });
    std::atomic<int> acked{0};
    for (int i = 0; i < 100; ++i)
      j->append("event-" + std::to_string(i), [&](const Status& s) { acked += s.is_ok(); });
    j->stop();
    CHECK(acked == 100);
    // Group commit: 100 appends queued at once need far fewer than 100 transactions.
    CHECK(j->committed_batches() < 100);
  }
  auto j = open_journal(dir.path());
  auto loaded = j->load();
  REQUIRE(loaded.is_ok());
  REQUIRE(loaded->events.size() == 100);
  CHECK(loaded->events.front() == "event-0");
  CHECK(loaded->events.back() == "event-99");
  CHECK(loaded->snapshot.empty());
}

TEST_CASE("journal: a snapshot replaces the events it covers, and seqs never repeat") {
  test::TempDir dir;
  {
    auto j = open_journal(dir.path());
    REQUIRE(j->load().is_ok());
    j->start([](std::function<void()> fn) { fn(); });
    j->append("a", {});
    j->append("b", {});
    j->snapshot("state-after-b", {});
    j->append("c", {});
    j->stop();
  }
  {
    auto j = open_journal(dir.path());
    auto loaded = j->load();
    REQUIRE(loaded.is_ok());
    CHECK(loaded->snapshot == "state-after-b");
    CHECK(loaded->events == std::vector<std::string>{"c"});
    j->start([](std::function<void()> fn) { fn(); });
    j->snapshot("state-after-c", {});  // empties the events table
    j->append("d", {});                // must still sort after the snapshot
    j->stop();
  }
  auto j = open_journal(dir.path());
  auto loaded = j->load();
  REQUIRE(loaded.is_ok());
  CHECK(loaded->snapshot == "state-after-c");
  CHECK(loaded->events == std::vector<std::string>{"d"});
}

TEST_CASE("journal: unreadable database path is a clear error") {
  auto j = Journal::open("/nonexistent-dir/x/state.db");
  CHECK(!j.is_ok());
  CHECK(j.status().message().find("state.db") != std::string::npos);
}

// ---- damaged and unreadable databases: clear errors naming the file, never a crash ----

namespace {

std::string db_in(const test::TempDir& dir) { return dir.path() + "/state.db"; }

// A journal with `events` appended ("e1", "e2", ...), a snapshot after the first half.
void make_journal(const std::string& dir, int events, bool with_snapshot = true) {
  auto j = open_journal(dir);
  REQUIRE(j->load().is_ok());
  j->start([](std::function<void()> fn) { fn(); });
  for (int i = 1; i <= events; ++i) {
    j->append("e" + std::to_string(i), {});
    if (with_snapshot && i == events / 2) j->snapshot("state-after-" + std::to_string(i), {});
  }
  j->stop();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// The error of opening and loading `path` (read-write and read-only); empty if both load.
std::pair<Status, Status> open_and_load(const std::string& path) {
  auto load = [](Result<std::unique_ptr<Journal>> j) -> Status {
    if (!j) return j.status();
    auto loaded = (*j)->load();
    return loaded.status();
  };
  Status read_only = load(Journal::open_read_only(path));
  Status read_write = load(Journal::open(path));
  return {read_write, read_only};
}

void check_damage_named(const Status& s, const std::string& path, const std::string& what) {
  CHECK_FALSE(s.is_ok());
  CHECK(s.code() == Code::kInvalid);
  CHECK_MESSAGE(s.message().find(path) != std::string::npos, s.message());
  CHECK_MESSAGE(s.message().find(what) != std::string::npos, s.message());
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("journal: a garbage state.db is 'file is not a database', naming the file") {
  test::TempDir dir;
  std::string garbage(8192, 'x');
  write_bytes(db_in(dir), garbage);
  auto [rw, ro] = open_and_load(db_in(dir));
  check_damage_named(rw, db_in(dir), "file is not a database");
  check_damage_named(ro, db_in(dir), "file is not a database");
}

TEST_CASE("journal: a truncated state.db is an error naming the file, never a crash") {
  test::TempDir dir;
  {
    auto j = open_journal(dir.path());
    REQUIRE(j->load().is_ok());
    j->start([](std::function<void()> fn) { fn(); });
    for (int i = 0; i < 2000; ++i) j->append(std::string(200, static_cast<char>('a' + i % 26)), {});
    j->stop();
  }
  auto size = std::filesystem::file_size(db_in(dir));
  REQUIRE(size > 100000);
  SUBCASE("cut in half") {
    std::filesystem::resize_file(db_in(dir), size / 2);
    auto [rw, ro] = open_and_load(db_in(dir));
    check_damage_named(rw, db_in(dir), "database disk image is malformed");
    check_damage_named(ro, db_in(dir), "database disk image is malformed");
  }
  SUBCASE("a page in the middle overwritten") {
    std::fstream f(db_in(dir), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2 / 4096 * 4096));
    f << std::string(4096, '\xff');
    f.close();
    auto [rw, ro] = open_and_load(db_in(dir));
    check_damage_named(rw, db_in(dir), "database disk image is malformed");
    check_damage_named(ro, db_in(dir), "database disk image is malformed");
    auto j = Journal::open_read_only(db_in(dir));
    REQUIRE_MESSAGE(j.is_ok(), j.status().message());
    check_damage_named((*j)->check_integrity(), db_in(dir), "malformed");
  }
}

TEST_CASE("journal: a database without the snapshots table is damaged, not silently re-created") {
  test::TempDir dir;
  make_journal(dir.path(), 10);
  raw_sql(db_in(dir), "DROP TABLE snapshots");
  auto [rw, ro] = open_and_load(db_in(dir));
  check_damage_named(rw, db_in(dir), "snapshots are missing");
  check_damage_named(ro, db_in(dir), "snapshots are missing");
}

TEST_CASE("journal: events lost after the snapshot are an error naming their seqs") {
  test::TempDir dir;
  make_journal(dir.path(), 10);  // snapshot at seq 5, events 6..10
  SUBCASE("a gap") {
    raw_sql(db_in(dir), "DELETE FROM events WHERE seq IN (7, 8)");
    check_damage_named(open_and_load(db_in(dir)).first, db_in(dir), "journal events 7 to 8 are missing");
  }
  SUBCASE("the newest") {
    raw_sql(db_in(dir), "DELETE FROM events WHERE seq = 10");
    check_damage_named(open_and_load(db_in(dir)).first, db_in(dir), "journal events 10 to 10 are missing");
  }
  SUBCASE("the snapshot itself") {
    raw_sql(db_in(dir), "DELETE FROM snapshots");
    check_damage_named(open_and_load(db_in(dir)).first, db_in(dir), "journal events 1 to 5 are missing");
  }
}

TEST_CASE("journal: a schema version from a newer hq is refused") {
  test::TempDir dir;
  make_journal(dir.path(), 2);
  raw_sql(db_in(dir), "UPDATE meta SET value='99' WHERE key='schema_version'");
  check_damage_named(open_and_load(db_in(dir)).first, db_in(dir), "schema version '99'");
}

TEST_CASE("journal: another program's SQLite database is not taken for a state database") {
  test::TempDir dir;
  raw_sql(db_in(dir), "CREATE TABLE songs(title TEXT)");
  check_damage_named(open_and_load(db_in(dir)).first, db_in(dir), "meta, events, snapshots are missing");
}

TEST_CASE("journal: read-only open creates nothing, writes nothing, and reads what is in the -wal") {
  test::TempDir dir;
  make_journal(dir.path(), 10);
  auto before = files_in(dir.path());
  CHECK(before == std::vector<std::string>{"state.db"});
  auto mtime = std::filesystem::last_write_time(db_in(dir));
  {
    auto j = Journal::open_read_only(db_in(dir));
    REQUIRE_MESSAGE(j.is_ok(), j.status().message());
    CHECK((*j)->check_integrity().is_ok());
    auto loaded = (*j)->load();
    REQUIRE(loaded.is_ok());
    CHECK(loaded->snapshot == "state-after-5");
    CHECK(loaded->events.size() == 5);
  }
  CHECK(files_in(dir.path()) == before);
  CHECK(std::filesystem::last_write_time(db_in(dir)) == mtime);

  // A running controller's journal: committed events wait in the -wal.
  auto live = open_journal(dir.path());
  REQUIRE(live->load().is_ok());
  live->start([](std::function<void()> fn) { fn(); });
  live->append("e11", {});
  live->stop();  // committed, the connection still open: no checkpoint yet
  auto j = Journal::open_read_only(db_in(dir));
  REQUIRE_MESSAGE(j.is_ok(), j.status().message());
  auto loaded = (*j)->load();
  REQUIRE(loaded.is_ok());
  REQUIRE(loaded->events.size() == 6);
  CHECK(loaded->events.back() == "e11");
}

TEST_CASE("journal: read-only open of a missing file names it") {
  test::TempDir dir;
  auto j = Journal::open_read_only(db_in(dir));
  REQUIRE_FALSE(j.is_ok());
  CHECK(j.status().message().find(db_in(dir)) != std::string::npos);
  CHECK(files_in(dir.path()).empty());
}

TEST_CASE("journal: a failing commit reports the SQLite error to every callback of the batch") {
  test::TempDir dir;
  auto j = open_journal(dir.path());
  REQUIRE(j->load().is_ok());
  raw_sql(db_in(dir), "DROP TABLE events");  // the INSERT's prepare fails
  j->start([](std::function<void()> fn) { fn(); });
  std::vector<Status> results;
  std::mutex mu;
  for (int i = 0; i < 3; ++i)
    j->append("x", [&](const Status& s) {
      std::lock_guard<std::mutex> lock(mu);
      results.push_back(s);
    });
  j->stop();
  REQUIRE(results.size() == 3);
  for (const auto& s : results) {
    CHECK_FALSE(s.is_ok());
    CHECK_MESSAGE(s.message().find(db_in(dir)) != std::string::npos, s.message());
    CHECK_MESSAGE(s.message().find("no such table: events") != std::string::npos, s.message());
  }
}

TEST_CASE("journal: the statements kept for every commit recover from a failed commit") {
  test::TempDir dir;
  auto j = open_journal(dir.path());
  REQUIRE(j->load().is_ok());
  j->start([](std::function<void()> fn) { fn(); });
  auto append = [&](const std::string& body) {
    std::promise<Status> done;
    j->append(body, [&](const Status& s) { done.set_value(s); });
    return done.get_future().get();
  };
  REQUIRE(append("a").is_ok());  // the statements are compiled and kept
  raw_sql(db_in(dir), "DROP TABLE events");
  Status failed = append("b");
  CHECK_FALSE(failed.is_ok());
  CHECK_MESSAGE(failed.message().find("no such table: events") != std::string::npos, failed.message());
  raw_sql(db_in(dir), "CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB NOT NULL)");
  std::string big(100000, 'z');  // bound without a copy: the kept statement must not keep pointing at it
  Status recovered = append(big);
  CHECK_MESSAGE(recovered.is_ok(), recovered.message());
  CHECK(append("c").is_ok());
  j->stop();
  auto loaded = j->load();
  REQUIRE_MESSAGE(loaded.is_ok(), loaded.status().message());
  CHECK(loaded.value().events == std::vector<std::string>{big, "c"});
}

TEST_CASE("journal: read-only loads succeed while the controller appends and snapshots") {
  test::TempDir dir;
  auto live = open_journal(dir.path());
  REQUIRE(live->load().is_ok());
  live->start([](std::function<void()> fn) { fn(); });
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int round = 0; round < 300; ++round) {
      for (int i = 0; i < 5; ++i) live->append("e", {});
      live->snapshot("s" + std::to_string(round), {});
    }
    live->stop();
    done = true;
  });
  int loads = 0;
  while (!done || loads < 5) {
    auto j = Journal::open_read_only(db_in(dir));
    REQUIRE_MESSAGE(j.is_ok(), j.status().message());
    auto loaded = (*j)->load();
    REQUIRE_MESSAGE(loaded.is_ok(), loaded.status().message());
    ++loads;
  }
  writer.join();
  MESSAGE(loads << " read-only loads during 300 snapshots");
}
