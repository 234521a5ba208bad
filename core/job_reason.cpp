// Names of job and kill reasons, in enumerator order.
#include "core/job_reason.hpp"

#include <algorithm>
#include <array>

namespace hq {
namespace {

constexpr std::array<std::string_view, kJobReasonCount> kJobReasons{
    "None", "Priority", "Resources", "Dependency", "DependencyNeverSatisfied", "JobHeldUser", "JobHeldAdmin",
    "BeginTime", "JobArrayTaskLimit", "PartitionConfig", "PartitionDown", "PartitionInactive",
    "PartitionTimeLimit", "PartitionNodeLimit", "ReqNodeNotAvail", "BadConstraints",
    "Preempted",
    "NonZeroExitCode", "RaisedSignal", "OutOfMemory", "TimeLimit", "NodeDown", "JobLaunchFailure",
    "PrologFailure", "NodeFenced", "DeadLine", "InactiveLimit",
    "Reservation", "ReqNodeNotAvail, Reserved for maintenance", "ReqNodeNotAvail, May be reserved for other job",
    "JobLost",
    "AssocGrpCpuLimit", "AssocGrpMemLimit", "AssocGrpNodeLimit", "AssocGrpGRES", "AssocGrpBilling",
    "AssocGrpCPURunMinutesLimit", "AssocGrpMemRunMinutes", "AssocGrpNodeRunMinutes", "AssocGrpGRESRunMinutes",
    "AssocGrpBillingRunMinutes",
    "AssocMaxCpuPerJobLimit", "AssocMaxMemPerJob", "AssocMaxNodePerJobLimit", "AssocMaxGRESPerJob", "AssocMaxBillingPerJob",
    "QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit", "QOSGrpGRES", "QOSGrpBilling",
    "QOSGrpCPURunMinutesLimit", "QOSGrpMemoryRunMinutes", "QOSGrpNodeRunMinutes", "QOSGrpGRESRunMinutes",
    "QOSGrpBillingRunMinutes",
    "QOSMaxCpuPerJobLimit", "QOSMaxMemoryPerJob", "QOSMaxNodePerJobLimit", "QOSMaxGRESPerJob", "QOSMaxBillingPerJob",
    "QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerUser", "QOSMaxNodePerUserLimit", "QOSMaxGRESPerUser", "QOSMaxBillingPerUser",
    "MaxCpuPerAccount", "MaxMemoryPerAccount", "MaxNodePerAccount", "MaxGRESPerAccount", "MaxBillingPerAccount",
    "AssocGrpJobsLimit", "AssocGrpSubmitJobsLimit", "AssocMaxJobsLimit", "AssocMaxSubmitJobLimit",
    "AssocMaxWallDurationPerJobLimit",
    "QOSGrpJobsLimit", "QOSGrpSubmitJobsLimit", "QOSMaxJobsPerUserLimit", "QOSMaxSubmitJobPerUserLimit", "MaxJobsPerAccount",
    "MaxSubmitJobsPerAccount", "QOSMaxWallDurationPerJobLimit",
    "AssocGrpCPUMinutesLimit", "AssocGrpMemMinutes", "AssocGrpNodeMinutes", "AssocGrpGRESMinutes", "AssocGrpBillingMinutes",
    // Slurm has no per-node node limit; hq never gives these two "...NodePerNode" names.
    "AssocMaxCpuPerNode", "AssocMaxMemPerNode", "AssocMaxNodePerNode", "AssocMaxGRESPerNode", "AssocMaxBillingPerNode",
    "AssocMaxCpuMinutesPerJobLimit", "AssocMaxMemMinutesPerJob", "AssocMaxNodeMinutesPerJob", "AssocMaxGRESMinutesPerJob",
    "AssocMaxBillingMinutesPerJob",
    "QOSMaxCpuPerNode", "QOSMaxMemoryPerNode", "QOSMaxNodePerNode", "QOSMaxGRESPerNode", "QOSMaxBillingPerNode",
    "QOSMaxCpuMinutesPerJobLimit", "QOSMaxMemoryMinutesPerJob", "QOSMaxNodeMinutesPerJob", "QOSMaxGRESMinutesPerJob",
    "QOSMaxBillingMinutesPerJob",
    "QOSMinCpuNotSatisfied", "QOSMinMemory", "QOSMinNode", "QOSMinGRES", "QOSMinBilling",
    "AssocGrpWallLimit",
    "QOSGrpCPUMinutesLimit", "QOSGrpMemoryMinutes", "QOSGrpNodeMinutes", "QOSGrpGRESMinutes", "QOSGrpBillingMinutes",
    "QOSGrpWallLimit",
    "MaxCpuRunMinsPerUser", "MaxMemoryRunMinsPerUser", "MaxNodeRunMinsPerUser", "MaxGRESRunMinsPerUser",
    "MaxBillingRunMinsPerUser",
    "MaxCpuRunMinsPerAccount", "MaxMemoryRunMinsPerAccount", "MaxNodeRunMinsPerAccount", "MaxGRESRunMinsPerAccount",
    "MaxBillingRunMinsPerAccount",
};
constexpr std::array<std::string_view, kKillReasonCount> kKillReasons{"cancel", "timeout", "unknown", "preempt", "requeue"};

template <size_t N>
constexpr bool all_named(const std::array<std::string_view, N>& names) {
  return std::none_of(names.begin(), names.end(), [](std::string_view n) { return n.empty(); });
}
static_assert(all_named(kJobReasons) && all_named(kKillReasons), "a reason without a name");

// The enumerator whose name is exactly `name` (the tables are small; the common names come first).
template <typename E, size_t N>
std::optional<E> find_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == name) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace

std::string_view to_string(JobReason r) { return kJobReasons[static_cast<size_t>(r)]; }
std::optional<JobReason> parse_job_reason(std::string_view name) { return find_name<JobReason>(kJobReasons, name); }

std::string_view to_string(KillReason r) { return kKillReasons[static_cast<size_t>(r)]; }
std::optional<KillReason> parse_kill_reason(std::string_view name) { return find_name<KillReason>(kKillReasons, name); }

}  // namespace hq
