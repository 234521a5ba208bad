// What the controller needs of an accounting store, whichever holds it: SQLite in this
// process (store/accounting_db), or a separate `hq accounting` daemon reached over the
// network (cmd/accounting/remote_store). Records are applied per source (a controller's journal) past
// the last seq the store has of it, so a batch sent twice is applied once.
// Threads: an implementation is used from one thread at a time (the accounting worker).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "core/time.hpp"

namespace hq::store {

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
  bool node_span = false;          // a node's span out of service (pb::NodeSpanRecord): name is
                                   // the node, start/end_time the span (end 0: still), state
                                   // DOWN or DRAIN; kept by (cluster, node, start, state)
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


class AcctStore {
 public:
  // The accounting model's rows ((kind, key) -> bytes; see net/convert_acct.hpp).
  using ModelRows = std::map<std::pair<std::string, std::string>, std::string>;

  virtual ~AcctStore() = default;
  // Where the store is, for messages: a file, or host:port.
  virtual std::string where() const = 0;
  // The last seq applied from `source` (0: none).
  virtual Result<int64_t> shipped(const std::string& source) = 0;
  // In one durable transaction: every record of `jobs` past the source's last seq, and the
  // last seq. Returns the source's last seq after it.
  virtual Result<int64_t> apply(const std::string& source, const std::vector<AcctJob>& jobs) = 0;
  // The records that match, by job id then array task; with `steps`, also their jobs'
  // step records there (by job, then step id).
  virtual Result<std::vector<std::string>> query(const AcctJobQuery& q, std::vector<std::string>* steps = nullptr) = 0;
  // How many jobs are stored (benchmarks, tests).
  virtual Result<int64_t> count() = 0;
  // The nodes' spans out of service on `q.cluster` that overlap [q.start, q.end) (0: open),
  // by node then start: their records (pb::NodeSpanRecord).
  virtual Result<std::vector<std::string>> node_spans(const AcctJobQuery& q) = 0;
  virtual Result<ModelRows> load_model() = 0;
  // In one transaction: rows of `next` that differ from `before` written, rows gone deleted.
  virtual Status save_model(const ModelRows& before, const ModelRows& next) = 0;
};

// Whether `path` names a PostgreSQL database (a libpq URI: postgresql://... or postgres://...).
bool is_postgres_uri(const std::string& path);
// The store at `path`: a PostgreSQL database for a libpq URI, else an SQLite file
// (created, with its tables, when missing).
Result<std::unique_ptr<AcctStore>> open_acct_store(const std::string& path);

// The part of a change from `before` to `next` that save_model acts on: the rows of each
// side whose key is missing from, or whose bytes differ from, the other side's. Saving
// the two parts does what saving the two wholes does, with less to send.
std::pair<AcctStore::ModelRows, AcctStore::ModelRows> model_change(const AcctStore::ModelRows& before,
                                                                   const AcctStore::ModelRows& next);

}  // namespace hq::store
