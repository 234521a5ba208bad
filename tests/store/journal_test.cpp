#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "../temp_dir.hpp"
#include "store/journal.hpp"

using namespace hq;
using hq::store::Journal;

namespace {

// Runs posted completions inline (the test has no event loop).
struct Recorder {
  std::mutex mu;
  std::vector<std::string> done;
  Journal::Post post() {
    return [](std::function<void()> fn) { fn(); };
  }
};

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
