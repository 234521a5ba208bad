// Rebuilding the controller's state from its journal: the latest snapshot, then every
// event after it, through the journal decoders (net/convert) and core's apply(). The
// controller runs it at start; `hq controller --check-state` runs it offline on a state
// directory opened read-only. Errors name the database file, the bad record (snapshot at
// seq N, journal event seq N) and, through damaged_state_advice(), what to do.
// No sockets, no threads: runs on the caller's thread.
#pragma once
#include <cstdint>
#include <string>

#include "core/cluster_state.hpp"
#include "core/status.hpp"
#include "store/journal.hpp"

namespace hq::cmd {

struct Replayed {
  bool has_snapshot = false;
  uint64_t snapshot_seq = 0;   // the last event the snapshot covers (0: no snapshot)
  size_t snapshot_jobs = 0;    // jobs the snapshot held
  size_t events = 0;           // journal events applied after it
  uint64_t last_seq = 0;       // the newest event's seq (snapshot_seq if none after it)
};

// Restores the snapshot and applies every event of `loaded` to `state` (built from the
// config: nodes and partitions). A snapshot or event that does not decode is an error.
// Takes `loaded` to free each record once applied, and maps the heap the snapshot's jobs
// will take before adding them (HeapPrefault, which tunes malloc as a controller does).
Result<Replayed> replay_journal(store::LoadedJournal loaded, ClusterState& state);

// <state_dir>/state.db
std::string state_db_path(const std::string& state_dir);

// What an operator can do about a state database the controller cannot use.
std::string damaged_state_advice(const std::string& db_path);

struct StateCheck {
  Replayed replayed;
  size_t jobs = 0;
  uint64_t next_job_id = 0;
};

// Verifies the state database of `state_dir` without writing to it: SQLite's integrity
// check, then load and replay into `state` as the controller would.
Result<StateCheck> check_state_dir(const std::string& state_dir, ClusterState state);

// "<db>: OK — snapshot at seq N (J jobs), E events after it, next job id K"
std::string describe_state_check(const std::string& db_path, const StateCheck& check);

}  // namespace hq::cmd
