// A blocking link to a controller's local (Unix) socket for a command-line client that
// sends a request or a few and waits for their answers: plain system calls on one socket,
// with no io_context, no event loop and no thread (sbatch's whole exchange is a connect,
// one write and a read). Frames as net/frame.hpp. Used from one thread.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <vector>

#include "core/status.hpp"
#include "hq.pb.h"
#include "net/frame.hpp"

namespace hq::net {

class LocalLink {
 public:
  // Connects to the socket at `path`, waiting at most `timeout_s` for a busy listener;
  // kUnavailable when nothing listens there.
  static Result<std::unique_ptr<LocalLink>> open(const std::string& path, double timeout_s);
  ~LocalLink();
  LocalLink(const LocalLink&) = delete;
  LocalLink& operator=(const LocalLink&) = delete;

  // Queues `msg`; what is queued is written by the next recv_frame.
  void queue(const pb::Envelope& msg);
  // Writes what is queued, then returns the next frame's payload. While it writes it also
  // reads (a peer that answers before it has read everything is never left waiting on us).
  // Errors close the link: the peer's close or an I/O error (kUnavailable), an oversized
  // frame (kInvalid), `timeout_s` passed (kUnavailable "timed out after N s"), and
  // `interrupted()` saying so (kInternal "interrupted"; asked after a wait that a signal or
  // the 100 ms slice ended, and every 100 ms while bytes move). A frame that came whole
  // before the peer closed is returned.
  Result<std::string> recv_frame(double timeout_s, const std::function<bool()>& interrupted);
  void close(const std::string& reason);
  const std::string& peer() const { return peer_; }
  // A file the peer passed along with its bytes (SCM_RIGHTS; a listing kept by the
  // controller), the first not yet taken: the caller owns it then. -1 when none came.
  int take_passed_file();

 private:
  explicit LocalLink(int fd) : fd_(fd) {}
  enum class Io { kProgress, kWouldBlock, kClosed };
  Io write_some();
  Io read_some();
  void keep_passed_files(msghdr& msg);
  // Waits for the socket, at most `ms`; false when it is not ready (time up, or a signal).
  bool wait(int ms);

  int fd_ = -1;
  std::string out_;
  size_t written_ = 0;
  FrameDecoder decoder_{kMaxFrameBytes, FrameDecoder::Lengths::kTrusted};  // the answers we asked for
  std::string peer_ = "local";
  std::string close_reason_;
  std::string write_error_;  // why the last write failed, if one did
  std::vector<int> passed_files_;  // passed by the peer and not yet taken (closed with the link)
};

}  // namespace hq::net
