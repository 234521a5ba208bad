// A local (Unix) socket every user of the host may connect to: the token service's and
// the step manager's. Access control is the server's: the kernel tells it who connected.
// Call on the owning io_context's thread.
#pragma once
#include <asio/local/stream_protocol.hpp>
#include <string>

#include "core/status.hpp"

namespace hq::cmd {

// Binds `acceptor` at `path` (replacing a stale socket there), mode 0666, and listens.
// `what` names the socket in the error ("token socket").
Status listen_local(asio::local::stream_protocol::acceptor& acceptor, const std::string& path, const std::string& what);
// Stops listening and removes the socket file.
void close_local(asio::local::stream_protocol::acceptor& acceptor, const std::string& path);

}  // namespace hq::cmd
