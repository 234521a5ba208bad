// sinfo -T's table from a NodesReply (cmd/client/reservations.cpp); the scontrol
// reservation commands are declared in cmd/commands.hpp. Thread-safe (no state).
#pragma once
#include <string>

#include "hq.pb.h"

namespace hq::cmd {

// Every reservation in the reply, or "No reservations in the system".
std::string reservation_table(const pb::NodesReply& reply, bool header);

}  // namespace hq::cmd
