// Runs SQL on a state database behind hq's back, as damage or a stray tool would
// (tests of damaged states and of schema upgrades). Fails the current test when SQLite refuses it.
#pragma once
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <string>

namespace hq::test {

inline void raw_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, msg);
}

// Column `column` of the first row of `sql` as text ("" when there is no row).
inline std::string raw_scalar(const std::string& path, const std::string& sql, int column = 0) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr);
  std::string out, msg = sqlite3_errmsg(db);
  if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, column))
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, column));
  sqlite3_finalize(st);
  sqlite3_close(db);
  REQUIRE_MESSAGE(rc == SQLITE_OK, msg);
  return out;
}

}  // namespace hq::test
