// The accounting store's SQLite backend (an AcctStore): one row per job (its latest record, an opaque
// blob, with the columns sacct selects on), and per source (a controller's journal) the
// last record applied, so that records shipped again are skipped: each arrives once.
// Schema (version 2): meta(schema_version), shipped(source, seq), jobs keyed by (cluster,
// job id, submit time) with indexes led by the cluster for sacct's query shapes (user and
// end, end, array and task, name), steps keyed by (cluster, job id, submit time, step id);
// a version-1 file gets version 2's indexes and tables at open. WAL, synchronous=FULL: the
// controller forgets its outbox records once apply() has returned, so each commit is synced
// before apply() returns (with NORMAL a power cut could undo a commit both sides let go of).
// Threads: one owner thread (the accounting worker); not thread-safe.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "core/time.hpp"
#include "store/acct_sql.hpp"
#include "store/acct_store.hpp"

struct sqlite3;

namespace hq::store {

class Stmt;  // store/sqlite_util.hpp

class AccountingDb final : public AcctStore {
 public:
  static Result<std::unique_ptr<AccountingDb>> open(const std::string& path);
  ~AccountingDb() override;
  AccountingDb(const AccountingDb&) = delete;
  AccountingDb& operator=(const AccountingDb&) = delete;

  const std::string& path() const { return path_; }
  std::string where() const override { return path_; }
  // The last seq applied from `source` (0: none).
  Result<int64_t> shipped(const std::string& source) override;
  // In one transaction: every record of `jobs` past the source's last seq, and the last seq.
  // Returns the source's last seq after it.
  Result<int64_t> apply(const std::string& source, const std::vector<AcctJob>& jobs) override;
  // The records that match, by job id then array task; with `steps`, also their jobs'
  // step records there (by job, then step id).
  Result<std::vector<std::string>> query(const AcctJobQuery& q, std::vector<std::string>* steps = nullptr) override;
  // How many jobs are stored (benchmarks, tests).
  Result<int64_t> count() override;
  Result<std::vector<std::string>> node_spans(const AcctJobQuery& q) override;

  Result<ModelRows> load_model() override;
  // In one transaction: rows of `next` that differ from `before` written, rows gone deleted.
  Status save_model(const ModelRows& before, const ModelRows& next) override;

 private:
  AccountingDb(sqlite3* db, std::string path);
  Status create_schema();
  Status migrate();
  Status upsert_values(Stmt& st, const std::vector<Bind>& values);
  struct Kept;  // the statements every apply() runs
  Result<Kept*> kept();
  Status steps_of(const std::string& cluster, const std::vector<std::pair<int64_t, int64_t>>& keys,
                  std::vector<std::string>& out);

  sqlite3* db_;
  std::string path_;
  // Compiled at the first apply() and kept (SQLite's parser was half of the shipping
  // thread's CPU when batches were a record or two); dropped after a failed apply.
  std::unique_ptr<Kept> kept_;
};

}  // namespace hq::store
