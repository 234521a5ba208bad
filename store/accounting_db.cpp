// SQLite behind AccountingDb (see accounting_db.hpp).
#include "store/accounting_db.hpp"

#include <variant>

#include "store/acct_sql.hpp"
#include "store/sqlite_util.hpp"

namespace hq::store {
namespace {

// Version 2: indexes led by the cluster, on the end key, and IN lists in queries.
constexpr int kAcctSchemaVersion = 2;

Status bind_all(Stmt& st, const std::vector<Bind>& binds) {
  for (size_t i = 0; i < binds.size(); ++i) {
    int index = static_cast<int>(i + 1);
    const Bind& v = binds[i];
    Status s = std::holds_alternative<int64_t>(v)       ? st.bind_int64(index, std::get<int64_t>(v))
               : std::holds_alternative<std::string>(v) ? st.bind_text(index, std::get<std::string>(v))
                                                        : st.bind_blob(index, std::get<Blob>(v).bytes);
    if (!s) return s;
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<AccountingDb>> AccountingDb::open(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<AccountingDb> db(new AccountingDb(raw, path));
  if (rc != SQLITE_OK) return sql_error(raw, rc, path, "cannot open the accounting database");
  if (int brc = sqlite3_busy_timeout(raw, 5000); brc != SQLITE_OK) return sql_error(raw, brc, path, "busy timeout");
  // 64 MiB of page cache: the indexes of a million jobs stay in memory as records arrive.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA cache_size=-65536"})
    if (Status s = exec_sql(raw, path, pragma); !s) return s;
  if (Status s = db->create_schema(); !s) return s;
  return db;
}

AccountingDb::AccountingDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

AccountingDb::~AccountingDb() {
  kept_.reset();  // finalized first: SQLite does not close a database with statements left
  sqlite3_close(db_);
}

Status AccountingDb::create_schema() {
  if (Status s = exec_sql(db_, path_, "BEGIN IMMEDIATE"); !s) return s;
  Status s = migrate();
  s = s ? exec_sql(db_, path_, "COMMIT") : s;
  if (!s) (void)exec_sql(db_, path_, "ROLLBACK");
  return s;
}

// Inside create_schema's transaction: the version checked before anything changes, then
// every table and index of this version made, version 1's indexes replaced.
Status AccountingDb::migrate() {
  const std::string version = std::to_string(kAcctSchemaVersion);
  for (const std::string& sql : {std::string("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)"),
                                 "INSERT OR IGNORE INTO meta VALUES('schema_version','" + version + "')"})
    if (Status s = exec_sql(db_, path_, sql); !s) return s;
  {
    Stmt st(db_, path_, "reading the schema version");
    if (Status s = st.prepare("SELECT value FROM meta WHERE key='schema_version'"); !s) return s;
    auto row = st.step();
    if (!row) return row.status();
    if (!*row || st.int64_at(0) < 1 || st.int64_at(0) > kAcctSchemaVersion)
      return invalid(path_ + ": schema version '" + (*row ? st.text_at(0) : "") + "' is not one this hq reads (it reads " +
                     version + ")");
  }
  const std::vector<std::string> statements = {
      "CREATE TABLE IF NOT EXISTS shipped(source TEXT PRIMARY KEY, seq INTEGER NOT NULL)",
      "CREATE TABLE IF NOT EXISTS jobs(cluster TEXT NOT NULL, job_id INTEGER NOT NULL, submit_time INTEGER NOT NULL, "
      "uid INTEGER NOT NULL, name BLOB NOT NULL, state TEXT NOT NULL, partition TEXT NOT NULL, account BLOB NOT NULL, "
      "eligible_time INTEGER NOT NULL, start_time INTEGER NOT NULL, end_time INTEGER NOT NULL, "
      "array_job_id INTEGER NOT NULL, array_task_id INTEGER NOT NULL, record BLOB NOT NULL, "
      "PRIMARY KEY(cluster, job_id, submit_time))",
      // version 1's indexes, which did not lead with the cluster
      "DROP INDEX IF EXISTS jobs_user", "DROP INDEX IF EXISTS jobs_end", "DROP INDEX IF EXISTS jobs_array",
      "DROP INDEX IF EXISTS jobs_name",
      std::string("CREATE INDEX IF NOT EXISTS jobs_by_user ON jobs(cluster, uid, ") + kEndKey + ")",
      std::string("CREATE INDEX IF NOT EXISTS jobs_by_end ON jobs(cluster, ") + kEndKey + ")",
      "CREATE INDEX IF NOT EXISTS jobs_by_array ON jobs(cluster, array_job_id, array_task_id)",
      "CREATE INDEX IF NOT EXISTS jobs_by_name ON jobs(cluster, name)",
      "CREATE TABLE IF NOT EXISTS model(kind TEXT NOT NULL, key TEXT NOT NULL, body BLOB NOT NULL, "
      "PRIMARY KEY(kind, key))",
      // Added within version 2 (an hq before it ignores the table): the jobs' ended steps.
      "CREATE TABLE IF NOT EXISTS steps(cluster TEXT NOT NULL, job_id INTEGER NOT NULL, submit_time INTEGER NOT NULL, "
      "step_id INTEGER NOT NULL, record BLOB NOT NULL, PRIMARY KEY(cluster, job_id, submit_time, step_id)) WITHOUT ROWID",
      // Added within version 2 too: the nodes' spans out of service (Slurm's node events).
      "CREATE TABLE IF NOT EXISTS node_spans(cluster TEXT NOT NULL, node BLOB NOT NULL, time_start INTEGER NOT NULL, "
      "time_end INTEGER NOT NULL, state TEXT NOT NULL, record BLOB NOT NULL, PRIMARY KEY(cluster, node, time_start, state))",
      "UPDATE meta SET value = '" + version + "' WHERE key = 'schema_version'"};
  for (const auto& sql : statements)
    if (Status s = exec_sql(db_, path_, sql); !s) return s;
  return Status::ok();
}

struct AccountingDb::Kept {
  Kept(sqlite3* db, const std::string& path)
      : begin(db, path, "beginning a transaction"),
        commit(db, path, "committing"),
        shipped(db, path, "reading what was shipped"),
        upsert_job(db, path, "storing a job record"),
        upsert_step(db, path, "storing a step record"),
        upsert_span(db, path, "storing a node's span"),
        record_shipped(db, path, "recording what was shipped") {}
  Status prepare() {
    for (auto [st, sql] : {std::pair{&begin, std::string("BEGIN IMMEDIATE")}, std::pair{&commit, std::string("COMMIT")},
                           std::pair{&shipped, std::string("SELECT seq FROM shipped WHERE source = ?")},
                           std::pair{&upsert_job, upsert_jobs_sql(1)}, std::pair{&upsert_step, upsert_steps_sql(1)},
                           std::pair{&upsert_span, upsert_spans_sql(1)},
                           std::pair{&record_shipped, std::string(kUpsertShipped)}})
      if (Status s = st->prepare_kept(sql.c_str()); !s) return s;
    return Status::ok();
  }
  Stmt begin, commit, shipped, upsert_job, upsert_step, upsert_span, record_shipped;
};

Result<AccountingDb::Kept*> AccountingDb::kept() {
  if (kept_) return kept_.get();
  auto k = std::make_unique<Kept>(db_, path_);
  if (Status s = k->prepare(); !s) return s;
  kept_ = std::move(k);
  return kept_.get();
}

Result<int64_t> AccountingDb::shipped(const std::string& source) {
  auto k = kept();
  if (!k) return k.status();
  Stmt& st = (*k)->shipped;
  (void)st.reset();
  if (Status s = st.bind_text(1, source); !s) return s;
  auto row = st.step();
  if (!row) return row.status();
  int64_t seq = *row ? st.int64_at(0) : 0;
  (void)st.reset();
  return seq;
}

Result<int64_t> AccountingDb::apply(const std::string& source, const std::vector<AcctJob>& jobs) {
  auto k = kept();
  if (!k) return k.status();
  Kept& statements = **k;
  if (Status s = statements.begin.run_kept(); !s) return s;
  auto done = [&](Status s) -> Status {
    if (s) s = statements.commit.run_kept();
    if (!s) {
      (void)exec_sql(db_, path_, "ROLLBACK");
      kept_.reset();  // compiled again next time, in case what failed was a statement
    }
    return s;
  };
  auto last = shipped(source);
  if (!last) return done(last.status());
  int64_t seq = *last;
  for (const auto& job : jobs) {
    if (job.seq <= seq) continue;  // applied before: shipped again after a restart
    Status s = job.node_span      ? upsert_values(statements.upsert_span, span_values(job))
               : job.step_id >= 0 ? upsert_values(statements.upsert_step, step_values(job))
                                  : upsert_values(statements.upsert_job, job_values(job));
    if (!s) return done(s);
    seq = job.seq;
  }
  Stmt& st = statements.record_shipped;
  Status s = st.bind_text(1, source);
  if (s) s = st.bind_int64(2, seq);
  if (s) s = st.run_kept();
  if (Status d = done(s); !d) return d;
  return seq;
}

Status AccountingDb::upsert_values(Stmt& st, const std::vector<Bind>& values) {
  if (Status s = bind_all(st, values); !s) return s;  // blobs bind without a copy: `values` outlives the run
  return st.run_kept();
}

Result<std::vector<std::string>> AccountingDb::node_spans(const AcctJobQuery& q) {
  Stmt st(db_, path_, "reading nodes' spans");
  if (Status s = st.prepare(kSpansQuery); !s) return s;
  const std::vector<Bind> values = spans_query_values(q);  // bound without a copy: kept while stepping
  if (Status s = bind_all(st, values); !s) return s;
  std::vector<std::string> out;
  while (true) {
    auto row = st.step();
    if (!row) return row.status();
    if (!*row) return out;
    out.push_back(st.blob_at(0));
  }
}

Result<std::vector<std::string>> AccountingDb::query(const AcctJobQuery& q, std::vector<std::string>* steps) {
  SqlText text = job_query(q, sqlite_row_key());
  Stmt st(db_, path_, "reading job records");
  if (Status s = st.prepare(text.sql.c_str()); !s) return s;
  if (Status s = bind_all(st, text.binds); !s) return s;
  RowFold rows(q.latest_only);
  Status s = st.each_row([&] {
    rows.add(st.blob_at(0), st.int64_at(1), st.int64_at(2));
    return Status::ok();
  });
  if (!s) return s;
  if (steps)
    if (Status ss = steps_of(q.cluster, rows.keys(), *steps); !ss) return ss;
  return std::move(rows.records());
}

// The step records of the jobs `keys` (job id, submit time), by job then step id.
Status AccountingDb::steps_of(const std::string& cluster, const std::vector<std::pair<int64_t, int64_t>>& keys,
                              std::vector<std::string>& out) {
  Stmt st(db_, path_, "reading step records");
  if (Status s = st.prepare("SELECT record FROM steps WHERE cluster = ? AND job_id = ? AND submit_time = ? ORDER BY step_id"); !s)
    return s;
  for (auto [job_id, submit] : keys) {
    if (Status s = bind_all(st, {cluster, job_id, submit}); !s) return s;
    Status s = st.each_row([&] {
      out.push_back(st.blob_at(0));
      return Status::ok();
    });
    if (!s) return s;
    if (Status r = st.reset(); !r) return r;
  }
  return Status::ok();
}

Result<int64_t> AccountingDb::count() {
  Stmt st(db_, path_, "counting job records");
  if (Status s = st.prepare("SELECT COUNT(*) FROM jobs"); !s) return s;
  auto row = st.step();
  if (!row) return row.status();
  return *row ? st.int64_at(0) : 0;
}

Result<AccountingDb::ModelRows> AccountingDb::load_model() {
  Stmt st(db_, path_, "reading the accounting model");
  if (Status s = st.prepare("SELECT kind, key, body FROM model"); !s) return s;
  ModelRows rows;
  Status s = st.each_row([&] {
    rows[{st.text_at(0), st.text_at(1)}] = st.blob_at(2);
    return Status::ok();
  });
  if (!s) return s;
  return rows;
}

Status AccountingDb::save_model(const ModelRows& before, const ModelRows& next) {
  if (Status s = exec_sql(db_, path_, "BEGIN IMMEDIATE"); !s) return s;
  auto done = [&](Status s) -> Status {
    if (s) s = exec_sql(db_, path_, "COMMIT");
    if (!s) (void)exec_sql(db_, path_, "ROLLBACK");
    return s;
  };
  const auto change = model_change(before, next);  // (gone or changed, new or changed), as PostgreSQL's
  for (const auto& [key, body] : change.second) {
    Stmt st(db_, path_, "storing the accounting model");
    Status s = st.prepare(kUpsertModelRow);
    const std::vector<Bind> binds = {key.first, key.second, Blob{body}};  // blobs bind without a copy: keep them
    if (s) s = bind_all(st, binds);
    if (s) s = st.run();
    if (!s) return done(s);
  }
  for (const auto& [key, body] : change.first) {
    if (change.second.count(key)) continue;
    Stmt st(db_, path_, "storing the accounting model");
    Status s = st.prepare("DELETE FROM model WHERE kind = ? AND key = ?");
    if (s) s = bind_all(st, {key.first, key.second});
    if (s) s = st.run();
    if (!s) return done(s);
  }
  return done(Status::ok());
}

}  // namespace hq::store
