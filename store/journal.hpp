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
#include "store/event_log.hpp"

struct sqlite3;

namespace hq::store {

class Stmt;  // store/sqlite_util.hpp

constexpr int kSchemaVersion = 1;

class Journal : public EventLog {
 public:
  // Opens the state database for the controller, creating it if it does not exist.
  static Result<std::unique_ptr<Journal>> open(const std::string& path);
  // Opens an existing state database without writing to it or creating anything next to
  // it (`hq controller --check-state`); committed transactions still in the -wal are read.
  static Result<std::unique_ptr<Journal>> open_read_only(const std::string& path);
  ~Journal() override;

  const std::string& path() const { return path_; }
  // The latest snapshot and every event after it; fails on anything unreadable, and when
  // events the snapshot does not cover are missing: the events are seqs snapshot_seq+1,
  // snapshot_seq+2, ... in order.
  Result<LoadedJournal> load() override;
  // SQLite's PRAGMA integrity_check over the whole file (open() runs the quicker
  // quick_check: 30 to 70 ms of CPU on a 35 MB state of 100,000 jobs).
  Status check_integrity();
  void start(Post post) override;
  using EventLog::append;
  void append(std::string event, std::vector<std::string> records, OutboxKind kind, Done done) override;
  void read_outbox(int64_t after, size_t limit, OutboxDone done) override;
  void ack_outbox(int64_t seq) override;
  using EventLog::append_outbox;
  void append_outbox(OutboxKind kind, std::string record, Done done) override;
  std::string source_id() const override { return source_id_; }
  void snapshot(std::string state, Done done) override;
  // Commits what is queued, then stops the writer thread.
  void stop() override;
  uint64_t committed_batches() const { return batches_; }

 private:
  struct Item {
    enum Kind { kEvent, kSnapshot, kReadOutbox, kAckOutbox, kOutboxOnly } kind = kEvent;
    std::string body;
    std::vector<std::string> records;  // kEvent: into the outbox
    OutboxKind record_kind = OutboxKind::kJob;  // kOutboxOnly: what `body` is; kEvent: what `records` are
    int64_t seq = 0;                    // kReadOutbox: after it; kAckOutbox: up to it
    size_t limit = 0;
    std::shared_ptr<std::vector<OutboxRow>> rows;  // kReadOutbox: what was read
    Done done;
  };
  Journal(sqlite3* db, std::string path);
  static Result<std::unique_ptr<Journal>> connect(const std::string& path, const std::string& filename, int flags);
  Status use_wal();
  // A PRAGMA that answers "ok" or lists problems (integrity_check, quick_check).
  Status run_check(const char* pragma, const std::string& name);
  Status ensure_schema(bool may_create);
  Status ensure_outbox();
  Status ensure_outbox_kind();
  Status create_schema();
  Status check_schema_version(bool may_write);
  Status load_snapshot(LoadedJournal& out);
  Status read_blob(const char* table, const char* column, int64_t rowid, const std::string& what, std::string& out);
  Status load_events(LoadedJournal& out);
  Status check_no_events_missing(const LoadedJournal& loaded);
  Status missing_events(const LoadedJournal& loaded, uint64_t first, uint64_t last, const std::string& why);
  Result<int64_t> last_event_seq();
  void writer_loop();
  Status commit(const std::vector<Item>& batch);
  Status write_batch(const std::vector<Item>& batch);
  Status store_snapshot(const std::string& state);
  Status read_outbox_rows(const Item& item);
  void enqueue(Item item);
  Status exec(const std::string& sql);
  // The statements every commit runs, compiled once, on the writer thread.
  Status prepare_commit_statements();
  void drop_commit_statements();

  sqlite3* db_;
  std::string path_;
  std::string source_id_;
  Post post_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  std::thread writer_;
  uint64_t batches_ = 0;
  std::unique_ptr<Stmt> begin_, commit_, insert_event_, insert_outbox_;  // the writer thread's
};

}  // namespace hq::store
