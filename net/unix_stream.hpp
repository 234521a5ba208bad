// A ByteStream over a connected local (Unix) socket, and who is at its other end.
// Used only from the owning io_context's thread.
#pragma once
#include <asio/local/stream_protocol.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>
#include <sys/types.h>

#include "net/stream.hpp"

namespace hq::net {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// The kernel's word on the peer of a connected local socket (SO_PEERCRED).
std::optional<PeerCredentials> peer_credentials(int fd);
// The peer's supplementary groups as they were when it connected (SO_PEERGROUPS, Linux
// 4.13+); nullopt where the kernel cannot say.
std::optional<std::vector<uint32_t>> peer_groups(int fd);

std::unique_ptr<ByteStream> make_unix_stream(asio::local::stream_protocol::socket socket);

}  // namespace hq::net
