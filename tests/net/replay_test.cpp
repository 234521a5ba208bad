// Property: replaying the journal reproduces the state exactly. Random event sequences
// (valid, stale and conflicting ones) go through apply() as the controller does; accepted
// events are journaled (encode_event), snapshots taken at random points (encode_snapshot);
// then a crash at any point: a fresh state recovered from the durable prefix (snapshot +
// events after it, through decode and apply) must equal the live state at that point.
#include <doctest/doctest.h>

#include <random>
#include <sstream>

#include "../core/builders.hpp"
#include "net/convert.hpp"

using namespace hq;

namespace {

// What a state holds that matters after a restart: every job as journaled, the indexes,
// node usage derived from running jobs, drains, what registrations, DOWN changes and
// removals made of nodes and partitions, idempotency keys, the id counter. Not liveness
// (responding, last_heard): an agent tells a restarted controller again.
std::string fingerprint(const ClusterState& s) {
  std::ostringstream out;
  out << net::encode_snapshot(s) << "|next " << s.next_job_id << "|pending " << s.pending_jobs;
  size_t pending = 0;  // the count is every pending job's, live and replayed alike
  for (const auto& [id, job] : s.jobs) pending += job.state == JobState::kPending;
  CHECK(pending == s.pending_jobs);
  out << "|queued";
  for (JobId id : s.queued) out << " " << id.value;
  out << "|running";
  for (JobId id : s.running) out << " " << id.value;
  out << "|finished";
  for (const auto& [t, id] : s.finished) out << " " << t << ":" << id.value;
  for (const auto& [name, n] : s.nodes) {
    out << "|" << name << " cpus " << n.alloc_cpus << " mem " << n.alloc_mem_mib << " gpus " << n.alloc_gpus
        << " drain " << n.drain << "/" << n.drain_reason << " jobs";
    for (JobId id : n.jobs) out << " " << id.value;
    // What registrations, DOWN changes and removals decide (node_events), read directly.
    out << " size " << n.cpus << "/" << n.mem_mib << " gres " << node_gres(n) << " down " << n.down << "/"
        << n.down_reason << " dyn " << n.dynamic << " boot " << n.boot_time << " labels " << n.block << "/"
        << n.switch_name << " threads " << n.threads_per_core << " weight " << n.weight << " operator "
        << n.operator_features << n.operator_weight << n.operator_block << " features";
    for (const auto& f : n.features) out << " " << f;
    for (const auto& g : n.gpus) out << " gpu " << g.type << ":" << g.cpus;
    out << " in";
    for (const auto& p : n.partitions) out << " " << p;
  }
  for (const auto& p : s.partitions) {
    out << "|partition " << p.name << " " << static_cast<int>(p.state) << " " << p.max_time << " " << p.default_time;
    for (const auto& n : p.nodes) out << " " << n;
  }
  for (const auto& [name, r] : s.reservations)
    out << "|resv " << name << " " << r.id << " " << r.start << "-" << r.end << " " << r.nodes.size() << " " << r.partition
        << " " << r.flags << " " << (r.users.empty() ? "" : r.users[0]);
  out << "|next_resv " << s.next_resv_id;
  for (const auto& [id, j] : s.jobs)  // read directly too: a field the codec drops must show
    out << "|job " << id.value << " " << static_cast<int>(j.state) << " h" << static_cast<int>(j.hold) << " r"
        << j.restart_count << " c" << j.cancel_requested << " s" << static_cast<int>(j.stop_intent) << " p"
        << j.preempting << " z" << j.suspended << "/" << j.suspend_time << "/" << j.pre_suspend_secs << "/"
        << j.suspended_secs << " k" << j.submit_key << "/" << j.cancel_key << " a" << j.alloc.size() << " e" << j.exit_code;
  out << "|keys";
  std::map<std::string, uint64_t> keys;
  for (const auto& [hash, id] : s.submit_keys) {
    const Job* job = find_job(s, id);
    if (!job) {
      keys["(a key of no job)"] = id.value;
      continue;
    }
    if (hash != submit_key_hash(job->submit_key)) keys["(a key not its job's)"] = id.value;
    else keys[job->submit_key] = id.value;
  }
  for (const auto& [k, id] : keys) out << " " << k << "=" << id;
  return out.str();
}

// A random event about the state's jobs and nodes; many are stale or conflicting on purpose.
// n1-n3 are in the config (one GPU of type t each), d1 and d2 join by registering.
class EventMaker {
 public:
  explicit EventMaker(uint32_t seed) : rng_(seed) {}
  Event make(const ClusterState& s) {
    Time t = ++now_;
    uint64_t id = 1 + pick(s.next_job_id + 1);
    JobId jid{id};
    const char* nodes[] = {"n1", "n2", "n3", "d1", "d2"};
    switch (pick(19)) {
      case 0: case 1: {
        test::JobBuilder b(s.next_job_id);
        b.submitted(t).cpus(1 + static_cast<int>(pick(4)));
        if (pick(3) == 0) b.held();
        Job job = b.build();
        job.spec.script = std::string("#!/bin/sh\necho ") + std::to_string(pick(3)) + "\n";
        job.spec.env = std::vector<std::string>{"A=" + std::to_string(pick(2))};
        if (pick(2) == 0) job.submit_key = "key-" + std::to_string(pick(1000));
        return JobSubmitted{job};
      }
      case 2: {
        JobStarted e{jid, t, {{nodes[pick(5)], 1 + static_cast<int32_t>(pick(4)), 100, 1, {}}}, ""};
        return e;
      }
      case 10: case 11: return registered(nodes[pick(5)], t);
      case 12: return NodeDownChanged{nodes[pick(5)], t, pick(2) == 0, pick(2) ? kNotResponding : "gres short"};
      case 13: return NodeRemoved{nodes[3 + pick(2)], t};
      case 14: return updated(s, jid, t);
      case 15: return PartitionUpdated{s.partitions[pick(s.partitions.size())].name, t,
                                       static_cast<PartitionState>(pick(4)), pick(2) ? kUnlimited : 60 * Duration(pick(9)),
                                       pick(2) ? kUnlimited : 60};
      case 16: {  // reservations come, change and go
        AdvanceReservation r{"r" + std::to_string(pick(3)), 1 + pick(5), t, t + 60 * Time(1 + pick(9)), {nodes[pick(3)]},
                             {"u" + std::to_string(pick(2))}, {}, pick(2) ? "" : "batch", static_cast<uint32_t>(pick(8))};
        return ReservationChanged{t, r, pick(3) == 0};
      }
      case 17: return JobSuspended{jid, t, pick(2) == 0};  // suspended jobs hold no CPUs
      case 18: {  // an operator's features (which move nodes between partitions), weight or block
        NodeUpdated e{nodes[pick(5)], t, std::nullopt, std::nullopt};
        if (pick(2)) e.features = pick(2) ? std::vector<std::string>{"big"} : std::vector<std::string>{};
        if (pick(2) || !e.features) e.weight = static_cast<int32_t>(pick(3));
        if (pick(3) == 0) e.block = pick(2) ? "b1" : "b9";
        return e;
      }
      case 3: return JobEnded{jid, t, pick(2) ? JobState::kCompleted : JobState::kFailed, static_cast<int32_t>(pick(3)), 0};
      case 4: return JobRequeued{jid, t, pick(2) ? JobReason::kNone : JobReason::kPreempted};
      case 5: return JobHoldChanged{jid, t, static_cast<HoldKind>(pick(3))};
      case 6: return NodeDrainChanged{nodes[pick(5)], t, pick(2) == 0, pick(2) ? "maintenance" : "fan", pick(2) ? 0u : 1000u};
      case 7: return JobCancelRequested{jid, t, pick(2) ? "c-" + std::to_string(pick(100)) : "", pick(2) ? int64_t{pick(2000)} : -1};
      case 8: return JobStopRequested{jid, t, static_cast<StopIntent>(pick(5))};
      default: return JobDependencyChanged{jid, t, pick(2) ? DepState::kNone : DepState::kNever};
    }
  }

 private:
  // An agent's registration: sizes, 0-2 GPUs (fewer than n1-n3 need, at times), features and
  // labels that move it between partitions, a boot time that changes now and then.
  NodeRegistered registered(const std::string& node, Time t) {
    NodeRegistered e{node, t, 4 * (1 + static_cast<int32_t>(pick(3))), 1000 * (1 + static_cast<int64_t>(pick(2))),
                     {}, {}, "", "", 100 + static_cast<Time>(pick(2)), node[0] == 'd' || pick(4) == 0};
    for (uint64_t i = pick(3); i > 0; --i) e.gpus.push_back({"t", pick(2) ? "0-3" : ""});
    if (pick(2)) e.features.push_back("gpu");
    if (pick(3) == 0) e.features.push_back("big");
    const char* blocks[] = {"", "b1", "b2"};
    e.block = blocks[pick(3)];
    e.switch_name = pick(2) ? "s1" : "";
    e.threads_per_core = static_cast<int32_t>(pick(3));  // 0 (not known), 1 or 2: cores of two threads
    return e;
  }
  // scontrol update of a job that may or may not exist: a new name, limit or throttle.
  JobUpdated updated(const ClusterState& s, JobId id, Time t) {
    Job job;
    if (const Job* j = find_job(s, id)) job = *j;
    job.id = id;
    job.spec.name = "renamed-" + std::to_string(pick(5));
    job.time_limit = 60 * static_cast<Duration>(1 + pick(10));
    job.spec.time_limit = job.time_limit;
    job.array_throttle = static_cast<int32_t>(pick(3));
    if (pick(2)) job.spec.extra = JobExtras{"comment " + std::to_string(pick(3))};
    return JobUpdated{id, t, job};
  }
  uint64_t pick(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  std::mt19937_64 rng_;
  Time now_ = 1000;
};

// n1-n3 with one configured GPU each and CPUs left to their agents; partitions by name,
// by feature, by block and ALL, so that registrations move nodes between them.
ClusterState fresh() {
  ClusterConfig config = uniform_cluster_config({"n1", "n2", "n3"}, 8, 4096, "batch");
  config.nodes[0].cpus = 0;
  config.nodes[0].gres = {{"t", 1}};
  for (const char* spec : {"gpu=feature{gpu}", "rack=block{b1},n2", "all=ALL"}) {
    PartitionConfig p;
    std::string text = spec;
    p.name = text.substr(0, text.find('='));
    REQUIRE(parse_partition_nodes(text.substr(text.find('=') + 1), p).is_ok());
    config.partitions.push_back(p);
  }
  return make_state(config);
}

// The durable state after a crash: the snapshot, then the journal's events through decode.
ClusterState recover(const std::string& snapshot, const std::vector<std::string>& events) {
  ClusterState s = fresh();
  if (!snapshot.empty()) REQUIRE(net::restore_snapshot(snapshot, s).is_ok());
  for (const auto& bytes : events) {
    auto ev = net::decode_event(bytes);
    REQUIRE(ev.is_ok());
    hq::apply(s, *ev);
  }
  return s;
}

}  // namespace

TEST_CASE("replay: a crash at any point recovers exactly the live state, snapshots or not") {
  int accepted_total = 0;
  std::vector<int> accepted(std::variant_size_v<Event>, 0);  // by kind
  for (uint32_t seed = 1; seed <= 80; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed * 7919);
    EventMaker maker(seed);
    ClusterState live = fresh();
    std::string snapshot;
    std::vector<std::string> journal;
    size_t crash_at = 50 + rng() % 250;
    for (size_t step = 0; step < crash_at; ++step) {
      Event e = maker.make(live);
      if (!hq::apply(live, e)) continue;  // stale: the controller journals nothing
      ++accepted_total;
      ++accepted[e.index()];
      journal.push_back(net::encode_event(e));
      if (rng() % 40 == 0) {  // a snapshot replaces the events it covers
        snapshot = net::encode_snapshot(live);
        journal.clear();
      }
    }
    ClusterState recovered = recover(snapshot, journal);
    CHECK(fingerprint(recovered) == fingerprint(live));
  }
  CHECK(accepted_total > 3000);  // the generator makes events that matter, not only stale ones
  for (size_t kind = 0; kind < accepted.size(); ++kind) {
    CAPTURE(kind);
    CHECK(accepted[kind] > 20);  // every kind of event, node ones too
  }
}
