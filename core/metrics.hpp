// The controller's /metrics page (OpenMetrics text) with the metric names, labels and units
// of SchedMD's Slinky slurm-exporter, so its Grafana dashboards work on hq: jobs by state
// (cluster, partition, user, account), nodes by state (cluster, partition), each node's
// CPUs and memory, the scheduler's passes; plus hq's own (GPUs, journal commits, RPCs).
// Memory "bytes" are MiB, as Slinky's are (its HELP says "(MB)"); scheduler times are
// microseconds, as Slurm's sdiag and Slinky give them. Pure: no I/O; not thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/cluster_state.hpp"

namespace hq {

// Passes of one kind: how many, how long (microseconds), how many pending jobs each looked at.
struct PassTally {
  int64_t count = 0, last_us = 0, max_us = 0, sum_us = 0, depth_last = 0, depth_sum = 0;
  void add(int64_t micros, int64_t depth);
};

// Running totals the controller keeps since it started (Slurm's sdiag counters).
struct SchedulerCounters {
  PassTally passes;                // every scheduling pass (full and quick)
  PassTally backfill;              // full (backfill) passes
  int64_t bf_started = 0;          // jobs started by a full pass (later than their turn)
  Time bf_last_time = 0;           // when the last full pass ran
  int64_t jobs_submitted = 0, jobs_started = 0, jobs_completed = 0, jobs_canceled = 0, jobs_failed = 0;
  Time started_at = 0;             // the controller's start
};

// One scheduling pass, as the dashboard lists the recent ones.
struct PassRecord {
  Time at = 0;
  bool full = false;                 // a full (backfill) pass, else a quick one
  int64_t micros = 0;
  int32_t considered = 0, started = 0, reserved = 0, preempted = 0;
};

// One kind of request (RPC, HTTP route): how many, and how long they took in all.
struct RequestCount {
  int64_t count = 0;
  double seconds = 0;
};

struct MetricsInput {
  const ClusterState* state = nullptr;
  SchedulerCounters sched;
  std::map<std::string, RequestCount> rpcs;  // by request type
  RequestCount journal_commits;              // durable commits of the journal
  Time now = 0;
};

// The whole page, ending in "# EOF".
std::string metrics_text(const MetricsInput& in);

// The same in two steps: what the page says, taken from the state (on the thread that owns
// it; a walk over the jobs and nodes), then its text (the larger part of the work, on any
// thread: the snapshot holds copies, nothing of the state).
struct MetricsSnapshot;
std::shared_ptr<const MetricsSnapshot> metrics_snapshot(const MetricsInput& in);
std::string metrics_text(const MetricsSnapshot& snapshot);

}  // namespace hq
