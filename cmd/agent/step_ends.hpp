// The ended steps' records this agent reported to the controller (or could not: no
// connection) that the controller has not acknowledged yet (StepReportAck, sent once the
// record is journaled for the accounting store). They go again with the full report on
// each registration, so a step's sacct line outlives a cut connection or a controller
// restart, as a job's end does (Agent::unacked_). In memory only: an agent restarted
// meanwhile loses them. Kept by job, step and start (a requeued job's next run numbers
// its steps from 0 again). Bounded: past kMax the lowest (job, step) goes.
// Agent event-loop thread only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>

#include "hq.pb.h"

namespace hq::cmd {

class UnackedStepEnds {
 public:
  static constexpr size_t kMax = 4096;
  // Keeps the ended step's record `r` until acknowledged. True when that dropped a record
  // for the first time since the records last fitted under kMax (to be said once).
  bool keep(const pb::StepRecord& r);
  void acked(const pb::StepReportAck& ack);
  // Every record kept, lowest (job, step) first.
  void add_to(pb::StepReport& report) const;
  size_t size() const { return records_.size(); }

 private:
  using Key = std::tuple<uint64_t, uint32_t, int64_t>;  // job, step, start
  std::map<Key, pb::StepRecord> records_;
  bool dropping_ = false;
};

}  // namespace hq::cmd
