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
  // Durable in queue order; `done` runs (through `post`) once the event is on disk.
  virtual void append(std::string event, Done done) = 0;
  // Stores `state` as of every append queued before it and drops the events it covers.
  virtual void snapshot(std::string state, Done done) = 0;
  // Commits what is queued, then stops.
  virtual void stop() = 0;
};

}  // namespace hq::store
