// The controller's side of the accounting store: each change of a job goes, as a record
// (the Job without script and environment), into the journal's outbox in the same
// transaction as the change (Controller::record), as does each span of a node out of
// service that an event opens or closes. The shipper takes outbox records in
// order, applies them to the store (idempotently: the store skips seqs it has) and only
// then lets the outbox drop them, so a record reaches the store exactly once whatever
// stops when. The "internal" store is SQLite in this process; a "remote" one is an `hq
// accounting` daemon (cmd/accounting/remote_store.hpp). Either is used on a worker thread of its own.
// Threads: everything here runs on the controller's event loop except the store calls,
// which run on the worker; their results come back through `post`.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/acct_model.hpp"
#include "core/acctmgr.hpp"
#include "core/fair_share.hpp"
#include "core/job.hpp"
#include "core/node_spans.hpp"
#include "core/sreport.hpp"
#include "core/status.hpp"
#include "store/accounting_db.hpp"
#include "store/acct_store.hpp"
#include "store/event_log.hpp"
#include "store/worker.hpp"

namespace hq {

// A job's accounting record, as it goes into the outbox.
std::string encode_acct_record(const Job& job, const std::string& state = "");  // state: instead of the job's (REQUEUED)
// A node's span out of service (pb::NodeSpanRecord), as it goes into the outbox.
std::string encode_node_span(const NodeSpan& span);
// An outbox record with the columns the store selects on, as the shipper sends it.
Result<store::AcctJob> acct_columns(const store::OutboxRow& row, const std::string& cluster);

// How long records wait in the outbox for others to ship with (AccountingLink::ship_soon).
constexpr std::chrono::milliseconds kShipDelay{50};

class AccountingLink {
 public:
  using Post = std::function<void(std::function<void()>)>;
  // `later` runs a function on the event loop after a short while (kShipDelay).
  AccountingLink(store::EventLog& journal, std::string cluster, Post post, Post later)
      : journal_(journal), cluster_(std::move(cluster)), post_(std::move(post)), later_(std::move(later)) {}
  ~AccountingLink();

  // Opens (creating) the SQLite store at `path`.
  Status open(const std::string& path);
  // Uses `store` (a remote one: it connects when first used, and again after a failure).
  void use(std::unique_ptr<store::AcctStore> store);
  bool enabled() const { return db_ != nullptr; }
  // Where the store is (a file, host:port, a database without its user or password).
  const std::string& where() const { return where_; }
  // Ships what the outbox holds, unless a shipment is under way (then once it is done).
  void ship();
  // Records were added to the outbox: ships them, with whatever else comes meanwhile, after
  // kShipDelay. A stream of job changes then costs the store one transaction per batch
  // instead of one per record; a query ships at once and waits for it (query()).
  void ship_soon();
  // Nothing under way and nothing waiting for the delay.
  bool idle() const { return !in_flight_ && !soon_; }
  // Ships again after a step that failed (the controller's tick); else nothing.
  void retry();
  // sacct's records: `done` runs on the event loop. Records the outbox held when it was
  // asked are in the answer: the query waits for them to be shipped (or for shipping to fail).
  // Job records (pb::Job) and, with q.with_steps, their steps' (pb::StepRecord).
  struct Records {
    std::vector<std::string> jobs, steps;
  };
  void query(store::AcctJobQuery q, std::function<void(Result<Records>)> done);
  // Fair share as of `now`, from the stored records of jobs that ran since `since` (0: all)
  // and the model as it is now; worked out on the store's thread, `done` on the event loop.
  void fair_share(Time now, Time since, FairShareConfig cfg, std::function<void(Result<std::shared_ptr<const FairShare>>)> done);
  // sreport: the records of jobs eligible before cmd.end and not ended before cmd.start,
  // added to `data`, and the nodes' Down time from the spans the store has there and those
  // `open` now (node_down_spans); the report worked out on the store's thread once what
  // was journaled before has shipped; `done` on the loop.
  // The nodes' spans out of service the store has in `q`'s window (cluster, start, end),
  // once what waits has shipped; `done` on the loop.
  void node_spans(store::AcctJobQuery q, std::function<void(Result<std::vector<NodeSpan>>)> done);
  void report(SreportCmd cmd, SreportData data, std::vector<NodeSpan> open, Time now,
              std::function<void(Result<SreportOutput>)> done);
  // Stops the worker after what it was given (the outbox keeps what was not acknowledged).
  void stop();

  // The accounting model (accounts, users, associations, QOS): loaded from the store at
  // open, this cluster registered in it (Slurm's defaults on a new store). Event loop only.
  const AcctModel& model() const { return model_; }
  // Loads the model, registering `cluster` at host:port; `done` once it is in memory.
  // Failing before any load, the model last known (the cache file) is taken meanwhile.
  void load_model(std::string host, uint32_t port, std::function<void(Status)> done);
  // Where the model last loaded or changed is kept, so that a controller started while its
  // store is down enforces what it knew (set before the first load; "": nowhere).
  void set_model_cache(std::string path) { cache_path_ = std::move(path); }
  // The model in memory came from the cache, not from the store (yet).
  bool model_from_cache() const { return from_cache_; }
  // One sacctmgr command on the model; with `commit`, a change is stored before `done`.
  void acctmgr(const std::vector<std::string>& words, const AcctMgrOptions& options, const AcctMgrActor& actor,
               bool commit, std::function<void(Result<AcctMgrResult>)> done);

 private:
  void ship_after(int64_t seq);
  void shipped(Result<int64_t> seq);
  // Runs `fn` on the worker once nothing waits to be shipped (at once if nothing does).
  void after_shipping(std::function<void()> fn);
  // Runs the queries that waited for an outbox read numbered `shipped_read` or lower.
  void run_waiting_queries(uint64_t shipped_read);

  store::EventLog& journal_;
  std::string cluster_;
  Post post_, later_;
  std::unique_ptr<store::AcctStore> db_;  // used on worker_ only
  std::string where_;                     // db_->where(), for the loop's messages
  std::unique_ptr<store::Worker> worker_;
  bool in_flight_ = false, again_ = false, failed_ = false, soon_ = false;
  int failures_unsaid_ = 0;  // failed shipments since the last one logged
  // Queries waiting for a shipment, with the number of the outbox read that covers them.
  std::vector<std::pair<uint64_t, std::function<void()>>> after_shipping_;
  // Outbox reads begun; the one under way (or the last); the last that took all it found
  // (not capped at kBatch), so covered everything there was when it began.
  uint64_t reads_started_ = 0, reading_ = 0, covered_ = 0;
  int64_t acked_ = -1;  // the store's last seq from this journal; -1: not asked yet
  AcctModel model_;
  store::AcctStore::ModelRows rows_;  // model_ as stored
  std::string cache_path_;
  uint64_t changes_ = 0;  // sacctmgr changes made to model_ (the last one's number)
  bool loaded_ = false, from_cache_ = false;  // from the store once; from the cache now
  void write_cache() const;
  bool read_cache();
};

}  // namespace hq
