// Ended steps' records survive a lost connection: the agent keeps each until the
// controller acknowledges it (cmd/agent/step_ends), and the controller acknowledges once
// the record is journaled for the accounting store, recording a record sent again once.
#include <doctest/doctest.h>

#include "cmd/agent/step_ends.hpp"
#include "controller_harness.hpp"

using namespace hq;
using hq::test::ControllerHarness;
using hq::test::RecordingPeer;

namespace {

pb::StepRecord step(uint64_t job, uint32_t id, const std::string& state) {
  pb::StepRecord r;
  r.set_job_id(job);
  r.set_step_id(id);
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
std::vector<std::pair<uint64_t, uint32_t>> acked(const std::vector<pb::Envelope>& sent) {
  std::vector<std::pair<uint64_t, uint32_t>> out;
  for (const auto& m : sent)
    if (m.has_step_report_ack())
      for (const auto& ref : m.step_report_ack().steps()) out.emplace_back(ref.job_id(), ref.step_id());
  return out;
}

size_t step_rows(const test::MemoryLog::Disk& disk) {
  size_t n = 0;
  for (const auto& row : disk.outbox) n += row.kind == store::OutboxKind::kStep;
  return n;
}

}  // namespace

TEST_CASE("agent: ended steps wait for the controller's ack, and go again with each full report") {
  cmd::UnackedStepEnds ends;
  CHECK(ends.keep(step(7, 0, "COMPLETED")));
  CHECK(ends.keep(step(7, 1, "FAILED")));
  CHECK(ends.keep(step(7, 1, "FAILED")));  // the same step: kept once
  CHECK(ends.size() == 2);
  pb::StepReport report;
  ends.add_to(report);
  REQUIRE(report.steps_size() == 2);
  CHECK(report.steps(0).step_id() == 0);
  CHECK(report.steps(1).state() == "FAILED");
  pb::StepReportAck ack;
  ack.add_steps()->set_job_id(7);  // step 0
  auto* other = ack.add_steps();
  other->set_job_id(8);  // never kept: nothing happens
  other->set_step_id(1);
  ends.acked(ack);
  REQUIRE(ends.size() == 1);
  pb::StepReport again;
  ends.add_to(again);
  CHECK(again.steps(0).step_id() == 1);
}

TEST_CASE("agent: past its bound the lowest unacknowledged step goes") {
  cmd::UnackedStepEnds ends;
  for (uint32_t i = 0; i < cmd::UnackedStepEnds::kMax; ++i) REQUIRE(ends.keep(step(1, i, "COMPLETED")));
  CHECK_FALSE(ends.keep(step(2, 0, "COMPLETED")));
  CHECK(ends.size() == cmd::UnackedStepEnds::kMax);
  pb::StepReport report;
  ends.add_to(report);
  CHECK(report.steps(0).step_id() == 1);  // (1, 0) dropped
  CHECK(report.steps(report.steps_size() - 1).job_id() == 2);
}

TEST_CASE("controller: an ended step is acknowledged once journaled - one sent again is acknowledged, not recorded twice") {
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
  h.ctl->agent_steps("n1", peer, report_of({step(id, 0, "COMPLETED")}));
  CHECK(acked(peer->sent).empty());  // not before the journal has it
  h.settle();
  CHECK(step_rows(*h.disk) == rows + 1);
  CHECK(acked(peer->take()) == std::vector<std::pair<uint64_t, uint32_t>>{{id, 0}});
  // The ack was lost with the connection: the agent's next registration sends it again.
  auto again = std::make_shared<RecordingPeer>();
  h.ctl->agent_steps("n1", again, report_of({step(id, 0, "COMPLETED"), step(id + 100, 0, "COMPLETED")}, true));
  h.settle();
  CHECK(step_rows(*h.disk) == rows + 1);
  // Both acknowledged: the step already recorded, and one of a job the controller does not
  // know (it would otherwise come back with every registration).
  CHECK(acked(again->take()) == std::vector<std::pair<uint64_t, uint32_t>>{{id, 0}, {id + 100, 0}});
  pb::StepQueryRequest q;
  q.add_job_ids(id);
  q.set_include_ended(true);
  auto views = h.ctl->steps(q);
  int zeros = 0;
  for (const auto& s : views.steps()) zeros += s.step_id() == 0;
  CHECK(zeros == 1);  // scontrol show step lists it once
}
