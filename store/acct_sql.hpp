// The accounting store's SQL, shared by its two databases (store/accounting_db: SQLite,
// store/pg_accounting_db: PostgreSQL): sacct's selection as a WHERE clause with its values
// (Slurm's windows and per-state conditions), the upserts of job and step rows, and the
// folding of a requeued job's runs into its latest. Placeholders are `?` (PostgreSQL's
// backend numbers them). Pure functions; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "store/acct_store.hpp"

namespace hq::store {

struct Blob {
  std::string bytes;  // bytes as given (job names, accounts, records): compared as BLOB/BYTEA
};
using Bind = std::variant<int64_t, std::string, Blob>;

// A job's end for the time indexes: a job that has not ended sorts after every end, so
// "not ended before S" is one range, `kEndKey >= S` (queries name it exactly so that the
// database uses the expression indexes).
inline constexpr char kEndKey[] = "(CASE WHEN end_time = 0 THEN 9223372036854775807 ELSE end_time END)";

// What an insert of job rows does with a row already there: takes the new one's values.
inline constexpr char kJobsOnConflict[] =
    " ON CONFLICT(cluster, job_id, submit_time) DO UPDATE SET uid=excluded.uid, name=excluded.name, "
    "state=excluded.state, partition=excluded.partition, account=excluded.account, "
    "eligible_time=excluded.eligible_time, start_time=excluded.start_time, end_time=excluded.end_time, "
    "array_job_id=excluded.array_job_id, array_task_id=excluded.array_task_id, record=excluded.record";
// Upserts of `rows` job (or step) rows in one statement: kJobColumns (kStepColumns) values each,
// in the tables' column order.
std::string upsert_jobs_sql(size_t rows);
std::string upsert_steps_sql(size_t rows);
std::string upsert_spans_sql(size_t rows);
inline constexpr size_t kJobColumns = 14, kStepColumns = 5, kSpanColumns = 6;
// The nodes' spans out of service that overlap a window: cluster, the window's end (a span
// begun before it) and start (a span not ended by it).
inline constexpr char kSpansQuery[] =
    "SELECT record FROM node_spans WHERE cluster = ? AND time_start < ? AND (time_end = 0 OR time_end > ?) "
    "ORDER BY node, time_start, state";
inline constexpr char kUpsertShipped[] =
    "INSERT INTO shipped(source, seq) VALUES(?, ?) ON CONFLICT(source) DO UPDATE SET seq = excluded.seq";
inline constexpr char kUpsertModelRow[] =
    "INSERT INTO model(kind, key, body) VALUES(?, ?, ?) ON CONFLICT(kind, key) DO UPDATE SET body = excluded.body";

// kUpsertJob's and kUpsertStep's values for a record.
std::vector<Bind> job_values(const AcctJob& job);
std::vector<Bind> step_values(const AcctJob& step);
std::vector<Bind> span_values(const AcctJob& span);
// kSpansQuery's values for `q` (an end of 0: none).
std::vector<Bind> spans_query_values(const AcctJobQuery& q);

// How a database names a row of `jobs` for -j's sub-selects: SQLite its rowid, PostgreSQL
// the primary key (a row value).
struct RowKey {
  std::string lhs;       // "rowid" | "(cluster, job_id, submit_time)"
  std::string columns;   // "rowid" | "cluster, job_id, submit_time"
  std::string joined;    // the same of the table aliased `j`
};
RowKey sqlite_row_key();
RowKey postgres_row_key();

// sacct's query: SELECT record, job_id, submit_time FROM jobs WHERE ... ORDER BY job id,
// array task, submit time [LIMIT], and its values in order.
struct SqlText {
  std::string sql;
  std::vector<Bind> binds;
};
SqlText job_query(const AcctJobQuery& q, const RowKey& key);

// The rows of job_query, folded: with `latest_only`, a job id's later run replaces its
// earlier (rows come by job id, then submit time). Keys: (job id, submit time) of each kept.
class RowFold {
 public:
  explicit RowFold(bool latest_only) : latest_only_(latest_only) {}
  void add(std::string record, int64_t job_id, int64_t submit_time);
  std::vector<std::string>& records() { return records_; }
  const std::vector<std::pair<int64_t, int64_t>>& keys() const { return keys_; }

 private:
  bool latest_only_;
  std::vector<std::string> records_;
  std::vector<std::pair<int64_t, int64_t>> keys_;
};

}  // namespace hq::store
