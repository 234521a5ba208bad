// Journal replay and the offline state check (see recovery.hpp). One thread.
#include "cmd/controller/recovery.hpp"

#include <filesystem>
#include <optional>
#include <utility>

#include "cmd/process.hpp"
#include "net/convert.hpp"

namespace hq::cmd {

Result<Replayed> replay_journal(store::LoadedJournal loaded, ClusterState& state) {
  Replayed out;
  out.snapshot_seq = out.last_seq = loaded.snapshot_seq;
  std::optional<HeapPrefault> prefault;
  if (!loaded.snapshot.empty()) {
    std::string snapshot = std::move(loaded.snapshot);  // freed once restored
    // The memory the jobs will take, mapped before they take it: a job with its map node,
    // indexes and short strings, and what the snapshot holds beside them (scripts).
    auto make_room = [&](size_t jobs) { prefault.emplace(jobs * (sizeof(Job) + 256) + snapshot.size()); };
    size_t before = state.jobs.size();
    if (Status s = net::restore_snapshot(snapshot, state, make_room); !s)
      return s.with_context("snapshot at seq " + std::to_string(loaded.snapshot_seq));
    out.has_snapshot = true;
    out.snapshot_jobs = state.jobs.size() - before;
  }
  reserve_jobs(state, loaded.events.size());  // an event adds at most one job
  for (auto& bytes : loaded.events) {
    uint64_t seq = loaded.snapshot_seq + 1 + out.events;  // events follow the snapshot without gaps
    auto decoded = net::decode_event(bytes);
    if (!decoded) return decoded.status().with_context("journal event seq " + std::to_string(seq));
    hq::apply(state, std::move(decoded).value());
    // Freed as soon as applied: the jobs that later events add reuse this memory rather
    // than fault in pages of their own (100,000 submissions are 130 MB of events).
    std::string().swap(bytes);
    ++out.events;
    out.last_seq = seq;
  }
  return out;
}

std::string state_db_path(const std::string& state_dir) { return state_dir + "/state.db"; }

std::string damaged_state_advice(const std::string& db_path) {
  std::string dir = std::filesystem::path(db_path).parent_path().string();
  return db_path + " is damaged or unreadable, and the controller does not start on a state it cannot read in full. "
         "Either restore " + db_path + " from a backup, or move " + db_path + ", " + db_path + "-wal and " + db_path +
         "-shm aside to start with an empty state (every job is forgotten). `hq controller --check-state --state-dir " +
         (dir.empty() ? "." : dir) + "` verifies a state directory offline.";
}

Result<StateCheck> check_state_dir(const std::string& state_dir, ClusterState state) {
  std::string db = state_db_path(state_dir);
  auto journal = store::Journal::open_read_only(db);
  if (!journal) return journal.status();
  if (Status s = (*journal)->check_integrity(); !s) return s;
  auto loaded = (*journal)->load();
  if (!loaded) return loaded.status();
  auto replayed = replay_journal(std::move(loaded).value(), state);
  if (!replayed) return replayed.status().with_context(db);
  return StateCheck{*replayed, state.jobs.size(), state.next_job_id};
}

std::string describe_state_check(const std::string& db_path, const StateCheck& check) {
  const Replayed& r = check.replayed;
  std::string snapshot = r.has_snapshot
                             ? "snapshot at seq " + std::to_string(r.snapshot_seq) + " (" +
                                   std::to_string(r.snapshot_jobs) + " jobs)"
                             : "no snapshot";
  return db_path + ": OK — " + snapshot + ", " + std::to_string(r.events) + " events after it, " +
         std::to_string(check.jobs) + " jobs, next job id " + std::to_string(check.next_job_id);
}

}  // namespace hq::cmd
