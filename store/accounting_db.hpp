// The accounting store's SQLite backend: one row per job (its latest record, an opaque
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
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "core/time.hpp"

struct sqlite3;

namespace hq::store {

class Stmt;  // store/sqlite_util.hpp

struct AcctJob {
  int64_t seq = 0;                 // the source's outbox seq
  std::string cluster;
  uint64_t job_id = 0;
  Time submit_time = 0;
  uint32_t uid = 0;
  std::string name, state, partition, account;
  Time eligible_time = 0, start_time = 0, end_time = 0;
  uint64_t array_job_id = 0;
  int32_t array_task_id = -1;
  std::string record;              // the job as the controller encoded it (a step: the step's)
  int64_t step_id = -1;            // >= 0: a step record of job (job_id, submit_time); the
                                   // other columns are not used
};

// sacct's selection. Zero start/end: not set (see core/sacct_format's window).
struct AcctJobQuery {
  std::string cluster;
  std::vector<std::pair<uint64_t, int32_t>> jobs;  // (id, array task or -1); an id also picks its array's tasks
  std::vector<uint32_t> uids;
  std::vector<std::string> names, states, partitions, accounts;
  Time start = 0, end = 0;
  size_t limit = 0;                // 0: all
  bool started_only = false;       // only jobs that started (fair share's usage)
  bool with_steps = false;         // AccountingLink::query: also the jobs' step records
  bool latest_only = false;        // one row per job id: its latest run (sacct without -D)
};

class AccountingDb {
 public:
  static Result<std::unique_ptr<AccountingDb>> open(const std::string& path);
  ~AccountingDb();
  AccountingDb(const AccountingDb&) = delete;
  AccountingDb& operator=(const AccountingDb&) = delete;

  const std::string& path() const { return path_; }
  // The last seq applied from `source` (0: none).
  Result<int64_t> shipped(const std::string& source);
  // In one transaction: every record of `jobs` past the source's last seq, and the last seq.
  // Returns the source's last seq after it.
  Result<int64_t> apply(const std::string& source, const std::vector<AcctJob>& jobs);
  // The records that match, by job id then array task; with `steps`, also their jobs'
  // step records there (by job, then step id).
  Result<std::vector<std::string>> query(const AcctJobQuery& q, std::vector<std::string>* steps = nullptr);
  // How many jobs are stored (benchmarks, tests).
  Result<int64_t> count();

  // The accounting model's rows ((kind, key) -> bytes; see net/convert_acct.hpp).
  using ModelRows = std::map<std::pair<std::string, std::string>, std::string>;
  Result<ModelRows> load_model();
  // In one transaction: rows of `next` that differ from `before` written, rows gone deleted.
  Status save_model(const ModelRows& before, const ModelRows& next);

 private:
  AccountingDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status create_schema();
  Status migrate();
  Status upsert(Stmt& st, const AcctJob& job);
  Status upsert_step_row(Stmt& st, const AcctJob& step);
  Status steps_of(const std::string& cluster, const std::vector<std::pair<int64_t, int64_t>>& keys,
                  std::vector<std::string>& out);

  sqlite3* db_;
  std::string path_;
};

}  // namespace hq::store
