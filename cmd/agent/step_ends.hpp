// The ended steps' records this agent reported to the controller (or could not: no
// connection) that the controller has not acknowledged yet (StepReportAck, sent once the
// record is journaled for the accounting store). They go again with the full report on
// each registration, so a step's sacct line outlives a cut connection or a controller
// restart, as a job's end does (Agent::unacked_). In memory only: an agent restarted
// meanwhile loses them. Bounded: past kMax the lowest (job, step) goes.
// Agent event-loop thread only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "hq.pb.h"

namespace hq::cmd {

class UnackedStepEnds {
 public:
  static constexpr size_t kMax = 4096;
  // Keeps the ended step's record `r` until acknowledged; false when that dropped one.
  bool keep(const pb::StepRecord& r);
  void acked(const pb::StepReportAck& ack);
  // Every record kept, lowest (job, step) first.
  void add_to(pb::StepReport& report) const;
  size_t size() const { return records_.size(); }

 private:
  std::map<std::pair<uint64_t, uint32_t>, pb::StepRecord> records_;
};

}  // namespace hq::cmd
