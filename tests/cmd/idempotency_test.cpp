// Exactly-once requests: a submission or cancellation retried with the same idempotency
// key (after a lost answer, a cut connection, a controller crash) does nothing twice and
// answers as the first did. The real Controller on an in-memory journal.
#include <doctest/doctest.h>

#include "core/job_reason.hpp"
#include "cmd/client/retry.hpp"
#include "controller_harness.hpp"

using namespace hq;
using hq::test::ControllerHarness;

namespace {

// The controller killed with -9 and started again on what it had committed.
void crash_and_restart(std::unique_ptr<ControllerHarness>& h) {
  auto disk = h->disk;
  h->crashed = true;
  h.reset();
  h = std::make_unique<ControllerHarness>("n[1-2]", 4, disk);
  REQUIRE(h->ok);
}

}  // namespace

TEST_CASE("idempotency: a retried submission gets its job back, also after a controller crash") {
  auto h = std::make_unique<ControllerHarness>("n[1-2]");
  auto first = h->submit_request(ControllerHarness::job_request("key-1"));
  REQUIRE(first.is_ok());
  auto retry = h->submit_request(ControllerHarness::job_request("key-1"));
  REQUIRE(retry.is_ok());
  CHECK(retry->job_id() == first->job_id());
  crash_and_restart(h);
  auto after = h->submit_request(ControllerHarness::job_request("key-1"));
  REQUIRE(after.is_ok());
  CHECK(after->job_id() == first->job_id());
  auto other = h->submit_request(ControllerHarness::job_request("key-2"));
  REQUIRE(other.is_ok());
  CHECK(other->job_id() == first->job_id() + 1);
  auto keyless = h->submit_request(ControllerHarness::job_request());
  REQUIRE(keyless.is_ok());
  CHECK(keyless->job_id() == first->job_id() + 2);
}

TEST_CASE("idempotency: a retried array submission gets the same array, with its task count") {
  auto h = std::make_unique<ControllerHarness>("n[1-2]");
  auto first = h->submit_request(ControllerHarness::job_request("arr", "0-4"));
  REQUIRE(first.is_ok());
  CHECK(first->array_tasks() == 5);
  crash_and_restart(h);
  auto retry = h->submit_request(ControllerHarness::job_request("arr", "0-4"));
  REQUIRE(retry.is_ok());
  CHECK(retry->job_id() == first->job_id());
  CHECK(retry->array_tasks() == 5);
  CHECK(h->submit() == first->job_id() + 5);  // nothing else was created
}

TEST_CASE("idempotency: keys belong to their user - bad keys are refused") {
  ControllerHarness h("n1");
  auto mine = h.submit_request(ControllerHarness::job_request("shared-key"), ControllerHarness::user(1000));
  auto theirs = h.submit_request(ControllerHarness::job_request("shared-key"), ControllerHarness::user(1001));
  REQUIRE(mine.is_ok());
  REQUIRE(theirs.is_ok());
  CHECK(theirs->job_id() != mine->job_id());
  auto bad = h.submit_request(ControllerHarness::job_request("with space"));
  CHECK_FALSE(bad.is_ok());
  CHECK(bad.status().message().find("request key") != std::string::npos);
  CHECK_FALSE(h.submit_request(ControllerHarness::job_request(std::string(65, 'k'))).is_ok());
}

TEST_CASE("idempotency: a retried cancellation answers as the first, also after a crash - a new one reports the error") {
  auto h = std::make_unique<ControllerHarness>("n1");
  uint64_t id = h->submit();
  auto first = h->cancel({id}, "cancel-1");
  REQUIRE(first.is_ok());
  REQUIRE(first->cancelled_size() == 1);
  CHECK(first->errors_size() == 0);
  crash_and_restart(h);
  CHECK(h->state_of(id) == "CANCELLED");
  auto retry = h->cancel({id}, "cancel-1");
  REQUIRE(retry.is_ok());
  CHECK(retry->cancelled_size() == 1);
  CHECK(retry->errors_size() == 0);
  auto fresh = h->cancel({id}, "cancel-2");
  REQUIRE(fresh.is_ok());
  CHECK(fresh->cancelled_size() == 0);
  REQUIRE(fresh->errors_size() == 1);
  CHECK(fresh->errors(0).find("already completing or completed") != std::string::npos);
}

namespace {
// A job submitted, started on n1 (its agent is `peer`) and then cancelled with key "c".
uint64_t start_then_cancel(ControllerHarness& h, const std::shared_ptr<test::RecordingPeer>& peer) {
  uint64_t id = h.submit();
  REQUIRE(h.ctl->agent_register(peer, 1, test::registration("n1")));
  h.settle();
  REQUIRE(h.state_of(id) == "RUNNING");
  REQUIRE(h.cancel({id}, "c").is_ok());
  return id;
}
}  // namespace

TEST_CASE("idempotency: a running job's cancellation is journaled, survives a crash and makes its end CANCELLED") {
  auto h = std::make_unique<ControllerHarness>("n1");
  auto peer = std::make_shared<test::RecordingPeer>();
  uint64_t id = start_then_cancel(*h, peer);
  bool killed = false;
  for (const auto& m : peer->take()) killed |= m.has_kill() && m.kill().job_id() == id;
  CHECK(killed);
  crash_and_restart(h);
  // The agent comes back still running it: the kill is sent again.
  auto again = std::make_shared<test::RecordingPeer>();
  pb::RegisterNode reg = test::registration("n1");
  reg.add_running_jobs(id);
  REQUIRE(h->ctl->agent_register(again, 1, reg));
  h->settle();
  killed = false;
  for (const auto& m : again->take()) killed |= m.has_kill() && m.kill().job_id() == id && m.kill().reason() == "cancel";
  CHECK(killed);
  pb::JobEnded end;
  end.set_job_id(id);
  end.set_state("FAILED");  // killed by the signal
  end.set_exit_signal(15);
  h->ctl->agent_job_ended("n1", again, end);
  h->settle();
  CHECK(h->state_of(id) == "CANCELLED");
  CHECK(h->cancel({id}, "c")->errors_size() == 0);  // the retry, still
}

TEST_CASE("idempotency: a cancelled job that its agent fenced before the kill arrived ends CANCELLED, not requeued") {
  auto h = std::make_unique<ControllerHarness>("n1");
  auto peer = std::make_shared<test::RecordingPeer>();
  uint64_t id = start_then_cancel(*h, peer);
  pb::JobEnded end;  // the link was cut: the agent fenced it
  end.set_job_id(id);
  end.set_state("NODE_FAIL");
  end.set_exit_signal(9);
  end.set_reason(std::string(to_string(JobReason::kNodeFenced)));
  h->ctl->agent_job_ended("n1", peer, end);
  h->settle();
  CHECK(h->state_of(id) == "CANCELLED");
}

TEST_CASE("idempotency: client keys are 32 hex characters, fresh each time") {
  std::string a = cmd::new_request_key(), b = cmd::new_request_key();
  CHECK(a.size() == 32);
  CHECK(a != b);
  CHECK(cmd::check_request_key(a).is_ok());
}
