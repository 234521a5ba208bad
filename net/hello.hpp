// The protocol handshake's two messages, shared by the Asio connection (net/connection)
// and the blocking local link (net/local_link): the client's Hello, and its check of the
// first answer (a HelloAck, or an Error that refuses it). Pure; any thread.
#pragma once
#include <string>

#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::net {

constexpr uint32_t kProtocolVersion = 1;
constexpr uint32_t kMinProtocolVersion = 1;

pb::Envelope hello_envelope(const std::string& role, const std::string& name, const std::string& token);
// The HelloAck in `first`, or the Error it carries, or kInvalid naming `peer`.
Result<pb::HelloAck> hello_ack_of(const pb::Envelope& first, const std::string& peer);

}  // namespace hq::net
