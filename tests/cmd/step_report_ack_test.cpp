// Ended steps' records survive a lost connection: the agent keeps each until the
// controller acknowledges it (cmd/agent/step_ends), and the controller acknowledges once
// the record is journaled for the accounting store (a record sent again is journaled
// again, listed once).
#include <doctest/doctest.h>

#include <tuple>

#include "cmd/agent/step_ends.hpp"
#include "controller_harness.hpp"

using namespace hq;
using hq::test::ControllerHarness;
using hq::test::RecordingPeer;

namespace {

pb::StepRecord step(uint64_t job, uint32_t id, const std::string& state, int64_t start = 100) {
  pb::StepRecord r;
  r.set_job_id(job);
  r.set_step_id(id);
  r.set_start_time(start);
  r.set_state(state);
  r.set_name("true");
  return r;
}

pb::StepReport report_of(std::vector<pb::StepRecord> records, bool full = false) {
  pb::StepReport out;
  out.set_full(full);
  for (auto& r : records) *out.add_steps() = std::move(r);
  return out;
}

// The (job, step) pairs of the StepReportAcks in `sent`.
using Acked = std::vector<std::tuple<uint64_t, uint32_t, int64_t>>;  // job, step, start
Acked acked(const std::vector<pb::Envelope>& sent) {
  Acked out;
  for (const auto& m : sent)
    if (m.has_step_report_ack())
      for (const auto& ref : m.step_report_ack().steps()) out.emplace_back(ref.job_id(), ref.step_id(), ref.start_time());
  return out;
}

pb::StepReportAck ack_of(uint64_t job, uint32_t step, int64_t start = 100) {
  pb::StepReportAck ack;
  auto* ref = ack.add_steps();
  ref->set_job_id(job);
  ref->set_step_id(step);
  ref->set_start_time(start);
  return ack;
}

size_t step_rows(const test::MemoryLog::Disk& disk) {
  size_t n = 0;
  for (const auto& row : disk.outbox) n += row.kind == store::OutboxKind::kStep;
  return n;
}

}  // namespace

TEST_CASE("agent: ended steps wait for the controller's ack, and go again with each full report") {
  cmd::UnackedStepEnds ends;
  CHECK_FALSE(ends.keep(step(7, 0, "COMPLETED")));
  CHECK_FALSE(ends.keep(step(7, 1, "FAILED")));
  CHECK_FALSE(ends.keep(step(7, 1, "FAILED")));     // the same step: kept once
  CHECK_FALSE(ends.keep(step(7, 0, "FAILED", 200)));  // the job's next run (requeued): its own step 0
  CHECK(ends.size() == 3);
  pb::StepReport report;
  ends.add_to(report);
  REQUIRE(report.steps_size() == 3);
  CHECK(report.steps(0).step_id() == 0);
  CHECK(report.steps(2).state() == "FAILED");
  ends.acked(ack_of(7, 0));  // the first run's step 0 only
  ends.acked(ack_of(8, 1));  // never kept: nothing happens
  REQUIRE(ends.size() == 2);
  pb::StepReport again;
  ends.add_to(again);
  CHECK(again.steps(0).start_time() == 200);
  CHECK(again.steps(1).step_id() == 1);
}

TEST_CASE("agent: past its bound the lowest unacknowledged step goes - said once until the controller catches up") {
  cmd::UnackedStepEnds ends;
  for (uint32_t i = 0; i < cmd::UnackedStepEnds::kMax; ++i) REQUIRE_FALSE(ends.keep(step(1, i, "COMPLETED")));
  CHECK(ends.keep(step(2, 0, "COMPLETED")));        // the first drop: said
  CHECK_FALSE(ends.keep(step(2, 1, "COMPLETED")));  // the next: not again
  CHECK(ends.size() == cmd::UnackedStepEnds::kMax);
  pb::StepReport report;
  ends.add_to(report);
  CHECK(report.steps(0).step_id() == 2);  // (1, 0) and (1, 1) dropped
  CHECK(report.steps(report.steps_size() - 1).job_id() == 2);
  ends.acked(ack_of(1, 2));  // under the bound again
  CHECK_FALSE(ends.keep(step(2, 2, "COMPLETED")));
  CHECK(ends.keep(step(2, 3, "COMPLETED")));  // dropping again: said again
}

TEST_CASE("controller: an ended step is acknowledged once journaled - one sent again is journaled again and listed once") {
  ControllerHarness h("n1");
  REQUIRE(h.ok);
  auto peer = std::make_shared<RecordingPeer>();
  REQUIRE(h.ctl->agent_register(peer, 1, test::registration("n1")));
  h.settle();
  uint64_t id = h.submit();
  REQUIRE(id != 0);
  REQUIRE(h.state_of(id) == "RUNNING");
  peer->take();
  h.ctl->agent_steps("n1", peer, report_of({step(id, 0, "RUNNING")}));
  h.settle();
  CHECK(acked(peer->take()).empty());  // a running step: nothing to acknowledge
  size_t rows = step_rows(*h.disk);
  h.ctl->agent_steps("n1", peer, report_of({step(id, 0, "COMPLETED"), step(id, 1, "FAILED")}));
  CHECK(acked(peer->sent).empty());  // not before the journal has them
  h.settle();
  CHECK(step_rows(*h.disk) == rows + 2);
  CHECK(acked(peer->take()) == Acked{{id, 0, 100}, {id, 1, 100}});  // one ack for the report
  // The ack was lost with the connection: the agent's next registration sends it again.
  // Journaled again (the first copy's commit may not have been durable; the store keeps
  // one), and acknowledged with one of a job the controller does not know (it would
  // otherwise come back with every registration).
  auto again = std::make_shared<RecordingPeer>();
  h.ctl->agent_steps("n1", again, report_of({step(id, 0, "COMPLETED"), step(id + 100, 0, "COMPLETED")}, true));
  CHECK(acked(again->sent).empty());
  h.settle();
  CHECK(step_rows(*h.disk) == rows + 3);
  CHECK(acked(again->take()) == Acked{{id, 0, 100}, {id + 100, 0, 100}});
  // A later run of the job (requeued) numbers its steps from 0 again: a step of its own.
  h.ctl->agent_steps("n1", again, report_of({step(id, 0, "FAILED", 300)}));
  h.settle();
  CHECK(step_rows(*h.disk) == rows + 4);
  pb::StepQueryRequest q;
  q.add_job_ids(id);
  q.set_include_ended(true);
  auto views = h.ctl->steps(q);
  int zeros = 0;
  for (const auto& s : views.steps()) zeros += s.step_id() == 0;
  CHECK(zeros == 2);  // hq show step lists the first run's step 0 once, and the second run's
}
