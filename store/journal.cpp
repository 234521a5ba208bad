// SQLite behind Journal (see journal.hpp for the thread rules): every call's result is
// checked and becomes a Status naming the database file.
#include "store/journal.hpp"

#include "store/sqlite_util.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <random>
#include <filesystem>
#include <sqlite3.h>
#include <sys/mman.h>
#include <unistd.h>

namespace hq::store {
namespace {

constexpr const char* kTables[] = {"meta", "events", "snapshots"};

// Maps the pages of a large buffer about to be written in one call: one by one, as the
// writes fault them in, they cost about 3 times as much on a VM (35 MB of snapshot: 0.08 s
// of CPU). Kernels before 5.14 refuse MADV_POPULATE_WRITE; the writes fault them in then.
void prefault(char* data, size_t size) {
  if (size < (1 << 20)) return;
  auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

bool has_content(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  return !ec && size > 0;
}

}  // namespace

Status Journal::exec(const std::string& sql) { return exec_sql(db_, path_, sql); }

Result<std::unique_ptr<Journal>> Journal::connect(const std::string& path, const std::string& filename, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(filename.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status s = sql_error(db, rc, path, "cannot open the state database");
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<Journal> j(new Journal(db, path));
  if (int brc = sqlite3_busy_timeout(db, 5000); brc != SQLITE_OK) return sql_error(db, brc, path, "busy timeout");
  return j;
}

Result<std::unique_ptr<Journal>> Journal::open(const std::string& path) {
  auto j = connect(path, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!j) return j;
  if (Status s = (*j)->use_wal(); !s) return s;
  if (Status s = (*j)->exec("PRAGMA synchronous=FULL"); !s) return s;
  // Appends and a sequential load at start gain nothing from SQLite's default 2 MB page
  // cache: 512 KB keeps the controller's memory for what it holds.
  if (Status s = (*j)->exec("PRAGMA cache_size=-512"); !s) return s;
  if (Status s = (*j)->run_check("PRAGMA quick_check", "quick check"); !s) return s;
  if (Status s = (*j)->ensure_schema(/*may_create=*/true); !s) return s;
  if (Status s = (*j)->check_schema_version(/*may_write=*/true); !s) return s;
  if (Status s = (*j)->ensure_outbox(); !s) return s;
  return j;
}

Result<std::unique_ptr<Journal>> Journal::open_read_only(const std::string& path) {
  std::error_code ec;
  auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::not_found)
    return not_found(path + ": does not exist (a controller that never ran here has no state database)");
  if (type != std::filesystem::file_type::regular)
    return invalid(path + ": " + (ec ? ec.message() : "not a regular file"));
  // Without a -wal, immutable=1 reads the file alone and creates nothing. A -wal holds
  // committed transactions (the controller stopped without a checkpoint, or is running):
  // a read-only connection reads them; SQLite may create or update the -shm index.
  std::string query = has_content(path + "-wal") ? "mode=ro" : "immutable=1";
  auto j = connect(path, file_uri(path, query), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  if (!j) return j;
  if (Status s = (*j)->ensure_schema(/*may_create=*/false); !s) return s;
  if (Status s = (*j)->check_schema_version(/*may_write=*/false); !s) return s;
  return j;
}

Journal::Journal(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Journal::~Journal() {
  stop();
  drop_commit_statements();  // before the close
  sqlite3_close(db_);
}

Status Journal::use_wal() {
  Stmt st(db_, path_, "switching to WAL mode");
  if (Status s = st.prepare("PRAGMA journal_mode=WAL"); !s) return s;
  auto row = st.step();
  if (!row) return row.status();
  std::string mode = *row ? st.text_at(0) : "";
  if (mode != "wal") return io_error(path_ + ": SQLite could not switch to WAL mode (journal mode is '" + mode + "')");
  return Status::ok();
}

// A file without tables is new; one with all of hq's tables is a state database; any
// other mix is damage (or some other program's database).
Status Journal::ensure_schema(bool may_create) {
  Stmt st(db_, path_, "reading the schema");
  if (Status s = st.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"); !s)
    return s;
  std::vector<std::string> present;
  if (Status s = st.each_row([&] { present.push_back(st.text_at(0)); return Status::ok(); }); !s) return s;
  if (present.empty()) {
    if (may_create) return create_schema();
    return invalid(path_ + ": has no tables (an empty file, or not an hq state database)");
  }
  std::string missing;
  for (const char* table : kTables)
    if (std::find(present.begin(), present.end(), table) == present.end())
      missing += std::string(missing.empty() ? "" : ", ") + table;
  if (!missing.empty())
    return invalid(path_ + ": the table(s) " + missing + " are missing (the file is damaged or not an hq state database)");
  return Status::ok();
}

Status Journal::create_schema() {
  const std::vector<std::string> statements = {
      "BEGIN IMMEDIATE",
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
      "CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB NOT NULL)",
      "CREATE TABLE snapshots(seq INTEGER PRIMARY KEY, body BLOB NOT NULL)",
      "INSERT INTO meta VALUES('schema_version','" + std::to_string(kSchemaVersion) + "')",
      "COMMIT"};
  for (const auto& sql : statements) {
    if (Status s = exec(sql); !s) {
      (void)exec("ROLLBACK");
      return s;
    }
  }
  return Status::ok();
}

// The accounting outbox (added after schema version 1 without changing it: an older hq
// ignores the table) and the journal's source id for the store.
Status Journal::ensure_outbox() {
  std::random_device random;
  char id[17];
  std::snprintf(id, sizeof id, "%08x%08x", random(), random());
  if (Status s = exec("CREATE TABLE IF NOT EXISTS acct_outbox(seq INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB NOT NULL)"); !s)
    return s;
  if (Status s = ensure_outbox_kind(); !s) return s;
  if (Status s = exec(std::string("INSERT OR IGNORE INTO meta VALUES('source_id','") + id + "')"); !s) return s;
  Stmt st(db_, path_, "reading the journal's source id");
  if (Status s = st.prepare("SELECT value FROM meta WHERE key='source_id'"); !s) return s;
  auto row = st.step();
  if (!row) return row.status();
  source_id_ = *row ? st.text_at(0) : id;
  return Status::ok();
}

// The outbox's kind column (0 job, 1 step, 2 node span; added after the table: older rows are jobs).
Status Journal::ensure_outbox_kind() {
  Stmt st(db_, path_, "reading the outbox's columns");
  if (Status s = st.prepare("SELECT 1 FROM pragma_table_info('acct_outbox') WHERE name='kind'"); !s) return s;
  auto row = st.step();
  if (!row) return row.status();
  if (*row) return Status::ok();
  return exec("ALTER TABLE acct_outbox ADD COLUMN kind INTEGER NOT NULL DEFAULT 0");
}

// Databases made before the version row was written in the creating transaction may
// lack it: the controller adds it, a read-only check takes the current version.
Status Journal::check_schema_version(bool may_write) {
  Stmt st(db_, path_, "reading the schema version");
  if (Status s = st.prepare("SELECT value FROM meta WHERE key='schema_version'"); !s) return s;
  auto row = st.step();
  if (!row) return row.status();
  if (!*row) {
    if (!may_write) return Status::ok();
    return exec("INSERT INTO meta VALUES('schema_version','" + std::to_string(kSchemaVersion) + "')");
  }
  std::string text = st.text_at(0);
  int64_t version = st.int64_at(0);
  if (text != std::to_string(version) || version < 1 || version > kSchemaVersion)
    return invalid(path_ + ": schema version '" + text + "' is not one this hq reads (it reads " +
                   std::to_string(kSchemaVersion) + "; a newer hq wrote it, or the file is damaged)");
  return Status::ok();
}

// One read transaction: a running controller (as `--check-state` may find it) can commit
// a new snapshot, deleting the events it covers, between two statements.
Result<LoadedJournal> Journal::load() {
  if (Status s = exec("BEGIN"); !s) return s;
  LoadedJournal out;
  Status s = load_snapshot(out);
  if (s) s = load_events(out);
  if (s) s = check_no_events_missing(out);
  if (s) s = exec("COMMIT");
  if (!s) {
    (void)exec("ROLLBACK");
    return s;
  }
  return out;
}

Status Journal::load_snapshot(LoadedJournal& out) {
  int64_t seq = 0;
  {
    Stmt st(db_, path_, "reading the snapshot");
    if (Status s = st.prepare("SELECT seq, typeof(body) FROM snapshots ORDER BY seq DESC LIMIT 1"); !s) return s;
    auto row = st.step();
    if (!row) return row.status();
    if (!*row) return Status::ok();
    seq = st.int64_at(0);
    if (seq < 0) return invalid(path_ + ": the snapshot has a negative seq " + std::to_string(seq));
    std::string type = st.text_at(1);
    if (type != "blob" && type != "text")
      return invalid(path_ + ": the snapshot at seq " + std::to_string(seq) + (type == "null" ? " is empty" : " is not a blob"));
  }
  out.snapshot_seq = static_cast<uint64_t>(seq);
  if (Status s = read_blob("snapshots", "body", seq, "reading the snapshot", out.snapshot); !s) return s;
  if (out.snapshot.empty()) return invalid(path_ + ": the snapshot at seq " + std::to_string(seq) + " is empty");
  return Status::ok();
}

// Incremental blob I/O copies the value from its pages straight into `out`; a column read
// would first assemble it in a buffer of SQLite's own (for a snapshot of 100,000 jobs, 35 MB
// more memory to fault in, and a second copy).
Status Journal::read_blob(const char* table, const char* column, int64_t rowid, const std::string& what, std::string& out) {
  sqlite3_blob* blob = nullptr;
  int rc = sqlite3_blob_open(db_, "main", table, column, rowid, /*read-only*/ 0, &blob);
  if (rc == SQLITE_OK) {
    size_t size = static_cast<size_t>(sqlite3_blob_bytes(blob));
    out.reserve(size);
    prefault(out.data(), size);
    out.resize(size);
    rc = sqlite3_blob_read(blob, out.data(), static_cast<int>(out.size()), 0);
  }
  Status s = rc == SQLITE_OK ? Status::ok() : sql_error(db_, rc, path_, what);
  sqlite3_blob_close(blob);
  return s;
}

// Seqs come from AUTOINCREMENT and a snapshot deletes exactly the events up to its seq,
// in the same transaction: the events after the snapshot run on without a gap to the
// last seq handed out (so the i-th event loaded has seq snapshot_seq + 1 + i). A gap
// means events were lost.
Status Journal::load_events(LoadedJournal& out) {
  Stmt st(db_, path_, "reading journal events");
  if (Status s = st.prepare("SELECT seq, body FROM events WHERE seq > ? ORDER BY seq"); !s) return s;
  if (Status s = st.bind_int64(1, static_cast<int64_t>(out.snapshot_seq)); !s) return s;
  return st.each_row([&] {
    uint64_t expected = out.snapshot_seq + 1 + out.events.size();
    auto seq = static_cast<uint64_t>(st.int64_at(0));
    if (seq != expected) return missing_events(out, expected, seq - 1, "");
    out.events.push_back(st.blob_at(1));
    return Status::ok();
  });
}

Status Journal::check_no_events_missing(const LoadedJournal& loaded) {
  uint64_t newest = loaded.snapshot_seq + loaded.events.size();
  auto last = last_event_seq();
  if (!last) return last.status();
  if (static_cast<uint64_t>(*last) < newest)
    return invalid(path_ + ": the journal's seq counter (" + std::to_string(*last) + ") is behind its last event (" +
                   std::to_string(newest) + ")");
  if (static_cast<uint64_t>(*last) > newest)
    return missing_events(loaded, newest + 1, static_cast<uint64_t>(*last),
                          " (the journal's counter says " + std::to_string(*last) + " were written)");
  return Status::ok();
}

Status Journal::missing_events(const LoadedJournal& loaded, uint64_t first, uint64_t last, const std::string& why) {
  return invalid(path_ + ": journal events " + std::to_string(first) + " to " + std::to_string(last) + " are missing" +
                 why + (loaded.snapshot.empty() ? " (and there is no snapshot)" : ""));
}

Result<int64_t> Journal::last_event_seq() {
  Stmt st(db_, path_, "reading the journal's seq counter");
  if (Status s = st.prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name='events'), 0)"); !s)
    return s;
  auto row = st.step();
  if (!row) return row.status();
  if (!*row) return internal(path_ + ": no row from the journal's seq counter");
  return st.int64_at(0);
}

Status Journal::check_integrity() { return run_check("PRAGMA integrity_check", "integrity check"); }

Status Journal::run_check(const char* pragma, const std::string& name) {
  Stmt st(db_, path_, "running SQLite's " + name);
  if (Status s = st.prepare(pragma); !s) return s;
  std::string problems;
  Status s = st.each_row([&] {
    if (std::string line = st.text_at(0); line != "ok") problems += "\n  " + line;
    return Status::ok();
  });
  if (!s) return s;
  if (!problems.empty()) return invalid(path_ + ": SQLite's " + name + " failed:" + problems);
  return Status::ok();
}

void Journal::start(Post post) {
  post_ = std::move(post);
  writer_ = std::thread([this] { writer_loop(); });
}

void Journal::enqueue(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
}

void Journal::append(std::string event, std::vector<std::string> records, OutboxKind kind, Done done) {
  Item item;
  item.body = std::move(event);
  item.records = std::move(records);
  item.record_kind = kind;
  item.done = std::move(done);
  enqueue(std::move(item));
}

void Journal::snapshot(std::string state, Done done) {
  Item item;
  item.kind = Item::kSnapshot;
  item.body = std::move(state);
  item.done = std::move(done);
  enqueue(std::move(item));
}

void Journal::read_outbox(int64_t after, size_t limit, OutboxDone done) {
  Item item;
  item.kind = Item::kReadOutbox;
  item.seq = after;
  item.limit = limit;
  item.rows = std::make_shared<std::vector<OutboxRow>>();
  item.done = [rows = item.rows, done = std::move(done)](const Status& s) {
    if (!s) return done(s);
    done(std::move(*rows));
  };
  enqueue(std::move(item));
}

void Journal::ack_outbox(int64_t seq) {
  Item item;
  item.kind = Item::kAckOutbox;
  item.seq = seq;
  enqueue(std::move(item));
}

void Journal::append_outbox(OutboxKind kind, std::string record, Done done) {
  Item item;
  item.kind = Item::kOutboxOnly;
  item.record_kind = kind;
  item.body = std::move(record);
  item.done = std::move(done);
  enqueue(std::move(item));
}

void Journal::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !writer_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (writer_.joinable()) writer_.join();
}

void Journal::writer_loop() {
  while (true) {
    std::vector<Item> batch;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) return;
      batch.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
    }
    Status s = commit(batch);
    ++batches_;
    auto callbacks = std::make_shared<std::vector<Done>>();
    for (auto& item : batch)
      if (item.done) callbacks->push_back(std::move(item.done));
    if (!callbacks->empty() && post_) {
      post_([callbacks, s] {
        for (auto& cb : *callbacks) cb(s);
      });
    }
  }
}

Status Journal::prepare_commit_statements() {
  if (insert_outbox_) return Status::ok();
  struct Kept {
    std::unique_ptr<Stmt>* slot;
    const char* what;
    const char* sql;
  };
  for (const Kept& k : {Kept{&begin_, "beginning a commit", "BEGIN IMMEDIATE"}, Kept{&commit_, "committing", "COMMIT"},
                        Kept{&insert_event_, "appending an event", "INSERT INTO events(body) VALUES(?)"},
                        Kept{&insert_outbox_, "appending an accounting record",
                             "INSERT INTO acct_outbox(body, kind) VALUES(?, ?)"}}) {
    auto st = std::make_unique<Stmt>(db_, path_, k.what);
    if (Status s = st->prepare_kept(k.sql); !s) return s;
    *k.slot = std::move(st);
  }
  return Status::ok();
}

Status Journal::commit(const std::vector<Item>& batch) {
  if (Status s = prepare_commit_statements(); !s) return s;
  if (Status s = begin_->run_kept(); !s) return s;
  Status s = write_batch(batch);
  if (s) s = commit_->run_kept();
  if (!s) {
    (void)exec("ROLLBACK");  // also after a failed COMMIT that left the transaction open
    drop_commit_statements();  // one whose table changed under it fails from then on: compiled again
  }
  return s;
}

void Journal::drop_commit_statements() {
  for (auto* kept : {&begin_, &commit_, &insert_event_, &insert_outbox_}) kept->reset();
}

Status Journal::write_batch(const std::vector<Item>& batch) {
  Stmt& insert = *insert_event_;
  Stmt& outbox = *insert_outbox_;
  for (const auto& item : batch) {
    Status s;
    switch (item.kind) {
      case Item::kSnapshot: s = store_snapshot(item.body); break;
      case Item::kReadOutbox: s = read_outbox_rows(item); break;
      case Item::kAckOutbox: s = exec("DELETE FROM acct_outbox WHERE seq <= " + std::to_string(item.seq)); break;
      case Item::kOutboxOnly:
        s = outbox.bind_blob(1, item.body);
        if (s) s = outbox.bind_int64(2, static_cast<int64_t>(item.record_kind));
        if (s) s = outbox.run_kept();
        break;
      case Item::kEvent:
        s = insert.bind_blob(1, item.body);
        if (s) s = insert.run_kept();
        for (size_t i = 0; s && i < item.records.size(); ++i) {
          s = outbox.bind_blob(1, item.records[i]);
          if (s) s = outbox.bind_int64(2, static_cast<int64_t>(item.record_kind));
          if (s) s = outbox.run_kept();
        }
        break;
    }
    if (!s) return s;
  }
  return Status::ok();
}

Status Journal::read_outbox_rows(const Item& item) {
  Stmt st(db_, path_, "reading the accounting outbox");
  if (Status s = st.prepare("SELECT seq, body, kind FROM acct_outbox WHERE seq > ? ORDER BY seq LIMIT ?"); !s) return s;
  if (Status s = st.bind_int64(1, item.seq); !s) return s;
  if (Status s = st.bind_int64(2, static_cast<int64_t>(item.limit)); !s) return s;
  return st.each_row([&] {
    int64_t kind = st.int64_at(2);
    if (kind < 0 || kind > 2) return invalid(path_ + ": outbox record " + std::to_string(st.int64_at(0)) + " has kind " + std::to_string(kind));
    item.rows->push_back(OutboxRow{st.int64_at(0), st.blob_at(1), static_cast<OutboxKind>(kind)});
    return Status::ok();
  });
}

// The snapshot covers every event inserted so far (AUTOINCREMENT: seqs never reused).
Status Journal::store_snapshot(const std::string& state) {
  auto seq = last_event_seq();
  if (!seq) return seq.status();
  Stmt insert(db_, path_, "storing a snapshot");
  if (Status s = insert.prepare("INSERT OR REPLACE INTO snapshots(seq, body) VALUES(?, ?)"); !s) return s;
  if (Status s = insert.bind_int64(1, *seq); !s) return s;
  if (Status s = insert.bind_blob(2, state); !s) return s;
  if (Status s = insert.run(); !s) return s;
  if (Status s = exec("DELETE FROM events WHERE seq <= " + std::to_string(*seq)); !s) return s;
  return exec("DELETE FROM snapshots WHERE seq < " + std::to_string(*seq));
}

}  // namespace hq::store
