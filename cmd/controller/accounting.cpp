// Shipping the journal's accounting outbox to the store (see accounting.hpp).
#include "cmd/controller/accounting.hpp"

#include <cstdint>
#include <utility>

#include "cmd/accounting/store_wire.hpp"
#include "cmd/paths.hpp"
#include "core/acct_policy.hpp"

#include "net/convert.hpp"
#include "net/convert_acct.hpp"
#include "net/log.hpp"

namespace hq {
namespace {
constexpr size_t kBatch = 2000;  // records per store transaction
}  // namespace

namespace {
Result<store::AcctJob> step_columns(const store::OutboxRow& row, const std::string& cluster) {
  pb::StepRecord p;
  if (!p.ParseFromString(row.body)) return invalid("accounting outbox record " + std::to_string(row.seq) + " is not a step");
  store::AcctJob j;
  j.seq = row.seq;
  j.cluster = cluster;
  j.job_id = p.job_id();
  j.submit_time = p.job_submit_time();
  j.step_id = p.step_id();
  j.record = row.body;
  return j;
}
Result<store::AcctJob> span_columns(const store::OutboxRow& row, const std::string& cluster) {
  pb::NodeSpanRecord p;
  if (!p.ParseFromString(row.body))
    return invalid("accounting outbox record " + std::to_string(row.seq) + " is not a node's span");
  store::AcctJob j;
  j.seq = row.seq;
  j.cluster = cluster;
  j.node_span = true;
  j.name = p.node();
  j.state = p.state();
  j.uid = p.uid();
  j.start_time = p.start();
  j.end_time = p.end();
  j.record = row.body;
  return j;
}
}  // namespace

Result<store::AcctJob> acct_columns(const store::OutboxRow& row, const std::string& cluster) {
  if (row.kind == store::OutboxKind::kStep) return step_columns(row, cluster);
  if (row.kind == store::OutboxKind::kNode) return span_columns(row, cluster);
  pb::Job p;
  if (!p.ParseFromString(row.body)) return invalid("accounting outbox record " + std::to_string(row.seq) + " is not a job");
  store::AcctJob j;
  j.seq = row.seq;
  j.cluster = cluster;
  j.job_id = p.job_id();
  j.submit_time = p.submit_time();
  j.uid = p.spec().uid();
  j.name = p.spec().name();
  j.state = p.suspended() ? "SUSPENDED" : p.state();
  j.partition = p.partition();
  j.account = p.spec().account();
  j.eligible_time = p.eligible_time();
  j.start_time = p.start_time();
  j.end_time = p.end_time();
  j.array_job_id = p.array_job_id();
  j.array_task_id = p.array_job_id() ? p.array_task_id() : -1;
  j.record = row.body;
  return j;
}

namespace {
// The nodes' spans the store has in `q`'s window.
Result<std::vector<NodeSpan>> read_spans(store::AcctStore& db, const store::AcctJobQuery& q) {
  auto rows = db.node_spans(q);
  if (!rows) return rows.status();
  std::vector<NodeSpan> out;
  pb::NodeSpanRecord p;
  for (const std::string& row : *rows) {
    if (!p.ParseFromString(row)) continue;
    out.push_back(NodeSpan{p.node(), p.state(), p.reason(), p.uid(), p.start(), p.end(), p.cpus(), p.mem_mib(), p.gpus()});
  }
  return out;
}

// The same, or none when the store cannot say (an older one): sreport counts what it has.
std::vector<NodeSpan> stored_spans(store::AcctStore& db, const store::AcctJobQuery& q) {
  auto spans = read_spans(db, q);
  if (!spans) log::warn("accounting: nodes' spans out of service not read: " + spans.status().message());
  return spans ? std::move(spans).value() : std::vector<NodeSpan>{};
}
}  // namespace

void AccountingLink::node_spans(store::AcctJobQuery q, std::function<void(Result<std::vector<NodeSpan>>)> done) {
  if (!db_) return done(unavailable("this cluster keeps no accounting ([accounting] storage = \"none\")"));
  after_shipping([this, q = std::move(q), done = std::move(done)]() mutable {
    auto spans = read_spans(*db_, q);
    post_([spans = std::move(spans), done = std::move(done)]() mutable { done(std::move(spans)); });
  });
}

std::string encode_node_span(const NodeSpan& s) {
  pb::NodeSpanRecord p;
  p.set_node(s.node), p.set_state(s.state), p.set_reason(s.reason), p.set_uid(s.uid);
  p.set_start(s.start), p.set_end(s.end), p.set_cpus(s.cpus), p.set_mem_mib(s.mem_mib), p.set_gpus(s.gpus);
  return p.SerializeAsString();
}

std::string encode_acct_record(const Job& job, const std::string& state) {
  pb::Job p = net::to_pb(job, /*with_script=*/false);
  if (job.held()) p.set_eligible_time(0);  // as Slurm records it: not eligible while held
  if (!state.empty()) p.set_state(state);
  return p.SerializeAsString();
}

AccountingLink::~AccountingLink() { stop(); }

Status AccountingLink::open(const std::string& path) {
  auto db = store::open_acct_store(path);
  if (!db) return db.status();
  use(std::move(db).value());
  return Status::ok();
}

void AccountingLink::use(std::unique_ptr<store::AcctStore> store) {
  db_ = std::move(store);
  where_ = db_->where();
  worker_ = std::make_unique<store::Worker>();
}

void AccountingLink::stop() {
  if (worker_) worker_->stop();
}

void AccountingLink::retry() {
  if (failed_) ship();
}

void AccountingLink::ship() {
  if (!db_) return;
  if (in_flight_) {
    again_ = true;
    return;
  }
  in_flight_ = true;
  again_ = false;
  if (acked_ >= 0) return ship_after(acked_);
  worker_->run([this, source = journal_.source_id()] {
    auto seq = db_->shipped(source);
    post_([this, seq] { shipped(seq); });
  });
}

void AccountingLink::ship_soon() {
  if (!db_ || soon_) return;
  soon_ = true;
  later_([this] {
    soon_ = false;
    ship();
  });
}

void AccountingLink::after_shipping(std::function<void()> fn) {
  if (!soon_ && !in_flight_) return worker_->run(std::move(fn));
  // A shipment that reads the outbox from now on covers what it holds now: the next one
  // to start (the one under way may have read it before these records came).
  after_shipping_.push_back({reads_started_ + 1, std::move(fn)});
  ship();  // now, not after the delay (while one is under way: once it is done)
}

void AccountingLink::ship_after(int64_t seq) {
  reading_ = ++reads_started_;
  journal_.read_outbox(seq, kBatch, [this](Result<std::vector<store::OutboxRow>> rows) {
    if (!rows) return shipped(rows.status());
    if (rows->empty()) {
      covered_ = reading_;
      return shipped(acked_);
    }
    std::vector<store::AcctJob> jobs;
    jobs.reserve(rows->size());
    for (const auto& row : *rows) {
      auto job = acct_columns(row, cluster_);
      if (!job) return shipped(job.status());
      jobs.push_back(std::move(job).value());
    }
    bool full = rows->size() == kBatch;
    worker_->run([this, jobs = std::move(jobs), full, source = journal_.source_id()] {
      auto seq = db_->apply(source, jobs);
      post_([this, seq, full] {
        again_ = again_ || full;
        if (!full) covered_ = reading_;  // a read that took all it found covers what was there
        shipped(seq);
      });
    });
  });
}

// A step of shipping ended: the store has everything up to `seq` (or failed; the tick
// tries again).
void AccountingLink::shipped(Result<int64_t> seq) {
  in_flight_ = false;
  if (!seq) {
    // Said when it starts failing, then once a minute (tried every second: a store down
    // for an hour must not fill the log).
    if (!failed_ || ++failures_unsaid_ >= 60) {
      log::warn("accounting: " + seq.status().message() + " (records stay in the journal's outbox; retrying)");
      failures_unsaid_ = 0;
    }
    failed_ = true;
    return run_waiting_queries(UINT64_MAX);  // they answer with what the store has
  }
  if (failed_) log::info("accounting: the store at " + where_ + " answers again; shipping what waited");
  failed_ = false;
  // Also on the first answer: the outbox may still hold records the store applied just
  // before a restart.
  if (*seq > 0 && *seq > acked_) journal_.ack_outbox(*seq);
  bool first = acked_ < 0;
  acked_ = *seq;
  run_waiting_queries(covered_);  // before the next shipment: a stream of records keeps them waiting no longer
  if (first || again_) ship();
}

void AccountingLink::run_waiting_queries(uint64_t shipped_read) {
  std::vector<std::pair<uint64_t, std::function<void()>>> later;
  for (auto& [needs, fn] : after_shipping_) {
    if (needs <= shipped_read) worker_->run(std::move(fn));
    else later.emplace_back(needs, std::move(fn));
  }
  after_shipping_ = std::move(later);
}

void AccountingLink::query(store::AcctJobQuery q, std::function<void(Result<Records>)> done) {
  if (!db_) return done(unavailable("this cluster keeps no accounting ([accounting] storage = \"none\")"));
  after_shipping([this, q = std::move(q), done = std::move(done)]() mutable {
    Result<Records> out = Records{};
    auto jobs = db_->query(q, q.with_steps ? &out->steps : nullptr);
    if (jobs) out->jobs = std::move(jobs).value();
    else out = jobs.status();
    post_([out = std::move(out), done = std::move(done)]() mutable { done(std::move(out)); });
  });
}

void AccountingLink::fair_share(Time now, Time since, FairShareConfig cfg,
                                std::function<void(Result<std::shared_ptr<const FairShare>>)> done) {
  if (!db_) return done(unavailable("no accounting store"));
  store::AcctJobQuery q;
  q.cluster = cluster_;
  q.start = since;
  q.started_only = true;
  AcctPolicy factors(model_, cluster_, AcctEnforce{});  // the QOS's usage factors, as they are now
  worker_->run([this, q = std::move(q), now, cfg, model = model_, factors = std::move(factors), done = std::move(done)]() mutable {
    Result<std::shared_ptr<const FairShare>> out = unavailable("");
    auto rows = db_->query(q);
    if (!rows) {
      out = rows.status();
    } else {
      std::vector<UsageRecord> records;
      records.reserve(rows->size());
      pb::Job wire;
      for (const std::string& row : *rows) {
        if (!wire.ParseFromString(row)) continue;
        auto job = net::from_pb(wire);
        if (!job) continue;
        UsageRecord r = usage_record(*job);
        r.factor = factors.usage_factor(job->spec.extra->qos);
        records.push_back(std::move(r));
      }
      out = std::make_shared<const FairShare>(model, cluster_, records, now, cfg);
    }
    post_([out = std::move(out), done = std::move(done)]() mutable { done(std::move(out)); });
  });
}

void AccountingLink::report(SreportCmd cmd, SreportData data, std::vector<NodeSpan> open, Time now,
                            std::function<void(Result<SreportOutput>)> done) {
  if (!db_) return done(unavailable("no accounting store"));
  store::AcctJobQuery q;
  q.cluster = cluster_;
  q.start = cmd.start;
  q.end = cmd.end;
  // After shipping: the records and nodes' spans journaled before the request are there.
  after_shipping([this, q = std::move(q), cmd = std::move(cmd), data = std::move(data), open = std::move(open), now,
                  done = std::move(done)]() mutable {
    Result<SreportOutput> out = unavailable("");
    auto rows = db_->query(q);
    if (!rows) {
      out = rows.status();
    } else {
      pb::Job wire;
      for (const std::string& row : *rows)
        if (wire.ParseFromString(row))
          if (auto job = net::from_pb(wire)) data.jobs.push_back(sreport_usage_job(*job));
      data.down = node_down_spans(stored_spans(*db_, q), open);
      out = render_sreport(cmd, data, now);
    }
    post_([out = std::move(out), done = std::move(done)]() mutable { done(std::move(out)); });
  });
}

void AccountingLink::load_model(std::string host, uint32_t port, std::function<void(Status)> done) {
  if (!db_) return done(unavailable("no accounting store"));
  worker_->run([this, host = std::move(host), port, done = std::move(done)]() mutable {
    auto rows = db_->load_model();
    Result<AcctModel> model = rows ? (rows->empty() ? Result<AcctModel>(default_acct_model()) : net::acct_model_from_rows(*rows))
                                   : Result<AcctModel>(rows.status());
    Status saved = model.status();
    store::AcctStore::ModelRows next;
    if (model) {
      register_cluster(model.value(), cluster_, host, port);
      next = net::acct_rows(*model);
      saved = db_->save_model(rows ? *rows : store::AcctStore::ModelRows{}, next);
    }
    post_([this, model = std::move(model), next = std::move(next), saved, done = std::move(done)]() mutable {
      if (saved) {
        model_ = std::move(model).value();
        rows_ = std::move(next);
        loaded_ = true;
        from_cache_ = false;
        write_cache();
      } else if (!loaded_ && !from_cache_ && read_cache()) {
        log::warn("accounting: the store is not answering; enforcing the accounts, users and QOS last known (" +
                  cache_path_ + ") until it does");
      }
      done(saved);
    });
  });
}

void AccountingLink::acctmgr(const std::vector<std::string>& words, const AcctMgrOptions& options,
                             const AcctMgrActor& actor, bool commit, std::function<void(Result<AcctMgrResult>)> done) {
  if (!db_) return done(unavailable("this cluster keeps no accounting ([accounting] storage = \"none\")"));
  AcctMgrResult r = run_acctmgr(model_, words, options, actor);
  if (!r.changed || !commit) return done(std::move(r));
  // The model changes here, at once, so that the next command sees it; the store writes in
  // order on its thread, and a write that fails reloads what the store holds.
  auto before = rows_;
  AcctModel previous = model_;
  rows_ = net::acct_rows(r.model);
  model_ = r.model;
  uint64_t change = ++changes_;
  worker_->run([this, before = std::move(before), next = rows_, r = std::move(r), done = std::move(done),
                previous = std::move(previous), change]() mutable {
    Status s = db_->save_model(before, next);
    post_([this, s, r = std::move(r), done = std::move(done), before = std::move(before), previous = std::move(previous),
           change]() mutable {
      if (!s) {
        // Not stored, so not in force: the model as it was (unless a later change came,
        // which the reload from the store sorts out).
        if (change == changes_) {
          model_ = std::move(previous);
          rows_ = std::move(before);
        }
        log::error("accounting: " + s.message() + " (the change is not stored; reloading the model)");
        load_model("", 0, [](Status) {});
        return done(s);
      }
      write_cache();
      done(std::move(r));
    });
  });
}

void AccountingLink::write_cache() const {
  if (cache_path_.empty()) return;
  pb::StoreReply rows;
  cmd::to_pb(rows_, *rows.mutable_rows());
  if (Status s = cmd::write_file_atomic(cache_path_, rows.SerializeAsString(), 0600); !s)
    log::warn("accounting: " + s.message() + " (the model is not kept for a start without the store)");
}

bool AccountingLink::read_cache() {
  if (cache_path_.empty()) return false;
  std::string bytes = cmd::read_small_file(cache_path_);
  pb::StoreReply rows;
  if (bytes.empty() || !rows.ParseFromString(bytes)) return false;
  auto parsed = cmd::from_pb(rows.rows());
  auto model = net::acct_model_from_rows(parsed);
  if (!model) {
    log::warn("accounting: " + cache_path_ + ": " + model.status().message() + " (not used)");
    return false;
  }
  model_ = std::move(model).value();
  rows_ = std::move(parsed);
  from_cache_ = true;
  return true;
}

}  // namespace hq
