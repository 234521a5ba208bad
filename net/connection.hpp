// A message connection: protobuf Envelopes in length-prefixed frames over a ByteStream,
// with the version handshake. Owned by shared_ptr (kept alive by in-flight handlers);
// used only from its io_context's thread.
#pragma once
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.hpp"
#include "hq.pb.h"
#include "net/frame.hpp"
#include "net/hello.hpp"
#include "net/peer.hpp"
#include "net/stream.hpp"
#include "net/token.hpp"

namespace hq::net {

class Connection : public Peer, public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::any_io_executor ex, std::unique_ptr<ByteStream> stream);

  // Next message. Errors: peer closed, oversized frame, undecodable payload; the
  // connection is closed when an error is returned.
  asio::awaitable<Result<pb::Envelope>> recv();
  // The next frame's payload, not parsed (a caller that parses a long reply its own way,
  // on an arena). The same errors but an undecodable payload.
  asio::awaitable<Result<std::string>> recv_frame();
  // Queues a message; queued frames are flushed together by one writer coroutine.
  void send(const pb::Envelope& msg) override;
  // Queues a whole frame already serialized (a listing written straight to the wire): the
  // bytes of `buf` from `from` on. An idle connection takes the buffer itself, not a copy.
  void send_frame(std::string&& buf, size_t from);
  // Sends `frame` now, with the open file `fd` passed along (a local socket's peer gets its
  // own descriptor of it), behind anything queued and not yet written. False, and nothing
  // sent, where it cannot be: a write under way, a stream that passes no files (TCP, TLS),
  // a socket that takes nothing now. The caller then sends what the file holds instead.
  bool send_frame_passing_file(std::string_view frame, int fd);
  void close(const std::string& reason) override;
  bool is_open() const override { return open_; }
  const std::string& peer() const override { return peer_; }
  const std::string& close_reason() const override { return close_reason_; }
  uint32_t version() const { return version_; }
  // Bytes queued and not yet written (the batch being written included).
  size_t queued_bytes() const { return out_.size() + in_flight_; }
  // `fn`, once, when the queue is down to `below` bytes or less (at once if it is now);
  // a second call replaces the first. Never called once the connection is closed.
  void when_drained(size_t below, std::function<void()> fn);

  // Client side: send Hello, await HelloAck.
  asio::awaitable<Result<pb::HelloAck>> handshake_as_client(const std::string& role,
                                                            const std::string& name,
                                                            const std::string& token = "");
  // Client side, pipelined: transport handshake and Hello only; the caller reads the
  // HelloAck (or Error) as the first message, ahead of its first reply. Saves a round trip.
  asio::awaitable<Status> send_hello(const std::string& role, const std::string& name,
                                     const std::string& token = "");
  Result<pb::HelloAck> accept_hello_ack(const pb::Envelope& first);
  // Server side: await Hello, pick a version, reply HelloAck (or Error and close); a Hello
  // with the first request already behind it has its HelloAck written with the first reply. A peer
  // that has not finished the TLS and protocol handshakes within `timeout_s` is dropped.
  asio::awaitable<Result<pb::Hello>> handshake_as_server(const std::string& cluster, double timeout_s = 10);

 private:
  asio::awaitable<Status> start_transport();
  asio::awaitable<Result<pb::Hello>> server_handshake(const std::string& cluster);
  static asio::awaitable<void> write_loop(std::shared_ptr<Connection> self);
  void append(const pb::Envelope& msg);  // into the output buffer, not yet written
  void start_writing();  // the writer coroutine, unless it runs
  void check_drained();

  asio::any_io_executor ex_;
  std::unique_ptr<ByteStream> stream_;
  // What each read fills, taken at the first read from the thread's kept buffers (an
  // array in recv_frame's coroutine frame made that frame 64 KiB: a malloc and a free of
  // it for every frame received) and given back when the connection goes.
  struct ReturnReadBuffer {
    void operator()(char* buf) const;
  };
  std::unique_ptr<char[], ReturnReadBuffer> read_buf_;
  FrameDecoder decoder_;
  std::string out_;
  size_t in_flight_ = 0;
  size_t drained_below_ = 0;
  std::function<void()> on_drained_;
  bool writing_ = false;
  bool open_ = true;
  uint32_t version_ = 0;
  std::string peer_, close_reason_;
};

// A server's first steps with a new connection: the handshake, then `authenticate` on the
// Hello. A failure is logged, an identity refused is told to the peer, and the result is
// empty; else the Hello and who it is.
struct Greeted {
  pb::Hello hello;
  Identity who;
};
asio::awaitable<std::optional<Greeted>> greet(Connection& conn, const std::string& cluster, double timeout_s,
                                              const std::function<Result<Identity>(const pb::Hello&)>& authenticate);

}  // namespace hq::net
