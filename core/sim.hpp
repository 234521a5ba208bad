// Trace replay (hq sim): Standard Workload Format jobs through the real Scheduler with
// a simulated clock; no network, no processes. Conventions follow the literature
// (issue 4 §7): requested time is the limit, run time (capped at the limit) the
// duration; completions at a timestamp, then arrivals, then one scheduling pass.
// Pure: the caller injects a CPU clock for measuring scheduler time. Not thread-safe.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.hpp"
#include "core/scheduler.hpp"
#include "core/topology.hpp"

namespace hq {

struct SwfJob {
  uint64_t id = 0;
  Time submit = 0;
  Duration run = 0;
  int32_t procs = 0;      // requested processors (field 8), else allocated (field 5)
  Duration limit = 0;     // requested time (field 9); <= 0: run time
  uint32_t user = 0;
};

struct SwfTrace {
  std::vector<SwfJob> jobs;   // file order
  bool whole_nodes = false;   // header says sizes are whole nodes x CPUs per node
  int64_t bad_lines = 0;
};

// Parses SWF text; malformed lines are counted, not fatal.
SwfTrace parse_swf(std::string_view text);

struct SimOptions {
  bool whole_nodes = false;   // a job of P processors takes ceil(P / node CPUs) whole nodes
  bool record_starts = false;
  bool topology_off = false;  // the scheduler ignores [topology]; spans are still measured by it
  int32_t large_nodes = 2;    // jobs of this many nodes or more are "large" (their waits apart)
};

struct SimStart {
  uint64_t id;
  Time submit, start, end;
  int32_t nodes;
};

struct SimResult {
  int64_t jobs = 0, skipped = 0;
  double utilization = 0;      // CPU-seconds used / (CPUs x makespan)
  double mean_wait = 0, max_wait = 0, mean_bounded_slowdown = 0;
  Duration makespan = 0;
  double sched_cpu_seconds = 0;
  int64_t passes = 0;
  std::vector<SimStart> starts;  // when record_starts
  // With a [topology] (measured whether the scheduler uses it or not):
  bool blocks = false;
  double mean_blocks = 0;        // base blocks a job's nodes are in, on average
  double mean_blocks_large = 0;  // the same over large jobs
  int64_t large_jobs = 0;
  double mean_fragmentation = 0; // Slurm's score of the idle nodes (core/block_usage), averaged over time
  int64_t held = 0;              // times the fragmentation oracle put a job off (a job may count in several passes)
  double large_mean_wait = 0;
  double large_within_hour = 0;  // share of large jobs started within an hour of submission
};

// `cpu_clock` returns seconds of CPU time (for scheduler cost); may be empty.
Result<SimResult> simulate(const SwfTrace& trace, const ClusterConfig& config, const SimOptions& opts,
                           const std::function<double()>& cpu_clock);

}  // namespace hq
