// The wire and journal edge of job states and reasons (net/convert): every reason survives
// encoding, names hq wrote in any version decode, and unknown states or reasons are refused
// with a message that names them.
#include <doctest/doctest.h>

#include "net/convert.hpp"

using namespace hq;
using namespace hq::net;

namespace {

Job pending_job(uint64_t id) {
  Job j;
  j.id = JobId{id};
  j.partition = "batch";
  return j;
}

// A journal record of a job's end as some writer put it on disk.
std::string ended_record(const std::string& state, const std::string& reason) {
  pb::JournalEvent p;
  p.mutable_ended()->set_job_id(4);
  p.mutable_ended()->set_state(state);
  p.mutable_ended()->set_reason(reason);
  return p.SerializeAsString();
}

void check_refused(const Status& s, const std::string& words) {
  CHECK(!s.is_ok());
  CHECK(s.code() == Code::kInvalid);
  CHECK_MESSAGE(s.message().find(words) != std::string::npos, s.message());
}

}  // namespace

TEST_CASE("every job reason survives the journal: ends, requeues, job records") {
  for (size_t i = 0; i < kJobReasonCount; ++i) {
    auto r = static_cast<JobReason>(i);
    CAPTURE(to_string(r));
    auto ended = decode_event(encode_event(JobEnded{JobId{1}, 5, JobState::kFailed, 1, 0, r}));
    REQUIRE(ended.is_ok());
    CHECK(std::get<JobEnded>(*ended).reason == r);
    auto requeued = decode_event(encode_event(JobRequeued{JobId{1}, 5, r}));
    REQUIRE(requeued.is_ok());
    CHECK(std::get<JobRequeued>(*requeued).reason == r);
    Job j = pending_job(2);
    j.reason = r;
    pb::Job wire = to_pb(j);
    CHECK(wire.reason() == to_string(r));  // what squeue and scontrol print
    auto back = from_pb(wire);
    REQUIRE(back.is_ok());
    CHECK(back->reason == r);
  }
}

TEST_CASE("reasons as earlier versions wrote them still decode") {
  // An agent's end without a failure carries no reason at all.
  auto quiet = decode_event(ended_record("COMPLETED", ""));
  REQUIRE(quiet.is_ok());
  CHECK(std::get<JobEnded>(*quiet).reason == JobReason::kNone);
  // The first versions failed a job its agent no longer had as NODE_FAIL, reason JobLost.
  auto lost = decode_event(ended_record("NODE_FAIL", "JobLost"));
  REQUIRE(lost.is_ok());
  CHECK(std::get<JobEnded>(*lost).reason == JobReason::kJobLost);
  auto fenced = decode_event(ended_record("NODE_FAIL", "NodeFenced"));
  REQUIRE(fenced.is_ok());
  CHECK(std::get<JobEnded>(*fenced).reason == JobReason::kNodeFenced);
}

TEST_CASE("an unknown job reason is refused, by name, wherever it comes from") {
  check_refused(decode_event(ended_record("FAILED", "Bogus")).status(), "unknown job reason 'Bogus'");
  check_refused(decode_event(ended_record("FAILED", "nonzeroexitcode")).status(), "unknown job reason 'nonzeroexitcode'");
  pb::JournalEvent requeued;
  requeued.mutable_requeued()->set_job_id(4);
  requeued.mutable_requeued()->set_reason("Requeued by hand");
  check_refused(decode_event(requeued.SerializeAsString()).status(), "unknown job reason 'Requeued by hand'");
  pb::Job wire = to_pb(pending_job(3));
  wire.set_reason("Bogus");
  check_refused(from_pb(wire).status(), "unknown job reason 'Bogus'");
  // In a snapshot, the error names the job.
  pb::StateSnapshot snap;
  *snap.add_jobs() = wire;
  ClusterState s;
  Status restored = restore_snapshot(snap.SerializeAsString(), s);
  check_refused(restored, "unknown job reason 'Bogus'");
  CHECK(restored.message().find("snapshot job 3") != std::string::npos);
  CHECK(s.jobs.empty());
  // An agent's end (the same decoder as the journal's).
  pb::JobEnded from_agent;
  from_agent.set_job_id(4);
  from_agent.set_state("FAILED");
  from_agent.set_reason("Bogus");
  check_refused(from_pb(from_agent).status(), "unknown job reason 'Bogus'");
}

TEST_CASE("an unknown job state is refused, by name - a job end must be final") {
  check_refused(decode_event(ended_record("DONE", "")).status(), "unknown job state 'DONE'");
  check_refused(decode_event(ended_record("completed", "")).status(), "unknown job state 'completed'");
  check_refused(decode_event(ended_record("", "")).status(), "unknown job state ''");
  check_refused(decode_event(ended_record("RUNNING", "")).status(), "non-final state RUNNING");
  pb::Job wire = to_pb(pending_job(3));
  wire.set_state("WAITING");
  check_refused(from_pb(wire).status(), "unknown job state 'WAITING'");
  for (JobState st : {JobState::kCompleted, JobState::kCancelled, JobState::kFailed, JobState::kTimeout,
                      JobState::kNodeFail, JobState::kOutOfMemory, JobState::kPreempted}) {
    auto ended = decode_event(encode_event(JobEnded{JobId{1}, 5, st}));
    REQUIRE(ended.is_ok());
    CHECK(std::get<JobEnded>(*ended).state == st);
  }
}
