// ByteStream: the one abstraction every connection reads and writes through, so a TLS
// stream can replace plain TCP without touching framing or handlers.
// Used only from the owning io_context's thread.
#pragma once
#include <asio/awaitable.hpp>
#include <asio/buffer.hpp>
#include <asio/ip/tcp.hpp>
#include <memory>
#include <string>
#include <string_view>

namespace hq::net {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Transport setup before any message (the TLS handshake); plain TCP has none.
  virtual asio::awaitable<void> start() { co_return; }
  // Both throw asio::system_error on failure; callers catch at the connection loop. At the
  // end of the stream read_some returns 0 (no exception: every connection ends that way,
  // and unwinding costs tens of microseconds a time).
  virtual asio::awaitable<size_t> read_some(asio::mutable_buffer buf) = 0;
  virtual asio::awaitable<void> write_all(asio::const_buffer buf) = 0;
  virtual void close() = 0;
  virtual std::string peer() const = 0;
  // A local socket only: writes what of `bytes` it can now, without waiting, with the open
  // file `fd` passed along (SCM_RIGHTS) to the peer; returns how many bytes went (the file
  // went with them), or -1 when nothing went (a stream that passes no files, a full socket).
  virtual long send_passing_file(std::string_view /*bytes*/, int /*fd*/) { return -1; }
};

std::unique_ptr<ByteStream> make_tcp_stream(asio::ip::tcp::socket socket);

}  // namespace hq::net
