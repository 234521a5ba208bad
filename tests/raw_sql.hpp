// Runs SQL on a state database behind hq's back, as damage or a stray tool would
// (tests of damaged states only). Fails the current test when SQLite refuses it.
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

}  // namespace hq::test
