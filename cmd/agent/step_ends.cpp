// UnackedStepEnds (see the header).
#include "cmd/agent/step_ends.hpp"

namespace hq::cmd {

bool UnackedStepEnds::keep(const pb::StepRecord& r) {
  records_[{r.job_id(), r.step_id(), r.start_time()}] = r;
  if (records_.size() <= kMax) return false;
  records_.erase(records_.begin());
  bool first = !dropping_;
  dropping_ = true;
  return first;
}

void UnackedStepEnds::acked(const pb::StepReportAck& ack) {
  for (const pb::StepRef& ref : ack.steps()) records_.erase({ref.job_id(), ref.step_id(), ref.start_time()});
  if (records_.size() < kMax) dropping_ = false;
}

void UnackedStepEnds::add_to(pb::StepReport& report) const {
  for (const auto& [key, r] : records_) *report.add_steps() = r;
}

}  // namespace hq::cmd
