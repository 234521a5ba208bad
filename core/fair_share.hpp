// Fair share from usage (Slurm's priority/multifactor): each association's usage is what
// its jobs used (billing TRES x seconds x their QOS's UsageFactor) decayed with a half-life,
// summed up the account tree; from shares and usage, Fair Tree (the default) ranks every
// user association (FairShare = rank / user associations, the first 1.0), or the classic
// formula gives F = 2^(-effective usage / normalised shares / dampening). With a usage
// reset period, only what ran since its last boundary counts. The result is
// what sshare prints and what the fair-share priority factor reads. Usage comes from the
// accounting store's job records, so a controller that lost its state keeps fair share.
// Pure; thread-safe (const).
#pragma once
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "core/acct_model.hpp"
#include "core/time.hpp"
#include "core/tres_counts.hpp"

namespace hq {

struct FairShareConfig {
  Duration half_life = 7 * 86400;  // PriorityDecayHalfLife; 0: no decay
  bool classic = false;            // PriorityFlags=NO_FAIR_TREE
  double dampening = 1.0;          // FairShareDampeningFactor (classic)
  Time reset_at = 0;               // PriorityUsageResetPeriod's last boundary: nothing before it counts; 0 none
  bool operator==(const FairShareConfig&) const = default;
};

// One job's use, as the store keeps it.
struct UsageRecord {
  std::string account, user, partition;
  std::string qos;           // its QOS (a QOS's GrpTRESMins and GrpWall count what ran in it)
  Time start = 0, end = 0;   // end 0: still running (counts up to now, or `cap`)
  Time cap = 0;              // a running job's limit end: an open record counts no further; 0 none
  int64_t billing = 0;       // CPUs (Slurm's default billing weights)
  TresCounts tres{};         // the other TRES it held (cpu, mem, node, gres/gpu; billing is `billing`)
  double factor = 1.0;       // its QOS's UsageFactor
};

// The record's run in seconds, decayed to `now`: each second of its run counts
// 2^-(age / half_life) (the exact integral of Slurm's per-period decay).
double decayed_seconds(const UsageRecord& r, Time now, Duration half_life);
// Its usage in billing-seconds (x its UsageFactor), decayed.
double decayed_usage(const UsageRecord& r, Time now, Duration half_life);

// What jobs used, decayed: TRES-seconds by kind (billing's is the raw usage) and wall-clock
// seconds, each x the job's QOS's UsageFactor, as Slurm's _apply_new_usage counts them.
struct UsedSum {
  TresUsage tres{};
  double wall = 0;
  double billing() const { return tres[kTresBilling]; }
  // `r`'s run of `seconds` (decayed) added.
  void add(const UsageRecord& r, double seconds);
  void add(const UsedSum& other);
};

// One association as sshare shows it, in tree order.
struct ShareRow {
  uint32_t assoc = 0;
  int depth = 0;                 // 0: the cluster's root
  std::string account, user, partition;
  std::string parent;            // the account above it (a user row's: its account; root's: "")
  int64_t raw_shares = 1;        // kSharesParent: "parent"
  double norm_shares = 0;        // Fair Tree: among its siblings; classic: of the whole tree
  double raw_usage = 0;          // decayed billing-seconds, its subtree's
  UsedSum used;                  // its subtree's jobs' decayed TRES-seconds and wall time (GrpTRESMins', GrpWall's)
  double norm_usage = 0;         // of the whole tree's
  double effective_usage = 0;    // Fair Tree: among its siblings; classic: with its parent's
  double level_fs = 0;           // Fair Tree: norm_shares / effective_usage (infinity: no usage)
  double fair_share = 0;         // user rows: the factor, 0..1
  std::string grp_tres_mins;     // its GrpTRESMins limit as sacctmgr prints it
  std::string tres_run_mins;     // TRES x minutes left of its running jobs (the controller fills it in)
  TresCounts run_seconds{};      // the same in TRES-seconds, by kind (the controller fills it in)
};

class FairShare {
 public:
  FairShare() = default;
  FairShare(const AcctModel& model, const std::string& cluster, const std::vector<UsageRecord>& records, Time now,
            const FairShareConfig& cfg);
  const std::vector<ShareRow>& rows() const { return rows_; }
  // The fair-share factor of `user` in `account` (and partition, when it has its own
  // association there; no account: the user's default), 0 when it has none.
  double factor(const std::string& user, const std::string& account, const std::string& partition) const;
  // The rows from `user`'s association in `account` (partition's, else the account's) up to
  // the root; empty when it has none.
  std::vector<int32_t> path(const std::string& user, const std::string& account, const std::string& partition) const;
  // What jobs of one QOS in one partition used, decayed as an association's, and not
  // decayed (for a QOS with Flags=NoDecay).
  struct QosUsage {
    UsedSum decayed, flat;
  };
  // By (QOS, partition): AcctPolicy credits each to the job's QOS and to its partition's
  // QOS when that is another, as Slurm does.
  const std::map<std::pair<std::string, std::string>, QosUsage>& qos_usage() const { return qos_usage_; }

 private:
  int32_t user_row(const std::string& user, const std::string& account, const std::string& partition) const;
  int32_t user_row_in(const std::string& user, const std::string& account, const std::string& partition) const;
  void fair_tree(const std::vector<std::vector<int32_t>>& children);
  void classic(const std::vector<std::vector<int32_t>>& children, double dampening);

  std::vector<ShareRow> rows_;
  std::vector<int32_t> parent_;  // by row
  std::unordered_map<std::string, int32_t> user_rows_;  // account \0 user \0 partition
  std::unordered_map<std::string, std::string> default_account_;  // for jobs without an account
  std::map<std::pair<std::string, std::string>, QosUsage> qos_usage_;
};

}  // namespace hq
