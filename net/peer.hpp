// The sending half of a message connection, as the controller's logic sees it: a seam
// so that logic can be driven in tests by a recording fake instead of a socket.
// Used only from the owning event loop's thread.
#pragma once
#include <string>

#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::net {

class Peer {
 public:
  virtual ~Peer() = default;
  // Queues a message; messages to one peer leave in the order they were sent.
  virtual void send(const pb::Envelope& msg) = 0;
  virtual void close(const std::string& reason) = 0;
  virtual bool is_open() const = 0;
  virtual const std::string& peer() const = 0;
  virtual const std::string& close_reason() const = 0;
};

// An Error envelope answering request `seq` (shared by every handler table).
pb::Envelope error_reply(uint64_t seq, const Status& status);

}  // namespace hq::net
