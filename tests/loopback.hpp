// Loopback ports for tests: a socket bound to 127.0.0.1 on a port the kernel picks, and a
// port free now (for a daemon told where to listen).
#pragma once
#include <arpa/inet.h>
#include <cstdint>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hq::test {

// A socket of `type` bound to 127.0.0.1 on a port the kernel picks; `port` gets it.
inline int bind_loopback(int type, uint16_t& port) {
  int fd = socket(AF_INET, type, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

inline int free_port() {
  uint16_t port = 0;
  close(bind_loopback(SOCK_STREAM, port));
  return port;
}

}  // namespace hq::test
