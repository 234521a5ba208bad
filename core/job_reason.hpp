// Why a job waits or how it ended (JobReason, Slurm's job_state_reason names), and why
// the controller asks an agent to kill a running job (KillReason). Typed everywhere inside;
// the names below are only for the edges (wire and journal encoding, client output).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hq {

enum class JobReason : uint8_t {
  kNone,                      // not looked at yet, running, or ended without a failure
  // Pending: what the scheduler found (core/scheduler.cpp).
  kPriority, kResources, kDependency, kDependencyNeverSatisfied, kJobHeldUser, kJobHeldAdmin,
  kBeginTime, kJobArrayTaskLimit, kPartitionConfig, kPartitionDown, kPartitionInactive,
  kPartitionTimeLimit, kPartitionNodeLimit, kReqNodeNotAvail, kBadConstraints,
  kPreempted,                 // requeued by a preemption, or ended PREEMPTED
  // Ends: what the agent or the controller saw.
  kNonZeroExitCode, kRaisedSignal, kOutOfMemory, kTimeLimit, kNodeDown, kJobLaunchFailure,
  kPrologFailure,             // hq's own: the node's prolog failed (Slurm has no name for it)
  kNodeFenced,                // hq's own: its agent lost the controller and killed it (fence_timeout)
  kDeadLine,                  // ended DEADLINE: it could no longer finish before its --deadline
  kInactiveLimit,             // an srun/salloc allocation whose holder went silent (InactiveLimit)
  // Pending on advance reservations (core/advance_reservation.hpp): its own has not begun
  // (or is gone); every node it could use is reserved over its time limit (MAINT or not).
  kReservation, kResvMaint, kResvOther,
  kJobLost,                   // only in journals of early versions (a job its agent no longer had)
  // Pending on accounting limits (core/acct_policy.hpp). Blocks of five in TRES order (cpu,
  // mem, node, gres/gpu, billing): tres_reason(first of the block, kind) picks one.
  kAssocGrpCpu, kAssocGrpMem, kAssocGrpNode, kAssocGrpGres, kAssocGrpBilling,
  kAssocGrpCpuRunMin, kAssocGrpMemRunMin, kAssocGrpNodeRunMin, kAssocGrpGresRunMin, kAssocGrpBillingRunMin,
  kAssocMaxCpuPerJob, kAssocMaxMemPerJob, kAssocMaxNodePerJob, kAssocMaxGresPerJob, kAssocMaxBillingPerJob,
  kQosGrpCpu, kQosGrpMem, kQosGrpNode, kQosGrpGres, kQosGrpBilling,
  kQosGrpCpuRunMin, kQosGrpMemRunMin, kQosGrpNodeRunMin, kQosGrpGresRunMin, kQosGrpBillingRunMin,
  kQosMaxCpuPerJob, kQosMaxMemPerJob, kQosMaxNodePerJob, kQosMaxGresPerJob, kQosMaxBillingPerJob,
  kQosMaxCpuPerUser, kQosMaxMemPerUser, kQosMaxNodePerUser, kQosMaxGresPerUser, kQosMaxBillingPerUser,
  kQosMaxCpuPerAccount, kQosMaxMemPerAccount, kQosMaxNodePerAccount, kQosMaxGresPerAccount, kQosMaxBillingPerAccount,
  kAssocGrpJobs, kAssocGrpSubmitJobs, kAssocMaxJobs, kAssocMaxSubmitJobs, kAssocMaxWall,
  kQosGrpJobs, kQosGrpSubmitJobs, kQosMaxJobsPerUser, kQosMaxSubmitJobsPerUser, kQosMaxJobsPerAccount,
  kQosMaxSubmitJobsPerAccount, kQosMaxWall,
  // GrpTRESMins: decayed usage plus what running jobs and this one may still use.
  kAssocGrpCpuMins, kAssocGrpMemMins, kAssocGrpNodeMins, kAssocGrpGresMins, kAssocGrpBillingMins,
  // MaxTRESPerNode (the node entries are never given: a node holds one node), MaxTRESMins
  // per job (TRES times the time limit), and a QOS's MinTRESPerJob.
  kAssocMaxCpuPerNode, kAssocMaxMemPerNode, kAssocMaxNodePerNode, kAssocMaxGresPerNode, kAssocMaxBillingPerNode,
  kAssocMaxCpuMinsPerJob, kAssocMaxMemMinsPerJob, kAssocMaxNodeMinsPerJob, kAssocMaxGresMinsPerJob,
  kAssocMaxBillingMinsPerJob,
  kQosMaxCpuPerNode, kQosMaxMemPerNode, kQosMaxNodePerNode, kQosMaxGresPerNode, kQosMaxBillingPerNode,
  kQosMaxCpuMinsPerJob, kQosMaxMemMinsPerJob, kQosMaxNodeMinsPerJob, kQosMaxGresMinsPerJob, kQosMaxBillingMinsPerJob,
  kQosMinCpu, kQosMinMem, kQosMinNode, kQosMinGres, kQosMinBilling,
  kAssocGrpWall,
  // A QOS's GrpTRESMins and GrpWall: what its jobs used (decayed), as the association's.
  kQosGrpCpuMins, kQosGrpMemMins, kQosGrpNodeMins, kQosGrpGresMins, kQosGrpBillingMins,
  kQosGrpWall,
  // A QOS's MaxTRESRunMinsPerUser / PerAccount (Slurm 24.05): TRES x time limit left of the
  // user's (account's) running jobs in the QOS, and this job's.
  kQosMaxCpuRunMinsPerUser, kQosMaxMemRunMinsPerUser, kQosMaxNodeRunMinsPerUser, kQosMaxGresRunMinsPerUser,
  kQosMaxBillingRunMinsPerUser,
  kQosMaxCpuRunMinsPerAccount, kQosMaxMemRunMinsPerAccount, kQosMaxNodeRunMinsPerAccount, kQosMaxGresRunMinsPerAccount,
  kQosMaxBillingRunMinsPerAccount,
};
inline constexpr size_t kJobReasonCount = static_cast<size_t>(JobReason::kQosMaxBillingRunMinsPerAccount) + 1;
// The reason of TRES kind `kind` (0 cpu .. 4 billing) in the block that `first` begins.
constexpr JobReason tres_reason(JobReason first, int kind) {
  return static_cast<JobReason>(static_cast<int>(first) + kind);
}

// "None", "Priority", ... as squeue, scontrol and the journal spell them.
std::string_view to_string(JobReason r);
// The exact name (case matters: these are the names hq writes); nullopt for any other text.
std::optional<JobReason> parse_job_reason(std::string_view name);

// KillJob's reason: a user's cancel, the time-limit backstop, a job the controller does not
// know (SIGKILL at once), a preemption's grace start, a requeue.
enum class KillReason : uint8_t { kCancel, kTimeout, kUnknown, kPreempt, kRequeue };
inline constexpr size_t kKillReasonCount = static_cast<size_t>(KillReason::kRequeue) + 1;

std::string_view to_string(KillReason r);  // "cancel", "timeout", ...
std::optional<KillReason> parse_kill_reason(std::string_view name);

}  // namespace hq
