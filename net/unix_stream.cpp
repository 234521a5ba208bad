// ByteStream over a local (Unix) socket: job steps' srun talks to its node agent this way,
// and the kernel tells the agent who is asking (peer_credentials).
#include "net/unix_stream.hpp"

#include <cerrno>
#include <cstring>
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

namespace {

class LocalStream : public SocketStream<asio::local::stream_protocol::socket> {
 public:
  using SocketStream::SocketStream;
  long send_passing_file(std::string_view bytes, int fd) override {
    if (bytes.empty() || fd < 0 || !socket_.is_open()) return -1;
    iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    ssize_t n;
    do n = ::sendmsg(socket_.native_handle(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n > 0 ? static_cast<long>(n) : -1;
  }
};

}  // namespace

std::unique_ptr<ByteStream> make_unix_stream(asio::local::stream_protocol::socket socket) {
  return std::make_unique<LocalStream>(std::move(socket), "local");
}

}  // namespace hq::net
