#include "net/client.hpp"

#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/use_awaitable.hpp>
#include <algorithm>
#include <chrono>
#include <optional>

#include "core/units.hpp"
#include "net/connection.hpp"
#include "net/hello.hpp"
#include "net/local_link.hpp"
#include "net/tls.hpp"

namespace hq::net {

namespace {

// A TCP connection (TLS or plaintext) on a private io_context.
struct AsioLink {
  asio::io_context io;
  std::shared_ptr<Connection> conn;

  // Runs one coroutine to completion on the private io_context, bounded by a timeout.
  template <typename T>
  Result<T> run(asio::awaitable<Result<T>> aw, double timeout_s, const std::function<bool()>& interrupted = {}) {
    std::optional<Result<T>> out;
    asio::co_spawn(io, std::move(aw), [&](std::exception_ptr e, Result<T> r) {
      if (e) {
        try { std::rethrow_exception(e); } catch (const std::exception& ex) { out = unavailable(ex.what()); }
      } else {
        out = std::move(r);
      }
    });
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    bool stopped = false;
    while (!out && std::chrono::steady_clock::now() < deadline) {
      io.restart();
      auto slice = interrupted ? std::chrono::milliseconds(100) : std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
      io.run_for(std::min<std::chrono::steady_clock::duration>(slice, deadline - std::chrono::steady_clock::now()));
      if (!out && interrupted && interrupted()) {
        stopped = true;
        break;
      }
    }
    if (!out) {
      if (conn) conn->close("timed out");
      io.restart();
      io.poll();  // let the cancelled coroutine unwind
      if (stopped) return internal("interrupted");
      return unavailable("timed out after " + std::to_string(static_cast<int>(timeout_s)) + " s");
    }
    return std::move(*out);
  }

  Result<std::string> recv_frame(double timeout_s, const std::function<bool()>& interrupted) {
    auto reader = [](std::shared_ptr<Connection> c) -> asio::awaitable<Result<std::string>> {
      co_return co_await c->recv_frame();
    };
    return run(reader(conn), timeout_s, interrupted);
  }
};

}  // namespace

// Exactly one of the two: the controller's local socket, or a TCP connection.
struct RpcClient::Impl {
  std::unique_ptr<LocalLink> local;
  std::unique_ptr<AsioLink> tcp;

  void send(const pb::Envelope& msg) { local ? local->queue(msg) : tcp->conn->send(msg); }
  Result<std::string> recv_frame(double timeout_s, const std::function<bool()>& interrupted) {
    return local ? local->recv_frame(timeout_s, interrupted) : tcp->recv_frame(timeout_s, interrupted);
  }
  void close(const std::string& reason) {
    if (local) local->close(reason);
    else if (tcp && tcp->conn) tcp->conn->close(reason);
  }
  const std::string& peer() const { return local ? local->peer() : tcp->conn->peer(); }
};

int RpcClient::take_passed_file() { return impl_->local ? impl_->local->take_passed_file() : -1; }

Result<Endpoint> parse_endpoint(const std::string& text, uint16_t default_port) {
  Endpoint ep;
  size_t colon = text.rfind(':');
  bool bracketed_v6 = text.find('[') != std::string::npos && text.find(']') > colon;
  if (colon == std::string::npos || bracketed_v6) {
    ep.host = text;
    ep.port = default_port;
  } else {
    ep.host = text.substr(0, colon);
    auto port = parse_int(text.substr(colon + 1), 1, 65535);
    if (!port) return invalid("bad controller address '" + text + "': port must be 1-65535");
    ep.port = static_cast<uint16_t>(*port);
  }
  if (ep.host.size() > 2 && ep.host.front() == '[') ep.host = ep.host.substr(1, ep.host.size() - 2);
  if (ep.host.empty()) return invalid("bad controller address '" + text + "': no host");
  return ep;
}

RpcClient::RpcClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RpcClient::~RpcClient() {
  if (impl_) impl_->close("client done");
}

Result<std::unique_ptr<ByteStream>> make_stream(asio::ip::tcp::socket socket, const Transport& t) {
  if (t.plaintext) return make_tcp_stream(std::move(socket));
  auto ctx = make_tls_client_context(t.ca_pem, t.session_cache);
  if (!ctx) return ctx.status();
  return make_tls_stream(std::move(socket), *ctx);
}

template <typename Dial>
Result<std::unique_ptr<RpcClient>> RpcClient::open(Dial dial, const std::string& where, const Transport& transport,
                                                   const std::string& role, double timeout_s, bool pipelined) {
  auto impl = std::make_unique<Impl>();
  impl->tcp = std::make_unique<AsioLink>();
  AsioLink* raw = impl->tcp.get();
  auto handshake = [](AsioLink* self, Dial dial, std::string where, Transport transport, std::string role,
                      bool pipelined) -> asio::awaitable<Result<pb::HelloAck>> {
    auto stream = co_await dial(self->io);
    if (!stream) co_return stream.status();
    self->conn = std::make_shared<Connection>(self->io.get_executor(), std::move(stream).value());
    Result<pb::HelloAck> ack = pb::HelloAck();
    if (pipelined) {
      Status s = co_await self->conn->send_hello(role, "", transport.token);
      if (!s) ack = s;
    } else {
      ack = co_await self->conn->handshake_as_client(role, "", transport.token);
    }
    if (!ack && !transport.plaintext)
      co_return ack.status().with_context("secure connection to " + where + " failed");
    co_return ack;
  };
  auto ack = raw->run(handshake(raw, std::move(dial), where, transport, role, pipelined), timeout_s);
  if (!ack) return ack.status();
  return with_handshake(std::move(impl), *ack, pipelined);
}

std::unique_ptr<RpcClient> RpcClient::with_handshake(std::unique_ptr<Impl> impl, const pb::HelloAck& ack,
                                                     bool pipelined) {
  std::unique_ptr<RpcClient> client(new RpcClient(std::move(impl)));
  client->cluster_ = ack.cluster();
  client->ack_pending_ = pipelined;
  return client;
}

Result<std::unique_ptr<RpcClient>> RpcClient::connect(const Endpoint& ep, const Transport& transport,
                                                      const std::string& role, double timeout_s, bool pipelined) {
  // A controller's role is "controller" only toward its accounting store.
  std::string what = role == "controller" ? "the accounting store" : "controller";
  auto dial = [ep, transport, what](asio::io_context& io) -> asio::awaitable<Result<std::unique_ptr<ByteStream>>> {
    asio::ip::tcp::socket socket(io);
    try {
      asio::error_code ec;
      auto addr = asio::ip::make_address(ep.host, ec);
      if (!ec) {  // a numeric address: no resolver (asio resolves on a thread of its own)
        co_await socket.async_connect(asio::ip::tcp::endpoint(addr, ep.port), asio::use_awaitable);
      } else {
        asio::ip::tcp::resolver resolver(io);
        auto results = co_await resolver.async_resolve(ep.host, std::to_string(ep.port), asio::use_awaitable);
        co_await asio::async_connect(socket, results, asio::use_awaitable);
      }
    } catch (const std::exception& e) {
      co_return unavailable("cannot reach " + what + " at " + ep.str() + ": " + e.what());
    }
    co_return make_stream(std::move(socket), transport);
  };
  return open(dial, ep.str(), transport, role, timeout_s, pipelined);
}

// No Asio here: a one-shot client's whole exchange is a connect, a write and a read, and
// an io_context's set-up and teardown cost more than that (about 0.1 ms of CPU for sbatch).
Result<std::unique_ptr<RpcClient>> RpcClient::connect_local(const std::string& path, const std::string& role,
                                                            double timeout_s, bool pipelined) {
  auto started = std::chrono::steady_clock::now();
  auto link = LocalLink::open(path, timeout_s);
  if (!link) return link.status();
  auto impl = std::make_unique<Impl>();
  impl->local = std::move(link).value();
  impl->local->queue(hello_envelope(role, "", ""));
  if (pipelined) return with_handshake(std::move(impl), pb::HelloAck(), true);
  double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  auto frame = impl->local->recv_frame(std::max(timeout_s - spent, 0.001), {});  // one timeout for both
  if (!frame) return frame.status();
  pb::Envelope first;
  if (!first.ParseFromString(*frame)) return invalid("undecodable frame from " + impl->peer());
  auto ack = hello_ack_of(first, impl->peer());
  if (!ack) return ack.status();
  return with_handshake(std::move(impl), *ack, false);
}

uint64_t RpcClient::send_stamped(pb::Envelope& req) {
  uint64_t seq = next_seq_++;
  req.set_seq(seq);
  impl_->send(req);
  return seq;
}

void RpcClient::send(pb::Envelope req) { send_stamped(req); }

Result<pb::Envelope> RpcClient::recv(double timeout_s) { return recv(timeout_s, {}); }

Status RpcClient::parse_frame(const std::string& frame, pb::Envelope& msg) {
  if (msg.ParseFromString(frame)) return Status::ok();
  impl_->close("undecodable frame");
  return invalid("undecodable frame from " + impl_->peer());
}

namespace {
// An Error reply as the Status it carries; ok for any other.
Status reply_status(const pb::Envelope& msg) {
  if (msg.has_error()) return Status(static_cast<Code>(msg.error().code()), msg.error().message());
  return Status::ok();
}
}  // namespace

Status RpcClient::parse_reply(const std::string& frame, pb::Envelope& msg) {
  if (Status s = parse_frame(frame, msg); !s) return s;
  return reply_status(msg);
}

Result<std::string> RpcClient::recv_payload(double timeout_s, const std::function<bool()>& interrupted) {
  auto frame = impl_->recv_frame(timeout_s, interrupted);
  if (!frame || !ack_pending_) return frame;
  ack_pending_ = false;  // pipelined handshake: the first message answers the Hello
  pb::Envelope first;
  if (Status s = parse_frame(*frame, first); !s) return s;
  auto ack = impl_->tcp ? impl_->tcp->conn->accept_hello_ack(first) : hello_ack_of(first, impl_->peer());
  if (!ack) return ack.status();
  cluster_ = ack->cluster();
  return recv_payload(timeout_s, interrupted);
}

Result<pb::Envelope> RpcClient::recv(double timeout_s, const std::function<bool()>& interrupted) {
  auto frame = recv_payload(timeout_s, interrupted);
  if (!frame) return frame.status();
  pb::Envelope msg;
  if (Status s = parse_reply(*frame, msg); !s) return s;
  return msg;
}

Result<pb::Envelope*> RpcClient::call_on(google::protobuf::Arena& arena, pb::Envelope req, double timeout_s) {
  uint64_t seq = send_stamped(req);
  while (true) {
    auto frame = recv_payload(timeout_s, {});
    if (!frame) return frame.status();
    auto* msg = google::protobuf::Arena::CreateMessage<pb::Envelope>(&arena);
    if (Status s = parse_reply(*frame, *msg); !s) return s;
    if (msg->seq() == seq) return msg;
  }
}

Result<RpcClient::UnparsedReply> RpcClient::call_unparsed_jobs(pb::Envelope req, double timeout_s) {
  uint64_t seq = send_stamped(req);
  while (true) {
    auto frame = recv_payload(timeout_s, {});
    if (!frame) return frame.status();
    UnparsedReply out{std::make_unique<std::string>(std::move(*frame)), {}};
    auto parts = split_queue_reply(*out.frame);
    if (!parts) {
      impl_->close("undecodable frame");
      return invalid("undecodable frame from " + impl_->peer());
    }
    out.parts = std::move(*parts);
    if (Status s = reply_status(out.parts.rest); !s) return s;
    if (out.parts.rest.seq() == seq) return out;
  }
}

Result<pb::Envelope> RpcClient::call(pb::Envelope req, double timeout_s) { return call_keeping(req, timeout_s); }

Result<pb::Envelope> RpcClient::call_keeping(pb::Envelope& req, double timeout_s) {
  uint64_t seq = send_stamped(req);
  while (true) {
    auto reply = recv(timeout_s);
    if (!reply || reply->seq() == seq) return reply;
  }
}

}  // namespace hq::net
