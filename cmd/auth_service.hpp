// The local token service: a Unix socket (mode 0666) where any local process gets a
// short-lived identity token for exactly the uid/gid/groups the kernel reports for it
// (SO_PEERCRED + /proc/PID/status), so users never read the cluster secret.
// Serves on the owning daemon's io_context thread. fetch_token() is the client side.
#pragma once
#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <functional>
#include <optional>
#include <string>

#include "cmd/auth_client.hpp"
#include "core/status.hpp"
#include "net/token.hpp"

namespace hq::cmd {

// Who the kernel says is at the other end of connected local socket `fd` (SO_PEERCRED;
// supplementary groups from /proc/PID/status); nullopt when it cannot say.
std::optional<net::Identity> local_peer_identity(int fd);

class AuthService {
 public:
  using KeyringFn = std::function<const net::Keyring&()>;
  AuthService(asio::io_context& io, std::string path, KeyringFn keyring);
  Status start();
  void stop();

 private:
  void accept_next();
  void serve(asio::local::stream_protocol::socket& socket);

  asio::io_context& io_;
  std::string path_;
  KeyringFn keyring_;
  asio::local::stream_protocol::acceptor acceptor_;
};


}  // namespace hq::cmd
