// ByteStream over a local (Unix) socket: job steps' srun talks to its node agent this way,
// and the kernel tells the agent who is asking (peer_credentials).
#include "net/unix_stream.hpp"

#include <sys/socket.h>

#include "net/socket_stream.hpp"

namespace hq::net {

std::optional<PeerCredentials> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

std::unique_ptr<ByteStream> make_unix_stream(asio::local::stream_protocol::socket socket) {
  return std::make_unique<SocketStream<asio::local::stream_protocol::socket>>(std::move(socket), "local");
}

}  // namespace hq::net
