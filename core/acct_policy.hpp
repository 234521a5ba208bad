// Accounting enforcement, as Slurm's AccountingStorageEnforce: which account and QOS a job
// gets at submit (the user's default account; the association's default QOS, else normal),
// which submissions are refused (no association, a QOS it may not use, a submit limit, a
// per-job limit of a DenyOnLimit QOS), and which limit keeps a queued job pending, with
// Slurm's reasons (AssocMaxJobsLimit, QOSGrpCpuLimit, ...). AcctPolicy is compiled once per
// change of the model, for one cluster, and shared read-only by the controller and its
// scheduler passes; AcctUsage counts what the queue and running jobs hold against it, for
// one pass or one submission. Limits of the job's QOS take precedence over the same
// limits of its associations, as in Slurm. Pure; AcctPolicy is thread-safe (const),
// AcctUsage belongs to its caller.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/acct_model.hpp"
#include "core/fair_share.hpp"
#include "core/sreport.hpp"
#include "core/job.hpp"
#include "core/priority.hpp"
#include "core/status.hpp"

namespace hq {

// Which parts apply ([accounting] enforce, Slurm's words): associations (a job needs an
// association), limits and qos (each implies associations), safe (accepted; no effect
// until usage limits exist).
struct AcctEnforce {
  bool associations = false, limits = false, qos = false, safe = false;
  bool operator==(const AcctEnforce&) const = default;
};
// "associations,limits,qos", "all", "none" or ""; errors name the unknown word.
Result<AcctEnforce> parse_acct_enforce(std::string_view text);
// Slurm's scontrol show config form ("associations,limits,qos", "none").
std::string acct_enforce_name(const AcctEnforce& e);

// A job's QOS list (--qos a,b: tried in turn, like several partitions), names in order;
// a single name gives itself, "" nothing. first_qos: the first (the one a list starts in
// when nothing else decides).
std::vector<std::string> qos_list(const std::string& qos);
std::string first_qos(const std::string& qos);

// What a queued job asks for (mem from --mem or --mem-per-cpu; 0 when not given).
TresCounts requested_tres(const JobSpec& spec);
// What a running job holds.
TresCounts held_tres(const Job& job);

// A job's usage as fair share counts it (account as recorded, CPUs held, run time).
UsageRecord usage_record(const Job& job);
// A job's record as sreport counts it: its association, times (an end only once it ended),
// the CPUs it asked for and the TRES it held (cpu, mem, node, billing, gres/gpu).
UsageJob sreport_usage_job(const Job& job);

class AcctPolicy final : public AcctFactors {
 public:
  // `shares`: fair share from usage (none: every fair-share factor is 0); `partition_qos`:
  // each partition's QOS (Slurm's PartitionName= QOS=), whose limits apply to every job
  // there (a name the model does not have: none).
  AcctPolicy(const AcctModel& model, const std::string& cluster, AcctEnforce enforce,
             std::shared_ptr<const FairShare> shares = nullptr,
             const std::unordered_map<std::string, std::string>& partition_qos = {});
  const AcctEnforce& enforce() const { return enforce_; }
  // Whether limits are enforced and some association or QOS sets one (else nothing is counted).
  bool has_limits() const { return has_limits_; }
  // Whether some MaxSubmitJobs / GrpSubmitJobs / MaxSubmitJobsPer* applies (submissions count the queue).
  bool has_submit_limits() const { return has_submit_limits_; }
  // Whether limits are enforced and some association or QOS sets GrpTRESMins or GrpWall (read from usage).
  bool has_usage_limits() const { return has_usage_limits_; }

  // At submit: fills in the account (the user's default when none is given) and QOS (the
  // association's default, its only one, else "normal") and checks them, in sbatch's words:
  // "Invalid account or account/partition combination specified", "Invalid qos specification".
  // A list (--qos a,b) must name only QOS the association may use; it is kept highest
  // Priority first, the order the scheduler tries them in.
  Status choose(JobSpec& spec, const std::vector<std::string>& partitions) const;
  // The time limit of a job that gave none: `limit` (the partition's) capped by the MaxWall
  // of its QOS, else its association, and by what its MaxTRESMins leave for the TRES it
  // asks for (as Slurm sets a job's limit to fit them). A list's job: the tightest of its QOS.
  Duration default_limit(const JobSpec& spec, const std::string& partition, Duration limit) const;

  // Priority factors: the job's association's fair share (its account, else the user's
  // default), and its QOS's Priority relative to the highest QOS Priority (a list's first).
  double fairshare(const Job& job) const override;
  double qos(const Job& job) const override;
  const FairShare* shares() const { return shares_.get(); }
  // The QOS's UsageFactor by name (1 for one not known), for usage records.
  double usage_factor(const std::string& qos) const;
  // What a QOS used (TRES-seconds, wall seconds) as its GrpTRESMins and GrpWall count it:
  // its jobs' and, for a partition's QOS, its partition's other jobs'; nothing without usage.
  UsedSum qos_used(const std::string& qos) const;

 private:
  friend class AcctUsage;
  // One association, with what enforcement reads: Max limits as inherited, Grp limits its own.
  struct Assoc {
    int32_t parent = -1;
    int64_t max_jobs = kNoLimit, max_submit = kNoLimit, max_wall = kNoLimit;  // wall in seconds
    int64_t grp_jobs = kNoLimit, grp_submit = kNoLimit;
    TresCounts max_tres{}, grp_tres{}, grp_run_mins{};
    TresCounts max_per_node{}, max_mins{};  // MaxTRESPerNode, MaxTRESMins (per job), as inherited
    TresCounts grp_mins{};     // GrpTRESMins
    TresCounts used_mins{};    // its subtree's decayed usage, in TRES-minutes (from fair share)
    int64_t grp_wall = kNoLimit;  // GrpWall, minutes of its subtree's jobs' wall time (decayed)
    int64_t used_wall = 0;        // those minutes used (from fair share)
    std::vector<int32_t> qos;  // allowed, by index
    int32_t def_qos = -1;
  };
  struct Qos {
    std::string name;
    bool deny_on_limit = false;
    bool over_part_qos = false;  // Flags=OverPartQOS: its limits come before its partition's QOS's
    int64_t priority = 0;
    double usage_factor = 1.0;
    int64_t grp_jobs = kNoLimit, grp_submit = kNoLimit, max_wall = kNoLimit;
    int64_t max_jobs_pu = kNoLimit, max_jobs_pa = kNoLimit, max_submit_pu = kNoLimit, max_submit_pa = kNoLimit;
    TresCounts grp_tres{}, grp_run_mins{}, max_tres{}, max_tres_pu{}, max_tres_pa{};
    TresCounts max_per_node{}, max_mins{}, min_tres{};  // MaxTRESPerNode, MaxTRESMinsPerJob, MinTRESPerJob
    TresCounts grp_mins{};        // GrpTRESMins
    bool no_decay = false;        // Flags=NoDecay: its usage counts undecayed
    UsedSum used;                 // credited to it (credit_qos_usage)
    TresCounts used_mins{};       // its jobs' decayed usage, in TRES-minutes (from fair share)
    int64_t grp_wall = kNoLimit;  // GrpWall, minutes of its jobs' wall time (decayed)
    int64_t used_wall = 0;        // those minutes used
    TresCounts max_run_mins_pu{}, max_run_mins_pa{};  // MaxTRESRunMinsPerUser / PerAccount
  };
  // The job's association (its partition's, else the account's for the user), or -1.
  int32_t assoc_of(const std::string& user, const std::string& account, const std::string& partition) const;
  int32_t qos_of(const std::string& name) const;
  Status choose_qos(JobSpec& spec, const Assoc& a) const;
  Status choose_qos_list(JobSpec& spec, const Assoc& a) const;
  void credit_qos_usage(const FairShare& shares);
  Duration default_limit_in(const JobSpec& spec, const std::string& qos, const std::string& partition, Duration limit) const;
  // The QOS whose limits apply to a job of QOS `qos` in `partition`, in Slurm's order
  // (acct_policy_set_qos_order): the partition's QOS first, unless the job's has
  // OverPartQOS; the second is null when there is one QOS (or none).
  std::pair<const Qos*, const Qos*> qos_order(const std::string& qos, const std::string& partition) const;
  // The limits of `first`, with those it does not set taken from `second` (for shadowing
  // the associations' limits).
  static Qos first_set(const Qos& first, const Qos* second);
  // The limits that apply from `first` then `second`: `first` itself when there is no
  // second, else their first_set, kept in `merged`.
  static const Qos* limits_of(const Qos* first, const Qos* second, std::optional<Qos>& merged);

  AcctEnforce enforce_;
  bool has_limits_ = false, has_submit_limits_ = false, has_usage_limits_ = false;
  std::vector<Assoc> assocs_;
  std::vector<Qos> qos_;
  std::unordered_map<std::string, int32_t> assoc_index_;  // account \0 user \0 partition
  std::unordered_map<std::string, int32_t> qos_index_;
  std::unordered_map<std::string, int32_t> part_qos_;  // partition -> its QOS
  std::unordered_map<std::string, std::string> default_account_;  // user -> account
  std::shared_ptr<const FairShare> shares_;
  int64_t max_qos_priority_ = 0;
};

// What jobs hold against the limits of one policy: queued and running jobs toward submit
// limits, running ones toward the rest. Built for one scheduling pass or one submission.
class AcctUsage {
 public:
  // What some jobs hold: counted in a job (running), submitted (pending or running), TRES of
  // running jobs, and their TRES x minutes left.
  struct Counts {
    int64_t jobs = 0, submitted = 0;
    TresCounts tres{}, run_mins{};
  };

  AcctUsage(const AcctPolicy& policy, Time now) : p_(policy), now_(now) {}
  const AcctPolicy& policy() const { return p_; }
  // A pending or running job (others count for nothing; a pending job of a QOS list counts
  // as submitted in each of its QOS, and once in its associations).
  void add(const Job& job);
  // A job the pass starts now in `partition` with `alloc` and `limit`, under `qos` (empty:
  // its own): it counts as running from here on, with what it is given.
  void start(const Job& job, const std::string& partition, const std::vector<NodeAlloc>& alloc, Duration limit,
             const std::string& qos = {});
  // Why a pending job may not start now on account of a limit (kNone: none holds it). A
  // job of a QOS list may start under the first of them whose limits allow it (`chosen`
  // gets its name); when none does, the first's reason.
  JobReason blocked(const Job& job, std::string* chosen = nullptr) const;
  // Why `count` more jobs like `job` (a submission, an array's tasks) are refused: a submit
  // limit, or a per-job limit of a DenyOnLimit QOS (kNone: accepted). A QOS list's job is
  // accepted when one of them accepts it.
  JobReason refused(const Job& job, int64_t count) const;

  // For scontrol show assoc_mgr: an association's subtree (user "" for an account's own),
  // a QOS's, and a QOS's by user (uid) and by account, in order; nullptr / empty: nothing held.
  const Counts* assoc_counts(const std::string& account, const std::string& user, const std::string& partition) const;
  const Counts* qos_counts(const std::string& qos) const;
  std::vector<std::pair<uint32_t, Counts>> qos_users(const std::string& qos) const;
  std::vector<std::pair<std::string, Counts>> qos_accounts(const std::string& qos) const;

 private:
  // Into the counts of its associations, `qos` and its partition's QOS; not `whole`: of
  // `qos` alone (a list's second and later QOS).
  void count(const Job& job, const std::string& partition, const std::string& qos, int64_t submitted, int64_t jobs,
             const TresCounts& tres, int64_t minutes, bool whole = true);
  JobReason blocked_in(const Job& job, const std::string& qos) const;
  JobReason refused_in(const Job& job, const std::string& qos, int64_t count) const;
  // `shadow`: a QOS before this one; the limits it sets are its, not this one's.
  JobReason qos_blocked(const AcctPolicy::Qos& q, const AcctPolicy::Qos* shadow, const Job& job, const TresCounts& tres,
                        int64_t run_mins) const;
  JobReason qos_refused(const AcctPolicy::Qos& q, const AcctPolicy::Qos* shadow, const Job& job, int64_t count) const;
  JobReason assoc_blocked(int32_t assoc, const AcctPolicy::Qos* q, const Job& job, const TresCounts& tres,
                          int64_t run_mins) const;
  // The per-job limits (a DenyOnLimit refusal): the first QOS's, the second's it does not
  // set, then the association's neither sets.
  JobReason per_job(int32_t assoc, const AcctPolicy::Qos* first, const AcctPolicy::Qos* second, const Job& job,
                    const TresCounts& tres) const;
  // MaxTRESPerNode, MaxTRESMins and MinTRES of QOS `q` (those `shadow` does not set).
  static JobReason qos_shape(const AcctPolicy::Qos& q, const AcctPolicy::Qos* shadow, const Job& job,
                             const TresCounts& tres);
  // MaxTRESPerNode and MaxTRESMins of association `own` (those the QOS `q` does not set).
  static JobReason assoc_shape(const AcctPolicy::Assoc& own, const AcctPolicy::Qos* q, const Job& job,
                               const TresCounts& tres);
  const Counts* user_in_qos(int32_t qos, uint32_t uid) const;
  const Counts* account_in_qos(int32_t qos, const std::string& account) const;

  const AcctPolicy& p_;
  Time now_;
  std::unordered_map<int32_t, Counts> assoc_;  // an association's subtree (jobs below it too)
  std::unordered_map<int32_t, Counts> qos_;
  std::unordered_map<uint64_t, Counts> user_in_qos_;         // qos << 32 | uid
  std::unordered_map<std::string, Counts> account_in_qos_;  // qos \0 account
};

}  // namespace hq
