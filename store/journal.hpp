// The controller's durable state: an append-only event journal plus snapshots in SQLite
// (WAL, synchronous=FULL). Appends are group-committed by one writer thread: every
// append queued while a commit runs goes into the next transaction, so an fsync is
// shared by all of them. Completion callbacks of one batch are handed, together, to the
// `post` function (the controller posts them onto its event loop).
// load() must be called before start(); append()/snapshot() are thread-safe after start().
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.hpp"
#include "store/event_log.hpp"

struct sqlite3;

namespace hq::store {

constexpr int kSchemaVersion = 1;

class Journal : public EventLog {
 public:
  static Result<std::unique_ptr<Journal>> open(const std::string& path);
  ~Journal() override;

  Result<LoadedJournal> load() override;
  void start(Post post) override;
  void append(std::string event, Done done) override;
  void snapshot(std::string state, Done done) override;
  // Commits what is queued, then stops the writer thread.
  void stop() override;
  uint64_t committed_batches() const { return batches_; }

 private:
  struct Item {
    bool is_snapshot = false;
    std::string body;
    Done done;
  };
  explicit Journal(sqlite3* db) : db_(db) {}
  void writer_loop();
  Status commit(std::vector<Item>& batch);
  Status exec(const char* sql);

  sqlite3* db_;
  Post post_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  std::thread writer_;
  uint64_t batches_ = 0;
};

}  // namespace hq::store
