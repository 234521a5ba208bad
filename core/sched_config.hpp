// Scheduler knobs: the policy, backfill parameters (Slurm's SchedulerParameters names
// and defaults) and the multifactor priority weights. Plain values; immutable after load.
#pragma once
#include <cstdint>
#include <string_view>

#include "core/time.hpp"

namespace hq {

// fifo: strict priority, nothing starts past a blocked job of the same partition.
// easy: backfill around one reservation (the first blocked job).
// backfill: reservations for blocked jobs up to bf_max_job_test (Slurm's sched/backfill).
enum class SchedPolicy { kFifo, kEasy, kBackfill };
std::string_view sched_policy_name(SchedPolicy p);
bool parse_sched_policy(std::string_view name, SchedPolicy& out);

// PriorityUsageResetPeriod: usage counts only from the last such boundary (local time:
// midnight; Sunday's; the 1st of the month, of the quarter, of January). kNone: never reset.
enum class UsageReset { kNone, kDaily, kWeekly, kMonthly, kQuarterly, kYearly };
std::string_view usage_reset_name(UsageReset r);  // "none", "daily", ...
bool parse_usage_reset(std::string_view name, UsageReset& out);

struct PriorityWeights {
  int64_t age = 1000;
  int64_t job_size = 0;
  int64_t partition = 1000;
  int64_t qos = 0;                     // the job's QOS Priority over the highest QOS Priority
  int64_t fairshare = 0;               // accounting's fair-share factor (core/fair_share.hpp)
  Duration max_age = 7 * 86400;        // PriorityMaxAge: age factor reaches 1.0 here
  bool favor_small = false;            // PriorityFavorSmall
  // Fair share from usage (core/fair_share.hpp).
  Duration decay_half_life = 7 * 86400;  // PriorityDecayHalfLife; 0: no decay
  Duration calc_period = 300;          // PriorityCalcPeriod: how often usage is counted again
  bool fair_share_classic = false;     // PriorityFlags=NO_FAIR_TREE
  int64_t fair_share_dampening = 1;    // FairShareDampeningFactor (classic)
  UsageReset usage_reset = UsageReset::kNone;  // PriorityUsageResetPeriod
};

struct SchedulerConfig {
  SchedPolicy policy = SchedPolicy::kBackfill;
  Duration sched_interval = 60;        // periodic full pass
  int32_t default_queue_depth = 100;   // jobs an event-triggered quick pass looks at
  Duration bf_interval = 30;           // periodic backfill pass
  Duration bf_window = 1440 * 60;      // how far ahead reservations are planned
  Duration bf_resolution = 60;         // time map granularity
  int32_t bf_max_job_test = 500;       // jobs tested past the first blocked one, per pass
  int32_t bf_max_job_start = 0;        // jobs started by backfill per pass; 0: no limit
  int32_t bf_max_job_user = 0;         // jobs tested per user; 0: no limit
  int32_t bf_max_job_part = 0;         // jobs tested per partition; 0: no limit
  int32_t bf_job_part_count_reserve = 0;  // reservations per partition; 0: every tested job
  Duration bf_min_age_reserve = 0;     // no reservation for jobs pending less than this
  int64_t bf_min_prio_reserve = 0;     // no reservation below this priority
  // hq's fragmentation oracle (block topology): a job that could start now may instead be
  // placed up to this long after it became eligible where it breaks fewer whole blocks
  // (Slurm 24.11's bf_topopt_enable, bounded). 0: off, Slurm's best fit.
  Duration bf_topopt_delay = 0;
  int32_t bf_topopt_iterations = 10;   // blocks scored per job (Slurm's bf_topopt_iterations, 2-30)
  Duration max_switch_wait = 300;      // the longest a job waits for its --switches count (Slurm's default)
  bool preempt_partition_prio = false; // PreemptType=preempt/partition_prio
  Duration preempt_exempt_time = 0;    // running jobs younger than this are not preempted
  PriorityWeights weights;
};

}  // namespace hq
