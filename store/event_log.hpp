// What the controller needs of its durable state, as an interface: the SQLite journal
// (store/journal.hpp) in production, an in-memory log in tests of the controller's logic.
// load() before start(); completions are handed to the `post` function given to start().
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.hpp"

namespace hq::store {

// What an outbox record holds: a job (pb::Job without script and environment), a step
// that ended (pb::StepRecord), or a node's span out of service (pb::NodeSpanRecord).
enum class OutboxKind : int { kJob = 0, kStep = 1, kNode = 2 };

// A record waiting in the outbox for the accounting store; seqs only grow.
struct OutboxRow {
  int64_t seq = 0;
  std::string body;
  OutboxKind kind = OutboxKind::kJob;
};

struct LoadedJournal {
  std::string snapshot;                       // empty: none yet
  uint64_t snapshot_seq = 0;
  std::vector<std::string> events;            // after the snapshot, in order: seqs snapshot_seq+1, +2, ...
};

class EventLog {
 public:
  using Done = std::function<void(const Status&)>;
  using Post = std::function<void(std::function<void()>)>;

  virtual ~EventLog() = default;
  virtual Result<LoadedJournal> load() = 0;
  virtual void start(Post post) = 0;
  using OutboxDone = std::function<void(Result<std::vector<OutboxRow>>)>;

  // Durable in queue order; `done` runs (through `post`) once the event is on disk. The
  // accounting `records` (all of `kind`) go into the outbox in the same transaction.
  virtual void append(std::string event, std::vector<std::string> records, OutboxKind kind, Done done) = 0;
  void append(std::string event, std::vector<std::string> records, Done done) {
    append(std::move(event), std::move(records), OutboxKind::kJob, std::move(done));
  }
  void append(std::string event, Done done) { append(std::move(event), {}, OutboxKind::kJob, std::move(done)); }
  // A record for the store that no event goes with (a step that ended: soft state, which
  // the controller does not journal), durable in queue order; `done` as append's.
  virtual void append_outbox(OutboxKind kind, std::string record, Done done) = 0;
  void append_outbox(OutboxKind kind, std::string record) { append_outbox(kind, std::move(record), Done{}); }
  // Up to `limit` outbox records after seq `after`, oldest first, once everything queued
  // before is durable (through `post`).
  virtual void read_outbox(int64_t after, size_t limit, OutboxDone done) = 0;
  // The store has every record up to `seq`: they leave the outbox.
  virtual void ack_outbox(int64_t seq) = 0;
  // Names this log for the store, which counts what it applied per source: a new one (a
  // controller whose state was wiped) starts again from seq 0. Valid after load().
  virtual std::string source_id() const = 0;
  // Stores `state` as of every append queued before it and drops the events it covers.
  virtual void snapshot(std::string state, Done done) = 0;
  // Commits what is queued, then stops.
  virtual void stop() = 0;
};

}  // namespace hq::store
