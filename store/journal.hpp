// The controller's durable state: an append-only event journal plus snapshots in SQLite
// (WAL, synchronous=FULL). Appends are group-committed by one writer thread: every
// append queued while a commit runs goes into the next transaction, so an fsync is
// shared by all of them. Completion callbacks of one batch are handed, together, to the
// `post` function (the controller posts them onto its event loop).
// Every SQLite result is checked; errors name the database file, and a damaged file
// (SQLite's "file is not a database", "database disk image is malformed", missing
// tables, missing journal events) is a Code::kInvalid error, an I/O failure Code::kIo.
// Threads: load() and check_integrity() run before start(), on the caller's thread;
// append()/snapshot() are thread-safe after start(). A read-only journal
// (open_read_only) is for load() and check_integrity() only.
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

struct sqlite3;

namespace hq::store {

constexpr int kSchemaVersion = 1;

struct JournalEvent {
  uint64_t seq = 0;   // the journal's sequence number (1, 2, ...; never reused)
  std::string body;
};

struct LoadedJournal {
  std::string snapshot;                       // empty: none yet
  uint64_t snapshot_seq = 0;                  // the last event the snapshot covers
  std::vector<JournalEvent> events;           // after the snapshot, in order, without gaps
};

class Journal {
 public:
  using Done = std::function<void(const Status&)>;
  using Post = std::function<void(std::function<void()>)>;

  // Opens the state database for the controller, creating it if it does not exist.
  static Result<std::unique_ptr<Journal>> open(const std::string& path);
  // Opens an existing state database without writing to it or creating anything next to
  // it (`hq controller --check-state`); committed transactions still in the -wal are read.
  static Result<std::unique_ptr<Journal>> open_read_only(const std::string& path);
  ~Journal();

  const std::string& path() const { return path_; }
  // The latest snapshot and every event after it; fails on anything unreadable, and when
  // events the snapshot does not cover are missing.
  Result<LoadedJournal> load();
  // SQLite's PRAGMA integrity_check over the whole file (open() runs the quicker
  // quick_check: 30 to 70 ms of CPU on a 35 MB state of 100,000 jobs).
  Status check_integrity();
  void start(Post post);
  void append(std::string event, Done done);
  // Stores `state` as of every append queued before it and drops the events it covers.
  void snapshot(std::string state, Done done);
  // Commits what is queued, then stops the writer thread.
  void stop();
  uint64_t committed_batches() const { return batches_; }

 private:
  struct Item {
    bool is_snapshot = false;
    std::string body;
    Done done;
  };
  Journal(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  static Result<std::unique_ptr<Journal>> connect(const std::string& path, const std::string& filename, int flags);
  Status use_wal();
  // A PRAGMA that answers "ok" or lists problems (integrity_check, quick_check).
  Status run_check(const char* pragma, const std::string& name);
  Status ensure_schema(bool may_create);
  Status create_schema();
  Status check_schema_version(bool may_write);
  Status load_snapshot(LoadedJournal& out);
  Status load_events(LoadedJournal& out);
  Status check_no_events_missing(const LoadedJournal& loaded);
  Result<int64_t> last_event_seq();
  void writer_loop();
  Status commit(const std::vector<Item>& batch);
  Status write_batch(const std::vector<Item>& batch);
  Status store_snapshot(const std::string& state);
  Status exec(const std::string& sql);

  sqlite3* db_;
  std::string path_;
  Post post_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  std::thread writer_;
  uint64_t batches_ = 0;
};

}  // namespace hq::store
