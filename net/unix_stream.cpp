// ByteStream over a local (Unix) socket: job steps' srun talks to its node agent this way,
// and the kernel tells the agent who is asking (peer_credentials).
#include "net/unix_stream.hpp"

#include <cerrno>
#include <sys/socket.h>

#include "net/socket_stream.hpp"

namespace hq::net {

std::optional<PeerCredentials> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

std::optional<std::vector<uint32_t>> peer_groups(int fd) {
  std::vector<gid_t> groups(32);
  for (int tries = 0; tries < 2; ++tries) {
    socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
      groups.resize(len / sizeof(gid_t));
      return std::vector<uint32_t>(groups.begin(), groups.end());
    }
    if (errno != ERANGE) return std::nullopt;
    groups.resize(len / sizeof(gid_t) + 1);  // len is the size it needs
  }
  return std::nullopt;
}

std::unique_ptr<ByteStream> make_unix_stream(asio::local::stream_protocol::socket socket) {
  return std::make_unique<SocketStream<asio::local::stream_protocol::socket>>(std::move(socket), "local");
}

}  // namespace hq::net
