#include "cmd/auth_service.hpp"

#include <asio/write.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd/local_listener.hpp"
#include "net/clock.hpp"
#include "net/frame.hpp"
#include "net/log.hpp"
#include "net/unix_stream.hpp"

namespace hq::cmd {

std::vector<uint32_t> process_groups(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  std::vector<uint32_t> groups;
  while (std::getline(in, line)) {
    if (line.rfind("Groups:", 0) != 0) continue;
    std::istringstream words(line.substr(7));
    for (uint32_t g; words >> g;) groups.push_back(g);
  }
  return groups;
}

AuthService::AuthService(asio::io_context& io, std::string path, KeyringFn keyring)
    : io_(io), path_(std::move(path)), keyring_(std::move(keyring)), acceptor_(io) {}

Status AuthService::start() {
  if (Status s = listen_local(acceptor_, path_, "token socket"); !s) return s;  // the kernel says who asks
  accept_next();
  return Status::ok();
}

void AuthService::stop() { close_local(acceptor_, path_); }

void AuthService::accept_next() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::local::stream_protocol::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) serve(socket);
    accept_next();
  });
}

// Answers at once with one frame holding the token, then closes: nothing is read from the
// peer, so a slow or hostile peer cannot stall the loop (the write is one small frame).
std::optional<net::Identity> local_peer_identity(int fd) {
  auto cred = net::peer_credentials(fd);
  if (!cred) return std::nullopt;
  net::Identity who;
  who.uid = cred->uid;
  who.gid = cred->gid;
  // The groups the kernel recorded at connect(); /proc only where it keeps none (its
  // process may be gone, or another by now).
  auto groups = net::peer_groups(fd);
  who.groups = groups ? std::move(*groups) : process_groups(cred->pid);
  return who;
}

void AuthService::serve(asio::local::stream_protocol::socket& socket) {
  auto who = local_peer_identity(socket.native_handle());
  if (!who) return;
  auto token = net::mint_token(keyring_(), *who, net::wall_now());
  if (!token) {
    log::error("token service: " + token.status().message());
    return;
  }
  std::string frame = net::encode_frame(*token);
  asio::error_code ec;
  socket.non_blocking(false, ec);
  asio::write(socket, asio::buffer(frame), ec);
}

int connect_unix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

Result<std::string> fetch_token(const std::string& path) {
  int fd = connect_unix(path);
  if (fd < 0) return unavailable("cannot reach the token service at " + path + ": " + std::strerror(errno));
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  net::FrameDecoder decoder(4096);
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    decoder.feed(buf, static_cast<size_t>(n));
  }
  close(fd);
  auto frame = decoder.next();
  if (!frame || !frame->has_value()) return unavailable("the token service at " + path + " gave no token");
  return **frame;
}

}  // namespace hq::cmd
