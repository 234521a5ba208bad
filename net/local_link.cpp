// LocalLink: see the header. The socket is non-blocking after its connect; every wait is
// a poll() bounded by the caller's deadline.
#include "net/local_link.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace hq::net {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double timeout_s) {
  constexpr double kYears = 100.0 * 365 * 86400;  // "no limit" without overflowing the clock
  auto us = static_cast<int64_t>(std::clamp(timeout_s, 0.0, kYears) * 1e6);
  return Clock::now() + std::chrono::microseconds(us);
}

Status unreachable(const std::string& path, int err) {
  return unavailable("cannot reach the controller's local socket " + path + ": " + std::strerror(err));
}

}  // namespace

Result<std::unique_ptr<LocalLink>> LocalLink::open(const std::string& path, double timeout_s) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) return unreachable(path, ENAMETOOLONG);
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return unreachable(path, errno);
  std::unique_ptr<LocalLink> link(new LocalLink(fd));
  const auto* to = reinterpret_cast<const sockaddr*>(&addr);
  int rc;
  do rc = ::connect(fd, to, sizeof addr);
  while (rc != 0 && errno == EINTR);
  if (rc == 0) return link;  // the usual case: two system calls in all
  if (errno != EAGAIN) return unreachable(path, errno);
  // The listener's backlog is full: a blocking connect waits for room, at most the timeout.
  auto us = static_cast<int64_t>(std::clamp(timeout_s, 0.001, 3600.0) * 1e6);
  timeval limit{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit) != 0 ||
      fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return unreachable(path, errno);
  // A signal ends the wait (the caller decides whether to try again): retrying here would
  // start the whole timeout over each time.
  rc = ::connect(fd, to, sizeof addr);
  if (rc != 0 || fcntl(fd, F_SETFL, flags) != 0) return unreachable(path, errno);
  return link;
}

LocalLink::~LocalLink() {
  close("client done");
  for (int fd : passed_files_) ::close(fd);
}

int LocalLink::take_passed_file() {
  if (passed_files_.empty()) return -1;
  int fd = passed_files_.front();
  passed_files_.erase(passed_files_.begin());
  return fd;
}

void LocalLink::close(const std::string& reason) {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  close_reason_ = reason;
}

void LocalLink::queue(const pb::Envelope& msg) {
  if (fd_ < 0) return;
  size_t size = msg.ByteSizeLong();
  append_frame_header(out_, static_cast<uint32_t>(size));
  size_t at = out_.size();
  out_.resize(at + size);
  msg.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out_.data() + at));
}

LocalLink::Io LocalLink::write_some() {
  if (written_ == out_.size()) return Io::kWouldBlock;
  ssize_t n = ::send(fd_, out_.data() + written_, out_.size() - written_, MSG_NOSIGNAL);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return Io::kWouldBlock;
    // The peer stopped reading (it closed): nothing more goes out, but what it sent before
    // (an answer, an Error) is still to be read. The link closes at the end of that.
    write_error_ = std::strerror(errno);
    out_.clear();
    written_ = 0;
    return Io::kWouldBlock;
  }
  written_ += static_cast<size_t>(n);
  if (written_ == out_.size()) {
    out_.clear();
    written_ = 0;
  }
  return Io::kProgress;
}

LocalLink::Io LocalLink::read_some() {
  char buf[65536];
  auto [direct, room] = decoder_.direct_space();  // a long frame's bytes go straight to its buffer
  iovec iov{direct ? direct : buf, direct ? room : sizeof buf};
  alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];  // a file passed with the bytes
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
  if (n > 0) keep_passed_files(msg);
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return Io::kWouldBlock;
    close(std::strerror(errno));
    return Io::kClosed;
  }
  if (n == 0) {
    close(write_error_.empty() ? "End of file" : write_error_);
    return Io::kClosed;
  }
  if (direct) decoder_.filled(static_cast<size_t>(n));
  else decoder_.feed(buf, static_cast<size_t>(n));
  return Io::kProgress;
}

void LocalLink::keep_passed_files(msghdr& msg) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      passed_files_.push_back(fd);
    }
  }
}

bool LocalLink::wait(int ms) {
  pollfd p{fd_, static_cast<short>(POLLIN | (out_.empty() ? 0 : POLLOUT)), 0};
  return ::poll(&p, 1, ms) > 0;  // 0: the time is up; -1 (EINTR): a signal came
}

// Each pass writes what it can, hands over a whole frame once everything queued is written,
// and reads what it can; with nothing to do it waits. The deadline and `interrupted` are
// asked on every pass that waited in vain and at least every 100 ms while bytes move, so
// neither a peer that trickles bytes nor a long transfer outlasts them.
Result<std::string> LocalLink::recv_frame(double timeout_s, const std::function<bool()>& interrupted) {
  const auto deadline = deadline_after(timeout_s);
  constexpr auto kAskEvery = std::chrono::milliseconds(100);
  auto next_ask = Clock::now() + kAskEvery;
  bool ask = false;  // the last wait ended without the socket being ready
  while (fd_ >= 0) {
    auto now = Clock::now();
    if (now >= deadline) {
      close("timed out");
      return unavailable("timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s");
    }
    if (interrupted && (ask || now >= next_ask)) {
      if (interrupted()) {
        close("interrupted");
        return internal("interrupted");
      }
      next_ask = now + kAskEvery;
    }
    ask = false;
    if (write_some() == Io::kProgress) continue;
    if (fd_ < 0) break;
    if (out_.empty()) {
      auto frame = decoder_.next();
      if (!frame) {
        close(frame.status().message());
        return frame.status();
      }
      if (frame->has_value()) return std::move(**frame);
    }
    Io read = read_some();
    if (read == Io::kProgress) continue;
    if (read == Io::kClosed) break;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    ask = !wait(static_cast<int>(std::min<int64_t>(left, interrupted ? kAskEvery.count() : INT32_MAX)));
  }
  // Closed: an answer that came whole before the peer went (say, an Error for a request it
  // did not read to its end) is still the answer.
  if (auto frame = decoder_.next(); frame && frame->has_value()) return std::move(**frame);
  return unavailable("connection to " + peer_ + " closed: " + close_reason_);
}

}  // namespace hq::net
