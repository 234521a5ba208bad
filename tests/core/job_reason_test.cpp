// Job reasons, kill reasons and job states: every enumerator's name parses back to it, the
// names are Slurm's (pinned here: squeue, scontrol and old journals depend on them), and
// any other text is refused.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/job.hpp"
#include "core/job_reason.hpp"

using namespace hq;

namespace {
// Each of the `count` enumerators of E has a name of its own that `parse` turns back into it.
template <typename E, typename Parse>
void check_round_trip(size_t count, Parse parse) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < count; ++i) {
    auto e = static_cast<E>(i);
    std::string_view name = to_string(e);
    CAPTURE(name);
    CHECK(!name.empty());
    CHECK(seen.insert(name).second);  // no two share a name
    auto back = parse(name);
    REQUIRE(back.has_value());
    CHECK(*back == e);
  }
}
}  // namespace

TEST_CASE("every job reason round-trips through its name") {
  check_round_trip<JobReason>(kJobReasonCount, parse_job_reason);
}

TEST_CASE("job reasons keep Slurm's spelling (and hq's own names for what Slurm has none)") {
  std::string all;
  for (size_t i = 0; i < kJobReasonCount; ++i) all += std::string(to_string(static_cast<JobReason>(i))) + " ";
  CHECK(all ==
        "None Priority Resources Dependency DependencyNeverSatisfied JobHeldUser JobHeldAdmin BeginTime "
        "JobArrayTaskLimit PartitionConfig PartitionDown PartitionInactive PartitionTimeLimit PartitionNodeLimit "
        "ReqNodeNotAvail BadConstraints Preempted NonZeroExitCode RaisedSignal OutOfMemory TimeLimit NodeDown "
        "JobLaunchFailure PrologFailure NodeFenced DeadLine InactiveLimit Reservation ReqNodeNotAvail, Reserved for maintenance "
              "ReqNodeNotAvail, May be reserved for other job JobLost "
              // Accounting limits: the names of Slurm 22.05's job_reason_string().
              "AssocGrpCpuLimit AssocGrpMemLimit AssocGrpNodeLimit AssocGrpGRES AssocGrpBilling AssocGrpCPURunMinutesLimit "
              "AssocGrpMemRunMinutes AssocGrpNodeRunMinutes AssocGrpGRESRunMinutes AssocGrpBillingRunMinutes "
              "AssocMaxCpuPerJobLimit AssocMaxMemPerJob AssocMaxNodePerJobLimit AssocMaxGRESPerJob AssocMaxBillingPerJob "
              "QOSGrpCpuLimit QOSGrpMemLimit QOSGrpNodeLimit QOSGrpGRES QOSGrpBilling QOSGrpCPURunMinutesLimit "
              "QOSGrpMemoryRunMinutes QOSGrpNodeRunMinutes QOSGrpGRESRunMinutes QOSGrpBillingRunMinutes "
              "QOSMaxCpuPerJobLimit QOSMaxMemoryPerJob QOSMaxNodePerJobLimit QOSMaxGRESPerJob QOSMaxBillingPerJob "
              "QOSMaxCpuPerUserLimit QOSMaxMemoryPerUser QOSMaxNodePerUserLimit QOSMaxGRESPerUser QOSMaxBillingPerUser "
              "MaxCpuPerAccount MaxMemoryPerAccount MaxNodePerAccount MaxGRESPerAccount MaxBillingPerAccount "
              "AssocGrpJobsLimit AssocGrpSubmitJobsLimit AssocMaxJobsLimit AssocMaxSubmitJobLimit "
              "AssocMaxWallDurationPerJobLimit QOSGrpJobsLimit QOSGrpSubmitJobsLimit QOSMaxJobsPerUserLimit "
              "QOSMaxSubmitJobPerUserLimit MaxJobsPerAccount MaxSubmitJobsPerAccount QOSMaxWallDurationPerJobLimit "
              "AssocGrpCPUMinutesLimit AssocGrpMemMinutes AssocGrpNodeMinutes AssocGrpGRESMinutes AssocGrpBillingMinutes "
              "AssocMaxCpuPerNode AssocMaxMemPerNode AssocMaxNodePerNode AssocMaxGRESPerNode AssocMaxBillingPerNode "
              "AssocMaxCpuMinutesPerJobLimit AssocMaxMemMinutesPerJob AssocMaxNodeMinutesPerJob AssocMaxGRESMinutesPerJob "
              "AssocMaxBillingMinutesPerJob QOSMaxCpuPerNode QOSMaxMemoryPerNode QOSMaxNodePerNode QOSMaxGRESPerNode "
              "QOSMaxBillingPerNode QOSMaxCpuMinutesPerJobLimit QOSMaxMemoryMinutesPerJob QOSMaxNodeMinutesPerJob "
              "QOSMaxGRESMinutesPerJob QOSMaxBillingMinutesPerJob QOSMinCpuNotSatisfied QOSMinMemory QOSMinNode "
              "QOSMinGRES QOSMinBilling AssocGrpWallLimit QOSGrpCPUMinutesLimit QOSGrpMemoryMinutes QOSGrpNodeMinutes "
              "QOSGrpGRESMinutes QOSGrpBillingMinutes QOSGrpWallLimit MaxCpuRunMinsPerUser MaxMemoryRunMinsPerUser "
              "MaxNodeRunMinsPerUser MaxGRESRunMinsPerUser MaxBillingRunMinsPerUser MaxCpuRunMinsPerAccount "
              "MaxMemoryRunMinsPerAccount MaxNodeRunMinsPerAccount MaxGRESRunMinsPerAccount MaxBillingRunMinsPerAccount ");
  CHECK(JobReason{} == JobReason::kNone);
  CHECK(Job{}.reason == JobReason::kNone);
}

TEST_CASE("text that is not a job reason's exact name is refused") {
  for (std::string_view bad : {"", "none", "NONE", "Resources ", " Priority", "Bogus", "Not responding", "cancel"}) {
    CAPTURE(bad);
    CHECK(!parse_job_reason(bad).has_value());
  }
}

TEST_CASE("every kill reason round-trips through its wire name") {
  check_round_trip<KillReason>(kKillReasonCount, parse_kill_reason);
  CHECK(to_string(KillReason::kCancel) == "cancel");
  CHECK(to_string(KillReason::kTimeout) == "timeout");
  CHECK(to_string(KillReason::kUnknown) == "unknown");
  CHECK(to_string(KillReason::kPreempt) == "preempt");
  CHECK(to_string(KillReason::kRequeue) == "requeue");
  for (std::string_view bad : {"", "Cancel", "kill", "None"}) CHECK(!parse_kill_reason(bad).has_value());
}

TEST_CASE("every job state round-trips through its name and its squeue code") {
  for (int i = 0; i <= static_cast<int>(JobState::kPreempted); ++i) {
    auto s = static_cast<JobState>(i);
    CAPTURE(job_state_name(s));
    JobState by_name = JobState::kPending, by_code = JobState::kPending;
    CHECK(parse_job_state(job_state_name(s), by_name));
    CHECK(by_name == s);
    CHECK(parse_job_state(job_state_code(s), by_code));
    CHECK(by_code == s);
  }
  JobState out = JobState::kRunning;
  for (std::string_view bad : {"", "pending", "DONE", "COMPLETING"}) CHECK(!parse_job_state(bad, out));
  CHECK(out == JobState::kRunning);
}
