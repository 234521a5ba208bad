// The agent's half of one controller session, as an explicit state machine:
//
//   kRegistering --RegisterAck--> kActive
//        |  \--Error-------------> kEnded (the agent dials again later)
//        \--anything else: kept, and handed over in order right after the ack
//
// The controller answers a registration with its RegisterAck first, but an agent must not
// depend on it: a kill or an end's ack that overtakes the ack (an older controller, a
// reordering transport) is kept, not taken for a protocol error, so a session never falls
// into register-drop-register loops. Every message an active session hands over is
// idempotent for the agent (launches, kills and acks carry the job's run number).
// Pure: no sockets, no clock; Agent::session feeds it what its connection receives.
#pragma once
#include <optional>
#include <vector>

#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::cmd {

class AgentLink {
 public:
  enum class State { kRegistering, kActive, kEnded };

  struct Step {
    std::optional<pb::RegisterAck> registered;  // set once, when the session becomes active
    std::vector<pb::Envelope> deliver;          // for the agent to handle, in this order
    Status ended;                               // not ok: the session is over, and why
  };

  Step on_message(pb::Envelope msg);
  State state() const { return state_; }
  // Messages received before the ack, waiting for it.
  size_t early() const { return early_.size(); }

 private:
  State state_ = State::kRegistering;
  std::vector<pb::Envelope> early_;
};

}  // namespace hq::cmd
