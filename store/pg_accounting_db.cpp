// PostgreSQL behind PgAccountingDb (see pg_accounting_db.hpp).
#include "store/pg_accounting_db.hpp"

#include <algorithm>
#include <cstring>
#include <endian.h>
#include <libpq-fe.h>
#include <iterator>
#include <map>
#include <tuple>

namespace hq::store {

// A PGresult, freed with it.
class PgResult {
 public:
  explicit PgResult(PGresult* r) : r_(r) {}
  PgResult(PgResult&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgResult& operator=(PgResult&&) = delete;
  ~PgResult() { PQclear(r_); }
  bool ok() const {
    ExecStatusType st = PQresultStatus(r_);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
  }
  bool copying() const { return PQresultStatus(r_) == PGRES_COPY_IN; }
  std::string sqlstate() const {
    const char* state = r_ ? PQresultErrorField(r_, PG_DIAG_SQLSTATE) : nullptr;
    return state ? state : "";
  }
  std::string error() const {
    std::string why = r_ ? PQresultErrorMessage(r_) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return why;
  }
  int rows() const { return PQntuples(r_); }
  std::string bytes(int row, int col) const {
    return std::string(PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col)));
  }
  // A bigint column in binary form: 8 bytes, network order.
  int64_t int64(int row, int col) const {
    uint64_t v = 0;
    if (PQgetlength(r_, row, col) == 8) std::memcpy(&v, PQgetvalue(r_, row, col), 8);
    return static_cast<int64_t>(be64toh(v));
  }

 private:
  PGresult* r_;
};

namespace {

constexpr int kAcctSchemaVersion = 2;
constexpr Oid kInt8 = 20, kText = 25, kBytea = 17;
// Rows per multi-row upsert: 2,000 jobs (a shipper's batch) are 28,000 parameters
// (PostgreSQL takes 65,535).
constexpr size_t kRowsPerUpsert = 2000;
// The planner's statistics of `jobs` are made again once this many rows, or a fifth of the
// rows there were at the last time, have been written since (autovacuum does it too, but
// only within a minute or so: sacct's -j plans badly on a table grown since).
constexpr int64_t kAnalyzeAfterRows = 20000;
// Keys per steps query: two parameters each.
constexpr size_t kKeysPerQuery = 10000;

// `?` placeholders as PostgreSQL's $1, $2, ... (the shared SQL has no `?` inside literals).
std::string numbered(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + sql.size() / 4);
  int n = 0;
  for (char c : sql) {
    if (c == '?') out += "$" + std::to_string(++n);
    else out += c;
  }
  return out;
}

// The schema: as SQLite's, with PostgreSQL's types (bytes as BYTEA, model keys too).
const std::vector<std::string>& schema() {
  static const std::vector<std::string> statements = {
      "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
      "INSERT INTO meta VALUES('schema_version','" + std::to_string(kAcctSchemaVersion) + "') ON CONFLICT DO NOTHING",
      "CREATE TABLE IF NOT EXISTS shipped(source TEXT PRIMARY KEY, seq BIGINT NOT NULL)",
      "CREATE TABLE IF NOT EXISTS jobs(cluster TEXT NOT NULL, job_id BIGINT NOT NULL, submit_time BIGINT NOT NULL, "
      "uid BIGINT NOT NULL, name BYTEA NOT NULL, state TEXT NOT NULL, partition TEXT NOT NULL, account BYTEA NOT NULL, "
      "eligible_time BIGINT NOT NULL, start_time BIGINT NOT NULL, end_time BIGINT NOT NULL, "
      "array_job_id BIGINT NOT NULL, array_task_id BIGINT NOT NULL, record BYTEA NOT NULL, "
      "PRIMARY KEY(cluster, job_id, submit_time))",
      std::string("CREATE INDEX IF NOT EXISTS jobs_by_user ON jobs(cluster, uid, ") + kEndKey + ")",
      std::string("CREATE INDEX IF NOT EXISTS jobs_by_end ON jobs(cluster, ") + kEndKey + ")",
      "CREATE INDEX IF NOT EXISTS jobs_by_array ON jobs(cluster, array_job_id, array_task_id)",
      "CREATE INDEX IF NOT EXISTS jobs_by_name ON jobs(cluster, name)",
      "CREATE TABLE IF NOT EXISTS model(kind TEXT NOT NULL, key BYTEA NOT NULL, body BYTEA NOT NULL, "
      "PRIMARY KEY(kind, key))",
      "CREATE TABLE IF NOT EXISTS steps(cluster TEXT NOT NULL, job_id BIGINT NOT NULL, submit_time BIGINT NOT NULL, "
      "step_id BIGINT NOT NULL, record BYTEA NOT NULL, PRIMARY KEY(cluster, job_id, submit_time, step_id))",
      "CREATE TABLE IF NOT EXISTS node_spans(cluster TEXT NOT NULL, node BYTEA NOT NULL, time_start BIGINT NOT NULL, "
      "time_end BIGINT NOT NULL, state TEXT NOT NULL, record BYTEA NOT NULL, PRIMARY KEY(cluster, node, time_start, state))"};
  return statements;
}

// libpq's host and port lists ("h1,h2", "p1,p2"; one port for all, or none) as URI hosts:
// "h1:p1,h2:p2".
std::string host_list(const std::string& hosts, const std::string& ports) {
  auto items = [](const std::string& text) {
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t comma; (comma = text.find(',', at)) != std::string::npos; at = comma + 1) out.push_back(text.substr(at, comma - at));
    out.push_back(text.substr(at));
    return out;
  };
  std::vector<std::string> h = items(hosts), p = items(ports);
  std::string out;
  for (size_t i = 0; i < h.size(); ++i) {
    const std::string& port = p.size() == h.size() ? p[i] : p.front();
    out += (i ? "," : "") + h[i] + (port.empty() ? "" : ":" + port);
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PgAccountingDb>> PgAccountingDb::open(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (!options) {
    // libpq's message quotes the URI, password and all: not repeated.
    PQfreemem(error);
    return invalid("the PostgreSQL accounting database's URI is not a valid libpq connection URI "
                   "(postgresql://[USER@]HOST[:PORT][,HOST2...]/DBNAME[?PARAM=VALUE...]; a password belongs "
                   "in ~/.pgpass or PGPASSFILE)");
  }
  std::map<std::string, std::string> parts;  // where it is, without user or password
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (o->val) parts[o->keyword] = o->val;
  PQconninfoFree(options);
  std::unique_ptr<PgAccountingDb> db(new PgAccountingDb(conninfo));
  db->where_ = "postgresql://" + host_list(parts["host"], parts["port"]) + "/" + parts["dbname"];
  return db;  // connected at first use, and again after a failure: a database down now is tried later
}

Status PgAccountingDb::ready() {
  if (Status s = connect(); !s) return s;
  if (schema_ready_) return Status::ok();
  Status s = create_schema();
  schema_ready_ = s.is_ok();
  return s;
}

PgAccountingDb::~PgAccountingDb() { PQfinish(conn_); }

Status PgAccountingDb::connect() {
  if (conn_ && PQstatus(conn_) == CONNECTION_OK) return Status::ok();
  if (conn_) {
    PQreset(conn_);  // again, with the same string: a multi-host one finds the writable server
  } else {
    // Bounded waits unless the URI says otherwise (it comes last, so its values win): a
    // server that stops answering must not hold the store's thread for TCP's minutes.
    const char* keys[] = {"connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
                          "tcp_user_timeout", "dbname", nullptr};
    const char* values[] = {"10", "30", "10", "3", "60000", conninfo_.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  }
  if (!conn_) return unavailable("postgresql: out of memory making a connection");
  if (PQstatus(conn_) != CONNECTION_OK) {
    std::string why = PQerrorMessage(conn_);
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return unavailable("cannot connect to the PostgreSQL accounting database " + where_ + ": " + why);
  }
  // The server's notices ("relation ... already exists, skipping") are not ours to print.
  PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);
  return Status::ok();
}

Result<PgResult> PgAccountingDb::exec(const std::string& sql, const std::vector<Bind>& binds, const char* what) {
  if (Status s = connect(); !s) return s;
  std::vector<Oid> types(binds.size());
  std::vector<uint64_t> numbers(binds.size());  // bigints in binary form: 8 bytes, network order
  std::vector<const char*> values(binds.size());
  std::vector<int> lengths(binds.size()), formats(binds.size());
  for (size_t i = 0; i < binds.size(); ++i) {
    const Bind& b = binds[i];
    if (const auto* n = std::get_if<int64_t>(&b)) {
      types[i] = kInt8;
      numbers[i] = htobe64(static_cast<uint64_t>(*n));
      values[i] = reinterpret_cast<const char*>(&numbers[i]);
      lengths[i] = 8;
      formats[i] = 1;
    } else if (const auto* t = std::get_if<std::string>(&b)) {
      types[i] = kText;
      values[i] = t->c_str();
    } else {
      const std::string& bytes = std::get<Blob>(b).bytes;
      types[i] = kBytea;
      values[i] = bytes.data();
      lengths[i] = static_cast<int>(bytes.size());
      formats[i] = 1;
    }
  }
  PgResult r(PQexecParams(conn_, numbered(sql).c_str(), static_cast<int>(binds.size()), types.data(), values.data(),
                          lengths.data(), formats.data(), /*resultFormat=*/1));
  if (r.ok()) return r;
  std::string message = where_ + ": " + what + ": " + r.error();
  // A connection that broke is made again at the next call; the caller tries again then.
  // So is one that works but cannot serve: a server shutting down (57P), a connection
  // failure (08), a server no longer the primary after a failover (25006, read only).
  std::string state = r.sqlstate();
  if (state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0 || state == "25006") {
    PQfinish(conn_);
    conn_ = nullptr;
    return unavailable(message);
  }
  if (PQstatus(conn_) != CONNECTION_OK) return unavailable(message);
  return io_error(message);
}

Status PgAccountingDb::run(const std::string& sql, const std::vector<Bind>& binds, const char* what) {
  auto r = exec(sql, binds, what);
  return r ? Status::ok() : r.status();
}

template <typename Body>
Status PgAccountingDb::in_transaction(Body body) {
  if (Status s = run("BEGIN", {}, "beginning a transaction"); !s) return s;
  Status s = body();
  if (s) s = run("COMMIT", {}, "committing");
  if (!s && PQstatus(conn_) == CONNECTION_OK) (void)run("ROLLBACK", {}, "rolling back");
  return s;
}

Status PgAccountingDb::create_schema() {
  return in_transaction([&]() -> Status {
    // Several stores starting at once on one database: one makes the tables, the others wait.
    if (Status s = run("SELECT pg_advisory_xact_lock(7236118)", {}, "locking the schema"); !s) return s;
    for (const auto& sql : schema())
      if (Status s = run(sql, {}, "creating the schema"); !s) return s;
    auto version = exec("SELECT value FROM meta WHERE key = 'schema_version'", {}, "reading the schema version");
    if (!version) return version.status();
    std::string v = version->rows() ? version->bytes(0, 0) : "";
    if (v != std::to_string(kAcctSchemaVersion))
      return invalid(where_ + ": schema version '" + v + "' is not one this hq reads (it reads " +
                     std::to_string(kAcctSchemaVersion) + ")");
    return Status::ok();
  });
}

Result<int64_t> PgAccountingDb::shipped(const std::string& source) {
  if (Status ok = ready(); !ok) return ok;
  auto r = exec("SELECT seq FROM shipped WHERE source = ?", {source}, "reading what was shipped");
  if (!r) return r.status();
  return r->rows() ? r->int64(0, 0) : 0;
}

namespace {

void put_be16(std::string& out, uint16_t v) {
  v = htobe16(v);
  out.append(reinterpret_cast<const char*>(&v), 2);
}
void put_be32(std::string& out, uint32_t v) {
  v = htobe32(v);
  out.append(reinterpret_cast<const char*>(&v), 4);
}

// Rows in COPY's binary format: the signature, flags and header extension, then each row's
// field count and fields (length, bytes), then -1.
std::string copy_binary(const std::vector<const AcctJob*>& rows) {
  std::string out("PGCOPY\n\377\r\n\0", 11);
  put_be32(out, 0);
  put_be32(out, 0);
  for (const AcctJob* row : rows) {
    put_be16(out, static_cast<uint16_t>(kJobColumns));
    for (const Bind& b : job_values(*row)) {
      if (const auto* n = std::get_if<int64_t>(&b)) {
        put_be32(out, 8);
        uint64_t v = htobe64(static_cast<uint64_t>(*n));
        out.append(reinterpret_cast<const char*>(&v), 8);
      } else {
        const std::string& bytes = std::holds_alternative<std::string>(b) ? std::get<std::string>(b) : std::get<Blob>(b).bytes;
        put_be32(out, static_cast<uint32_t>(bytes.size()));
        out += bytes;
      }
    }
  }
  put_be16(out, 0xffff);
  return out;
}

}  // namespace

// A batch's job rows: copied (COPY, binary) into a staging table of this session, emptied at
// each commit, and upserted from it in one statement; several times faster than the rows
// as parameters.
Status PgAccountingDb::copy_job_rows(const std::vector<const AcctJob*>& rows) {
  if (rows.empty()) return Status::ok();
  if (Status s = run("CREATE TEMP TABLE IF NOT EXISTS jobs_in (LIKE jobs) ON COMMIT DELETE ROWS", {}, "staging job records");
      !s)
    return s;
  std::string data = copy_binary(rows);
  std::string failed;
  {
    PgResult start(PQexec(conn_, "COPY jobs_in FROM STDIN (FORMAT binary)"));
    if (!start.copying()) failed = start.error();
  }
  if (failed.empty()) {
    // In pieces of at most 1 MiB (PQputCopyData takes an int's length); always ended, so
    // the server leaves COPY mode whatever failed.
    constexpr size_t kPiece = 1 << 20;
    for (size_t at = 0; at < data.size() && failed.empty(); at += kPiece)
      if (PQputCopyData(conn_, data.data() + at, static_cast<int>(std::min(kPiece, data.size() - at))) != 1)
        failed = PQerrorMessage(conn_);
    if (PQputCopyEnd(conn_, failed.empty() ? nullptr : "hq: sending the rows failed") != 1 && failed.empty())
      failed = PQerrorMessage(conn_);
    while (PGresult* r = PQgetResult(conn_)) {
      PgResult result(r);
      if (result.copying()) break;  // still in COPY mode: the connection is past saving
      if (failed.empty() && !result.ok()) failed = result.error();
    }
  }
  if (!failed.empty()) {
    std::string message = where_ + ": staging job records: " + failed;
    return PQstatus(conn_) != CONNECTION_OK ? unavailable(message) : io_error(message);
  }
  return run(std::string("INSERT INTO jobs SELECT * FROM jobs_in") + kJobsOnConflict, {}, "storing job records");
}

Status PgAccountingDb::upsert_rows(const std::vector<const AcctJob*>& rows, bool spans) {
  for (size_t at = 0; at < rows.size(); at += kRowsPerUpsert) {
    size_t n = std::min(kRowsPerUpsert, rows.size() - at);
    std::vector<Bind> binds;
    binds.reserve(n * (spans ? kSpanColumns : kStepColumns));
    for (size_t i = at; i < at + n; ++i) {
      auto values = spans ? span_values(*rows[i]) : step_values(*rows[i]);
      std::move(values.begin(), values.end(), std::back_inserter(binds));
    }
    if (Status s = run(spans ? upsert_spans_sql(n) : upsert_steps_sql(n), binds,
                       spans ? "storing nodes' spans" : "storing step records");
        !s)
      return s;
  }
  return Status::ok();
}

Result<std::vector<std::string>> PgAccountingDb::node_spans(const AcctJobQuery& q) {
  if (Status ok = ready(); !ok) return ok;
  auto r = exec(kSpansQuery, spans_query_values(q), "reading nodes' spans");
  if (!r) return r.status();
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(r->rows()));
  for (int i = 0; i < r->rows(); ++i) out.push_back(r->bytes(i, 0));
  return out;
}

Result<int64_t> PgAccountingDb::apply(const std::string& source, const std::vector<AcctJob>& jobs) {
  if (Status ok = ready(); !ok) return ok;
  int64_t seq = 0, written = 0;
  Status s = in_transaction([&]() -> Status {
    // The source's row locked: two stores given the same journal's records apply them in turn.
    auto last = exec("SELECT seq FROM shipped WHERE source = ? FOR UPDATE", {source}, "reading what was shipped");
    if (!last) return last.status();
    seq = last->rows() ? last->int64(0, 0) : 0;
    // One statement may change a row once: a batch's records of one job (or step) fold
    // into the last, which is what applying them in order leaves.
    using Key = std::tuple<std::string, uint64_t, Time, int64_t>;
    using SpanKey = std::tuple<std::string, std::string, Time, std::string>;
    std::map<Key, const AcctJob*> latest;
    std::map<SpanKey, const AcctJob*> spans;
    for (const auto& job : jobs) {
      if (job.seq <= seq) continue;  // applied before: shipped again after a restart
      if (job.node_span) spans[SpanKey{job.cluster, job.name, job.start_time, job.state}] = &job;
      else latest[Key{job.cluster, job.job_id, job.submit_time, job.step_id}] = &job;
      seq = std::max(seq, job.seq);
    }
    std::vector<const AcctJob*> job_rows, step_rows, span_rows;
    for (const auto& [key, job] : latest) (job->step_id >= 0 ? step_rows : job_rows).push_back(job);
    for (const auto& [key, span] : spans) span_rows.push_back(span);
    if (Status st = copy_job_rows(job_rows); !st) return st;
    if (Status st = upsert_rows(step_rows, false); !st) return st;
    if (Status st = upsert_rows(span_rows, true); !st) return st;
    written = static_cast<int64_t>(job_rows.size());
    return run(kUpsertShipped, {source, seq}, "recording what was shipped");
  });
  if (!s) return s;
  written_since_analyze_ += written;
  if (written_since_analyze_ >= std::max(kAnalyzeAfterRows, rows_at_analyze_ / 5)) {
    // Best effort: the records are stored whatever this does.
    if (auto n = exec("SELECT COUNT(*) FROM jobs", {}, "counting job records"); n && run("ANALYZE jobs(cluster, job_id, uid, array_job_id, eligible_time, end_time)", {}, "analyzing"))
      rows_at_analyze_ = n->int64(0, 0);
    written_since_analyze_ = 0;
  }
  return seq;
}

Result<std::vector<std::string>> PgAccountingDb::query(const AcctJobQuery& q, std::vector<std::string>* steps) {
  if (Status ok = ready(); !ok) return ok;
  SqlText text = job_query(q, postgres_row_key());
  auto r = exec(text.sql, text.binds, "reading job records");
  if (!r) return r.status();
  RowFold rows(q.latest_only);
  for (int i = 0; i < r->rows(); ++i) rows.add(r->bytes(i, 0), r->int64(i, 1), r->int64(i, 2));
  if (steps)
    if (Status s = steps_of(q.cluster, rows.keys(), *steps); !s) return s;
  return std::move(rows.records());
}

// The step records of the jobs `keys` (job id, submit time; by job id), by job then step id.
Status PgAccountingDb::steps_of(const std::string& cluster, const std::vector<std::pair<int64_t, int64_t>>& keys,
                                std::vector<std::string>& out) {
  for (size_t at = 0; at < keys.size(); at += kKeysPerQuery) {
    size_t n = std::min(kKeysPerQuery, keys.size() - at);
    std::vector<Bind> binds;
    std::string values;
    for (size_t i = at; i < at + n; ++i) {
      values += values.empty() ? "(?,?)" : ",(?,?)";
      binds.emplace_back(keys[i].first);
      binds.emplace_back(keys[i].second);
    }
    binds.emplace_back(cluster);
    auto r = exec("SELECT s.record FROM steps AS s JOIN (VALUES " + values +
                      ") AS k(job_id, submit_time) ON s.job_id = k.job_id AND s.submit_time = k.submit_time "
                      "WHERE s.cluster = ? ORDER BY s.job_id, s.submit_time, s.step_id",
                  binds, "reading step records");
    if (!r) return r.status();
    for (int i = 0; i < r->rows(); ++i) out.push_back(r->bytes(i, 0));
  }
  return Status::ok();
}

Result<int64_t> PgAccountingDb::count() {
  if (Status ok = ready(); !ok) return ok;
  auto r = exec("SELECT COUNT(*) FROM jobs", {}, "counting job records");
  if (!r) return r.status();
  return r->int64(0, 0);
}

Result<AcctStore::ModelRows> PgAccountingDb::load_model() {
  if (Status ok = ready(); !ok) return ok;
  auto r = exec("SELECT kind, key, body FROM model", {}, "reading the accounting model");
  if (!r) return r.status();
  ModelRows rows;
  for (int i = 0; i < r->rows(); ++i) rows[{r->bytes(i, 0), r->bytes(i, 1)}] = r->bytes(i, 2);
  return rows;
}

Status PgAccountingDb::save_model(const ModelRows& before, const ModelRows& next) {
  if (Status ok = ready(); !ok) return ok;
  const auto change = model_change(before, next);  // (gone or changed, new or changed); no bindings:
  return in_transaction([&]() -> Status {            // clang 14 captures none in a lambda
    for (const auto& [key, body] : change.second)
      if (Status s = run(kUpsertModelRow, {key.first, Blob{key.second}, Blob{body}}, "storing the accounting model"); !s)
        return s;
    for (const auto& [key, body] : change.first) {
      if (change.second.count(key)) continue;
      if (Status s = run("DELETE FROM model WHERE kind = ? AND key = ?", {key.first, Blob{key.second}},
                         "storing the accounting model");
          !s)
        return s;
    }
    return Status::ok();
  });
}

}  // namespace hq::store
