// Shipping the journal's accounting outbox to the store (see accounting.hpp).
#include "cmd/controller/accounting.hpp"

#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq {
namespace {

constexpr size_t kBatch = 2000;  // records per store transaction

// The columns the store selects on, from a record.
Result<store::AcctJob> acct_job(const store::OutboxRow& row, const std::string& cluster) {
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

}  // namespace

std::string encode_acct_record(const Job& job) {
  pb::Job p = net::to_pb(job, /*with_script=*/false);
  if (job.held()) p.set_eligible_time(0);  // as Slurm records it: not eligible while held
  return p.SerializeAsString();
}

AccountingLink::~AccountingLink() { stop(); }

Status AccountingLink::open(const std::string& path) {
  auto db = store::AccountingDb::open(path);
  if (!db) return db.status();
  db_ = std::move(db).value();
  worker_ = std::make_unique<store::Worker>();
  return Status::ok();
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

void AccountingLink::ship_after(int64_t seq) {
  journal_.read_outbox(seq, kBatch, [this](Result<std::vector<store::OutboxRow>> rows) {
    if (!rows) return shipped(rows.status());
    if (rows->empty()) return shipped(acked_);
    std::vector<store::AcctJob> jobs;
    jobs.reserve(rows->size());
    for (const auto& row : *rows) {
      auto job = acct_job(row, cluster_);
      if (!job) return shipped(job.status());
      jobs.push_back(std::move(job).value());
    }
    bool full = rows->size() == kBatch;
    worker_->run([this, jobs = std::move(jobs), full, source = journal_.source_id()] {
      auto seq = db_->apply(source, jobs);
      post_([this, seq, full] {
        again_ = again_ || full;
        shipped(seq);
      });
    });
  });
}

// A step of shipping ended: the store has everything up to `seq` (or failed; the tick
// tries again).
void AccountingLink::shipped(Result<int64_t> seq) {
  in_flight_ = false;
  failed_ = !seq;
  if (!seq) {
    log::warn("accounting: " + seq.status().message() + " (records stay in the journal's outbox; retrying)");
    return;
  }
  // Also on the first answer: the outbox may still hold records the store applied just
  // before a restart.
  if (*seq > 0 && *seq > acked_) journal_.ack_outbox(*seq);
  bool first = acked_ < 0;
  acked_ = *seq;
  if (first || again_) ship();
}

void AccountingLink::query(store::AcctJobQuery q, std::function<void(Result<std::vector<std::string>>)> done) {
  if (!db_) return done(unavailable("this cluster keeps no accounting ([accounting] storage = \"none\")"));
  worker_->run([this, q = std::move(q), done = std::move(done)]() mutable {
    auto rows = db_->query(q);
    post_([rows = std::move(rows), done = std::move(done)]() mutable { done(std::move(rows)); });
  });
}

}  // namespace hq
