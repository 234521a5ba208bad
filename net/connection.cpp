#include "net/connection.hpp"

#include <asio/co_spawn.hpp>
#include <asio/steady_timer.hpp>
#include <array>

#include "net/log.hpp"

namespace hq::net {
namespace {

constexpr size_t kReadSize = 65536;

// Read buffers of connections gone, kept for the next ones on the same thread: a one-shot
// client's connection carries one request, and a new 64 KiB block each time had malloc
// sort its free lists (`_int_malloc` under `recv_frame`: 1.7% of the controller's samples
// over sequential submissions). A few are kept; a burst of connections frees the rest.
class KeptReadBuffers {
 public:
  ~KeptReadBuffers() {
    for (size_t i = 0; i < count_; ++i) delete[] kept_[i];
    count_ = 0;
    gone_ = true;  // a connection that outlives the thread's objects makes and frees its own
  }
  char* take() {
    if (count_ == 0) return new char[kReadSize];
    return kept_[--count_];
  }
  void give_back(char* buf) {
    if (gone_ || count_ == kept_.size()) delete[] buf;
    else kept_[count_++] = buf;
  }

 private:
  std::array<char*, 8> kept_{};
  size_t count_ = 0;
  bool gone_ = false;
};

thread_local KeptReadBuffers kept_read_buffers;

}  // namespace

void Connection::ReturnReadBuffer::operator()(char* buf) const { kept_read_buffers.give_back(buf); }

Connection::Connection(asio::any_io_executor ex, std::unique_ptr<ByteStream> stream)
    : ex_(std::move(ex)), stream_(std::move(stream)), peer_(stream_->peer()) {}

asio::awaitable<Result<pb::Envelope>> Connection::recv() {
  auto frame = co_await recv_frame();
  if (!frame) co_return frame.status();
  pb::Envelope env;
  if (!env.ParseFromString(*frame)) {
    close("undecodable frame");
    co_return invalid("undecodable frame from " + peer_);
  }
  co_return env;
}

asio::awaitable<Result<std::string>> Connection::recv_frame() {
  while (open_) {
    auto frame = decoder_.next();
    if (!frame) {
      close(frame.status().message());
      co_return frame.status();
    }
    if (frame->has_value()) co_return std::move(**frame);
    try {
      if (!read_buf_) read_buf_.reset(kept_read_buffers.take());
      size_t n = co_await stream_->read_some(asio::buffer(read_buf_.get(), kReadSize));
      if (n == 0) close("End of file");
      else decoder_.feed(read_buf_.get(), n);
    } catch (const std::exception& e) {
      close(e.what());
    }
  }
  co_return unavailable("connection to " + peer_ + " closed: " + close_reason_);
}

void Connection::send(const pb::Envelope& msg) {
  if (!open_) return;
  append(msg);
  start_writing();
}

void Connection::append(const pb::Envelope& msg) {
  // Straight into the output buffer, behind its length (no copy of a long listing).
  size_t size = msg.ByteSizeLong();
  append_frame_header(out_, static_cast<uint32_t>(size));
  size_t at = out_.size();
  out_.resize(at + size);
  msg.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out_.data() + at));
}

void Connection::send_frame(std::string&& buf, size_t from) {
  if (!open_ || from > buf.size()) return;
  if (out_.empty()) {
    out_ = std::move(buf);
    out_.erase(0, from);
  } else {
    out_.append(std::string_view(buf).substr(from));
  }
  start_writing();
}

bool Connection::send_frame_passing_file(std::string_view frame, int fd) {
  if (!open_ || writing_) return false;
  size_t queued = out_.size();  // a HelloAck that goes out with the first answer
  out_.append(frame);
  long sent = stream_->send_passing_file(out_, fd);
  if (sent <= 0) {
    out_.resize(queued);
    return false;
  }
  out_.erase(0, static_cast<size_t>(sent));
  if (!out_.empty()) start_writing();
  else check_drained();
  return true;
}

void Connection::start_writing() {
  if (writing_) return;
  writing_ = true;
  asio::co_spawn(ex_, write_loop(shared_from_this()), [self = shared_from_this()](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      self->close(std::string("write failed: ") + ex.what());
    }
  });
}

asio::awaitable<void> Connection::write_loop(std::shared_ptr<Connection> self) {
  while (self->open_ && !self->out_.empty()) {
    std::string batch;
    batch.swap(self->out_);
    self->in_flight_ = batch.size();
    co_await self->stream_->write_all(asio::buffer(batch));
    self->in_flight_ = 0;
    self->check_drained();
  }
  self->writing_ = false;
}

void Connection::when_drained(size_t below, std::function<void()> fn) {
  drained_below_ = below;
  on_drained_ = std::move(fn);
  check_drained();
}

void Connection::check_drained() {
  if (!on_drained_ || !open_ || queued_bytes() > drained_below_) return;
  auto fn = std::move(on_drained_);
  on_drained_ = nullptr;
  fn();
}

void Connection::close(const std::string& reason) {
  if (!open_) return;
  open_ = false;
  close_reason_ = reason;
  on_drained_ = nullptr;
  stream_->close();
}

asio::awaitable<Status> Connection::start_transport() {
  try {
    co_await stream_->start();
  } catch (const std::exception& e) {
    close(e.what());
    co_return unavailable(e.what());
  }
  co_return Status::ok();
}

asio::awaitable<Status> Connection::send_hello(const std::string& role, const std::string& name,
                                               const std::string& token) {
  if (Status s = co_await start_transport(); !s) co_return s;
  send(hello_envelope(role, name, token));
  co_return Status::ok();
}

Result<pb::HelloAck> Connection::accept_hello_ack(const pb::Envelope& first) {
  auto ack = hello_ack_of(first, peer_);
  if (ack) version_ = ack->version();
  return ack;
}

asio::awaitable<Result<pb::HelloAck>> Connection::handshake_as_client(const std::string& role,
                                                                      const std::string& name,
                                                                      const std::string& token) {
  if (Status s = co_await send_hello(role, name, token); !s) co_return s;
  auto reply = co_await recv();
  if (!reply) co_return reply.status();
  co_return accept_hello_ack(*reply);
}

asio::awaitable<Result<pb::Hello>> Connection::handshake_as_server(const std::string& cluster, double timeout_s) {
  auto deadline = std::make_shared<asio::steady_timer>(ex_, std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  std::weak_ptr<Connection> weak = shared_from_this();
  deadline->async_wait([weak, deadline](const asio::error_code& ec) {
    if (auto self = weak.lock(); self && !ec && self->version_ == 0) self->close("handshake timed out");
  });
  auto result = co_await server_handshake(cluster);
  deadline->cancel();
  co_return result;
}

asio::awaitable<Result<pb::Hello>> Connection::server_handshake(const std::string& cluster) {
  if (Status s = co_await start_transport(); !s) co_return s;
  auto msg = co_await recv();
  if (!msg) co_return msg.status();
  if (!msg->has_hello()) {
    close("first message was not Hello");
    co_return invalid("handshake: first message from " + peer_ + " was not Hello");
  }
  const pb::Hello& h = msg->hello();
  uint32_t v = std::min(h.version(), kProtocolVersion);
  if (v < kMinProtocolVersion || v < h.min_version()) {
    Status s = invalid("protocol versions do not overlap: peer speaks " + std::to_string(h.min_version()) +
                       ".." + std::to_string(h.version()) + ", controller " +
                       std::to_string(kMinProtocolVersion) + ".." + std::to_string(kProtocolVersion));
    send(error_reply(msg->seq(), s));
    co_return s;
  }
  version_ = v;
  pb::Envelope ack;
  ack.set_seq(msg->seq());
  ack.mutable_hello_ack()->set_version(v);
  ack.mutable_hello_ack()->set_cluster(cluster);
  // A client that sent its first request behind its Hello (a one-shot command) reads the
  // HelloAck ahead of that request's answer: it goes out with the answer, in one write
  // that wakes the client once. A client that waits for it gets it now.
  if (decoder_.buffered() > 0) append(ack);
  else send(ack);
  co_return h;
}

pb::Envelope error_reply(uint64_t seq, const Status& status) {
  pb::Envelope env;
  env.set_seq(seq);
  env.mutable_error()->set_code(static_cast<int32_t>(status.code()));
  env.mutable_error()->set_message(status.message());
  return env;
}

asio::awaitable<std::optional<Greeted>> greet(Connection& conn, const std::string& cluster, double timeout_s,
                                              const std::function<Result<Identity>(const pb::Hello&)>& authenticate) {
  auto hello = co_await conn.handshake_as_server(cluster, timeout_s);
  if (!hello) {
    log::warn("handshake with " + conn.peer() + " failed: " + hello.status().message());
    co_return std::nullopt;
  }
  auto who = authenticate(*hello);
  if (!who) {
    log::warn("refused " + hello->role() + " from " + conn.peer() + ": " + who.status().message());
    conn.send(error_reply(0, who.status()));
    co_return std::nullopt;
  }
  co_return Greeted{std::move(hello).value(), std::move(who).value()};
}

}  // namespace hq::net
