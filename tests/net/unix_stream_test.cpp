// What the kernel says about the peer of a local socket: its credentials and its groups.
#include <doctest/doctest.h>

#include <grp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "net/unix_stream.hpp"

namespace {
// 0 when the peer of one end of a new socketpair has exactly `want` as its groups.
int check_peer_groups(const std::vector<uint32_t>& want) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 2;
  auto got = hq::net::peer_groups(sv[0]);
  auto cred = hq::net::peer_credentials(sv[0]);
  close(sv[0]);
  close(sv[1]);
  if (!got || !cred || cred->uid != getuid() || cred->pid != getpid()) return 3;
  return *got == want ? 0 : 1;
}
}  // namespace

TEST_CASE("unix stream: a local peer's groups come from the kernel (SO_PEERGROUPS), as they were at connect") {
  if (geteuid() != 0) {
    std::vector<gid_t> mine(static_cast<size_t>(getgroups(0, nullptr)));
    getgroups(static_cast<int>(mine.size()), mine.data());
    CHECK(check_peer_groups(std::vector<uint32_t>(mine.begin(), mine.end())) == 0);
    return;
  }
  // As root: a child with groups of its own choosing (more than one, and none of ours).
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::vector<gid_t> groups = {4242, 4343, 4444};
    if (setgroups(groups.size(), groups.data()) != 0) _exit(4);
    _exit(check_peer_groups({4242, 4343, 4444}));
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
