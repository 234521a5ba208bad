// SQLite helpers shared by the controller's journal and the accounting store: errors that
// name the database file (damage, SQLite's "not a database" or "malformed", is
// Code::kInvalid; anything else Code::kIo), file: URIs, and a prepared statement whose every
// call is checked. Used only from the thread that owns the connection.
#pragma once
#include <climits>
#include <filesystem>
#include <sqlite3.h>
#include <string>

#include "core/status.hpp"

namespace hq::store {

// SQLite's result codes for a file whose content is bad (as opposed to I/O failing).
inline bool is_damage(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

inline Status sql_error(sqlite3* db, int rc, const std::string& path, const std::string& what) {
  std::string message = path + ": " + what + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  return is_damage(rc) ? invalid(message) : io_error(message);
}

// A file: URI for sqlite3_open_v2 (characters URIs give a meaning are escaped).
inline std::string file_uri(const std::string& path, const std::string& query) {
  std::error_code ec;
  std::string absolute = std::filesystem::absolute(path, ec).string();
  std::string uri = "file:";
  for (char c : ec ? path : absolute) {
    if (c == '%' || c == '?' || c == '#') {
      static const char* hex = "0123456789ABCDEF";
      uri += '%';
      uri += hex[(c >> 4) & 0xf];
      uri += hex[c & 0xf];
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

inline Status exec_sql(sqlite3* db, const std::string& path, const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::ok();
  std::string message = path + ": " + (err ? err : sqlite3_errstr(rc)) + " (in: " + sql + ")";
  sqlite3_free(err);
  return is_damage(rc) ? invalid(message) : io_error(message);
}

// A prepared statement whose every SQLite call is checked; errors name the file and
// what the statement was for ("reading the snapshot").
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, std::string what) : db_(db), path_(path), what_(std::move(what)) {}
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Status prepare(const char* sql) { return check(sqlite3_prepare_v2(db_, sql, -1, &s_, nullptr)); }
  // For a statement kept and run many times (SQLite keeps it out of its lookaside memory).
  Status prepare_kept(const char* sql) {
    return check(sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s_, nullptr));
  }
  Status bind_int64(int index, int64_t value) { return check(sqlite3_bind_int64(s_, index, value)); }
  // Copied by SQLite (SQLITE_TRANSIENT).
  Status bind_text(int index, const std::string& value) {
    return check(sqlite3_bind_text64(s_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  // SQLITE_STATIC: `value` must outlive the step.
  Status bind_blob(int index, const std::string& value) {
    if (value.size() > static_cast<size_t>(INT_MAX))
      return invalid(path_ + ": " + what_ + ": a record of " + std::to_string(value.size()) + " bytes is too large");
    return check(sqlite3_bind_blob64(s_, index, value.data(), value.size(), SQLITE_STATIC));
  }
  // True: a row is ready; false: the statement is done.
  Result<bool> step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return check(rc);
  }
  // Calls `on_row()` for each row; stops at the first error (of SQLite or of on_row).
  template <typename OnRow>
  Status each_row(OnRow on_row) {
    while (true) {
      auto row = step();
      if (!row) return row.status();
      if (!*row) return Status::ok();
      if (Status s = on_row(); !s) return s;
    }
  }
  // A statement that returns no rows, run once and made ready to run again.
  Status run() {
    auto row = step();
    if (!row) return row.status();
    if (*row) return internal(path_ + ": " + what_ + ": the statement returned a row");
    return check(sqlite3_reset(s_));
  }
  // A kept statement (prepare_kept) run once, its values bound before: reset first (a run
  // that failed may have left it mid-way) and unbound after (a blob bound without a copy
  // must not be pointed at once it is gone).
  Status run_kept() {
    (void)reset();
    Status s = run();
    clear_bindings();
    return s;
  }
  // Ready to be bound and stepped again (after each_row()).
  Status reset() { return check(sqlite3_reset(s_)); }
  // Unbinds every value (a blob bound without a copy must not be pointed at once it is gone).
  void clear_bindings() { sqlite3_clear_bindings(s_); }
  int64_t int64_at(int column) { return sqlite3_column_int64(s_, column); }
  std::string blob_at(int column) {
    const void* data = sqlite3_column_blob(s_, column);
    int size = sqlite3_column_bytes(s_, column);
    return data && size > 0 ? std::string(static_cast<const char*>(data), static_cast<size_t>(size)) : std::string();
  }
  std::string text_at(int column) {
    const unsigned char* text = sqlite3_column_text(s_, column);
    return text ? reinterpret_cast<const char*>(text) : "";
  }

 private:
  Status check(int rc) const { return rc == SQLITE_OK ? Status::ok() : sql_error(db_, rc, path_, what_); }

  sqlite3* db_;
  const std::string& path_;
  std::string what_;
  sqlite3_stmt* s_ = nullptr;
};

}  // namespace hq::store
