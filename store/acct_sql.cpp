// The accounting store's shared SQL (see acct_sql.hpp).
#include "store/acct_sql.hpp"

#include <type_traits>

namespace hq::store {
namespace {

// "col IN (?, ?, ...)" with the values added to `binds` (an IN list, not a chain of ORs:
// SQLite's expression trees are at most 1,000 deep).
template <typename T>
std::string any_of(const std::string& column, const std::vector<T>& values, std::vector<Bind>& binds, bool blob = false) {
  std::string sql = column + " IN (";
  for (size_t i = 0; i < values.size(); ++i) {
    sql += i ? ",?" : "?";
    if constexpr (std::is_integral_v<T>) binds.emplace_back(static_cast<int64_t>(values[i]));
    else if (blob) binds.emplace_back(Blob{values[i]});
    else binds.emplace_back(values[i]);
  }
  return sql + ")";
}

// The rows -j names, each part planned on its own index: jobs by id (the primary key),
// whole arrays by their id and single tasks by (array id, task) (jobs_by_array).
std::string jobs_clause(const AcctJobQuery& q, const RowKey& key, std::vector<Bind>& binds) {
  std::vector<int64_t> ids;
  std::vector<std::pair<int64_t, int64_t>> tasks;
  for (auto [id, task] : q.jobs) {
    if (task >= 0) tasks.emplace_back(static_cast<int64_t>(id), task);
    else ids.push_back(static_cast<int64_t>(id));
  }
  std::vector<std::string> parts;
  if (!ids.empty()) {
    binds.emplace_back(q.cluster);
    parts.push_back("SELECT " + key.columns + " FROM jobs WHERE cluster = ? AND " + any_of("job_id", ids, binds));
    binds.emplace_back(q.cluster);
    parts.push_back("SELECT " + key.columns + " FROM jobs WHERE cluster = ? AND " + any_of("array_job_id", ids, binds));
  }
  if (!tasks.empty()) {
    std::string values;
    for (auto [id, task] : tasks) {
      values += values.empty() ? "(?,?)" : ",(?,?)";
      binds.emplace_back(id);
      binds.emplace_back(task);
    }
    binds.emplace_back(q.cluster);
    parts.push_back("SELECT " + key.joined + " FROM (VALUES " + values +
                    ") AS t JOIN jobs AS j ON j.cluster = ? AND j.array_job_id = t.column1 AND j.array_task_id = t.column2");
  }
  std::string sql = key.lhs + " IN (";
  for (size_t i = 0; i < parts.size(); ++i) sql += (i ? " UNION ALL " : "") + parts[i];
  return sql + ")";
}

// Slurm's _state_time_string: a state within the window [S, E].
std::string state_clause(const std::string& state, Time s, Time e, std::vector<Bind>& binds) {
  if (!s && !e) {
    binds.emplace_back(state);
    return "state = ?";
  }
  if (state == "PENDING") {
    binds.insert(binds.end(), {Bind{s}, Bind{s}, Bind{state}, Bind{e}});
    return "(eligible_time > 0 AND ((start_time > 0 AND ? < start_time) OR (start_time = 0 AND end_time > 0 AND ? < "
           "end_time) OR (start_time = 0 AND end_time = 0 AND state = ?)) AND ? > eligible_time)";
  }
  binds.insert(binds.end(), {Bind{state}, Bind{s}, Bind{e}});
  if (state == "RUNNING" || state == "SUSPENDED") {
    // the job was in it (RUNNING: it ran) during the window
    return "(state = ? AND start_time > 0 AND (end_time = 0 OR ? < end_time) AND ? > start_time)";
  }
  return std::string("(state = ? AND end_time > 0 AND ") + kEndKey + " BETWEEN ? AND ?)";
}

// Slurm's window without states: eligible (before E) and not ended before S.
std::string window_clause(Time s, Time e, std::vector<Bind>& binds) {
  std::string sql = "(eligible_time > 0";
  if (e) {
    sql += " AND eligible_time <= ?";
    binds.emplace_back(e);
  }
  if (s) {  // (Slurm 22.05 leaves held jobs, never eligible, out of this one too)
    sql += std::string(" AND ") + kEndKey + " >= ?";
    binds.emplace_back(s);
  }
  return sql + ")";
}

}  // namespace

std::vector<Bind> job_values(const AcctJob& job) {
  return {job.cluster,      static_cast<int64_t>(job.job_id), job.submit_time, int64_t{job.uid},
          Blob{job.name},   job.state,                        job.partition,   Blob{job.account},
          job.eligible_time, job.start_time,                  job.end_time,    static_cast<int64_t>(job.array_job_id),
          int64_t{job.array_task_id}, Blob{job.record}};
}

std::vector<Bind> step_values(const AcctJob& step) {
  return {step.cluster, static_cast<int64_t>(step.job_id), step.submit_time, step.step_id, Blob{step.record}};
}

std::vector<Bind> span_values(const AcctJob& span) {
  return {span.cluster, Blob{span.name}, span.start_time, span.end_time, span.state, Blob{span.record}};
}

std::vector<Bind> spans_query_values(const AcctJobQuery& q) {
  return {q.cluster, q.end > 0 ? q.end : int64_t{INT64_MAX}, q.start};
}

namespace {
std::string values_rows(size_t rows, size_t columns) {
  std::string one = "(";
  for (size_t c = 0; c < columns; ++c) one += c ? ",?" : "?";
  one += ")";
  std::string out;
  for (size_t r = 0; r < rows; ++r) out += (r ? "," : "") + one;
  return out;
}
}  // namespace

std::string upsert_jobs_sql(size_t rows) {
  return "INSERT INTO jobs(cluster, job_id, submit_time, uid, name, state, partition, account, eligible_time, "
         "start_time, end_time, array_job_id, array_task_id, record) VALUES" +
         values_rows(rows, kJobColumns) + kJobsOnConflict;
}

std::string upsert_steps_sql(size_t rows) {
  return "INSERT INTO steps(cluster, job_id, submit_time, step_id, record) VALUES" + values_rows(rows, kStepColumns) +
         " ON CONFLICT(cluster, job_id, submit_time, step_id) DO UPDATE SET record=excluded.record";
}

std::string upsert_spans_sql(size_t rows) {
  return "INSERT INTO node_spans(cluster, node, time_start, time_end, state, record) VALUES" +
         values_rows(rows, kSpanColumns) +
         " ON CONFLICT(cluster, node, time_start, state) DO UPDATE SET time_end=excluded.time_end, "
         "record=excluded.record";
}

RowKey sqlite_row_key() { return {"rowid", "rowid", "j.rowid"}; }
RowKey postgres_row_key() {
  return {"(cluster, job_id, submit_time)", "cluster, job_id, submit_time", "j.cluster, j.job_id, j.submit_time"};
}

SqlText job_query(const AcctJobQuery& q, const RowKey& key) {
  // With -j the ids drive the query (each part of jobs_clause names the cluster); a
  // `cluster = ?` here would let the database scan the cluster's rows instead.
  SqlText out;
  std::vector<Bind>& binds = out.binds;
  std::string& sql = out.sql;
  sql = "SELECT record, job_id, submit_time FROM jobs WHERE ";
  if (!q.jobs.empty()) {
    sql += jobs_clause(q, key, binds);
  } else {
    sql += "cluster = ?";
    binds.emplace_back(q.cluster);
  }
  if (!q.uids.empty()) sql += " AND " + any_of("uid", q.uids, binds);
  if (!q.names.empty()) sql += " AND " + any_of("name", q.names, binds, true);
  if (!q.partitions.empty()) sql += " AND " + any_of("partition", q.partitions, binds);
  if (!q.accounts.empty()) sql += " AND " + any_of("account", q.accounts, binds, true);
  if (!q.states.empty()) {
    std::string states;
    for (const auto& state : q.states) states += (states.empty() ? "" : " OR ") + state_clause(state, q.start, q.end, binds);
    sql += " AND (" + states + ")";
  } else if (q.start || q.end) {
    sql += " AND " + window_clause(q.start, q.end, binds);
  }
  if (q.started_only) sql += " AND start_time > 0";
  sql += " ORDER BY job_id, array_task_id, submit_time";
  if (q.limit) sql += " LIMIT " + std::to_string(q.limit);
  return out;
}

void RowFold::add(std::string record, int64_t job_id, int64_t submit_time) {
  if (latest_only_ && !keys_.empty() && keys_.back().first == job_id) {  // a later run of the same job
    records_.pop_back();
    keys_.pop_back();
  }
  records_.push_back(std::move(record));
  keys_.emplace_back(job_id, submit_time);
}

}  // namespace hq::store
