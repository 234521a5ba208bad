#include "store/journal.hpp"

#include <sqlite3.h>

namespace hq::store {
namespace {

Status sql_error(sqlite3* db, const std::string& what) {
  return io_error(what + ": " + sqlite3_errmsg(db));
}

struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

}  // namespace

Status Journal::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return io_error(std::string("sqlite: ") + msg + " (in: " + sql + ")");
  }
  return Status::ok();
}

Result<std::unique_ptr<Journal>> Journal::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    Status s = io_error("cannot open state database " + path + ": " + (db ? sqlite3_errmsg(db) : "?"));
    sqlite3_close(db);
    return s;
  }
  std::unique_ptr<Journal> j(new Journal(db));
  sqlite3_busy_timeout(db, 5000);
  for (const char* sql : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                          "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                          "CREATE TABLE IF NOT EXISTS events(seq INTEGER PRIMARY KEY AUTOINCREMENT, body BLOB NOT NULL)",
                          "CREATE TABLE IF NOT EXISTS snapshots(seq INTEGER PRIMARY KEY, body BLOB NOT NULL)"}) {
    if (Status s = j->exec(sql); !s) return s.with_context(path);
  }
  Stmt st;
  sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &st.s, nullptr);
  if (sqlite3_step(st.s) == SQLITE_ROW) {
    int v = sqlite3_column_int(st.s, 0);
    if (v > kSchemaVersion)
      return invalid(path + ": schema version " + std::to_string(v) + " is newer than this hq (" +
                     std::to_string(kSchemaVersion) + ")");
  } else {
    std::string sql = "INSERT INTO meta VALUES('schema_version','" + std::to_string(kSchemaVersion) + "')";
    if (Status s = j->exec(sql.c_str()); !s) return s;
  }
  return j;
}

Journal::~Journal() {
  stop();
  sqlite3_close(db_);
}

Result<LoadedJournal> Journal::load() {
  LoadedJournal out;
  {
    Stmt st;
    sqlite3_prepare_v2(db_, "SELECT seq, body FROM snapshots ORDER BY seq DESC LIMIT 1", -1, &st.s, nullptr);
    if (sqlite3_step(st.s) == SQLITE_ROW) {
      out.snapshot_seq = static_cast<uint64_t>(sqlite3_column_int64(st.s, 0));
      out.snapshot.assign(static_cast<const char*>(sqlite3_column_blob(st.s, 1)),
                          static_cast<size_t>(sqlite3_column_bytes(st.s, 1)));
    }
  }
  Stmt st;
  if (sqlite3_prepare_v2(db_, "SELECT body FROM events WHERE seq > ? ORDER BY seq", -1, &st.s, nullptr) != SQLITE_OK)
    return sql_error(db_, "reading journal");
  sqlite3_bind_int64(st.s, 1, static_cast<sqlite3_int64>(out.snapshot_seq));
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    out.events.emplace_back(static_cast<const char*>(sqlite3_column_blob(st.s, 0)),
                            static_cast<size_t>(sqlite3_column_bytes(st.s, 0)));
  }
  if (rc != SQLITE_DONE) return sql_error(db_, "reading journal");
  return out;
}

void Journal::start(Post post) {
  post_ = std::move(post);
  writer_ = std::thread([this] { writer_loop(); });
}

void Journal::append(std::string event, Done done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Item{false, std::move(event), std::move(done)});
  }
  cv_.notify_one();
}

void Journal::snapshot(std::string state, Done done) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Item{true, std::move(state), std::move(done)});
  }
  cv_.notify_one();
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

Status Journal::commit(std::vector<Item>& batch) {
  if (Status s = exec("BEGIN IMMEDIATE"); !s) return s;
  Stmt ins, snap;
  sqlite3_prepare_v2(db_, "INSERT INTO events(body) VALUES(?)", -1, &ins.s, nullptr);
  sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO snapshots(seq, body) VALUES(?, ?)", -1, &snap.s, nullptr);
  for (auto& item : batch) {
    if (!item.is_snapshot) {
      sqlite3_bind_blob(ins.s, 1, item.body.data(), static_cast<int>(item.body.size()), SQLITE_STATIC);
      if (sqlite3_step(ins.s) != SQLITE_DONE) {
        Status s = sql_error(db_, "journal append");
        (void)exec("ROLLBACK");
        return s;
      }
      sqlite3_reset(ins.s);
      continue;
    }
    // The snapshot covers every event inserted so far (AUTOINCREMENT: seqs never reused).
    sqlite3_int64 seq = 0;
    Stmt mx;
    sqlite3_prepare_v2(db_, "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name='events'), 0)", -1, &mx.s, nullptr);
    if (sqlite3_step(mx.s) == SQLITE_ROW) seq = sqlite3_column_int64(mx.s, 0);
    sqlite3_bind_int64(snap.s, 1, seq);
    sqlite3_bind_blob(snap.s, 2, item.body.data(), static_cast<int>(item.body.size()), SQLITE_STATIC);
    bool ok = sqlite3_step(snap.s) == SQLITE_DONE;
    sqlite3_reset(snap.s);
    std::string del = "DELETE FROM events WHERE seq <= " + std::to_string(seq) +
                      "; DELETE FROM snapshots WHERE seq < " + std::to_string(seq);
    if (!ok || !exec(del.c_str())) {
      Status s = sql_error(db_, "snapshot");
      (void)exec("ROLLBACK");
      return s;
    }
  }
  return exec("COMMIT");
}

}  // namespace hq::store
