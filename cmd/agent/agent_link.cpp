// AgentLink: the agent's session state machine (see the header).
#include "cmd/agent/agent_link.hpp"

namespace hq::cmd {

AgentLink::Step AgentLink::on_message(pb::Envelope msg) {
  Step step;
  switch (state_) {
    case State::kEnded:
      step.ended = unavailable("the session has ended");
      return step;
    case State::kActive:
      step.deliver.push_back(std::move(msg));
      return step;
    case State::kRegistering:
      break;
  }
  if (msg.has_register_ack()) {
    state_ = State::kActive;
    step.registered = msg.register_ack();
    step.deliver = std::move(early_);
    early_.clear();
    return step;
  }
  if (msg.has_error()) {
    state_ = State::kEnded;
    step.ended = Status(static_cast<Code>(msg.error().code()), msg.error().message());
    if (step.ended.is_ok()) step.ended = invalid("the controller refused the registration");
    return step;
  }
  early_.push_back(std::move(msg));
  return step;
}

}  // namespace hq::cmd
