// TLS transport: a Connection server on 127.0.0.1 in its own thread; clients that trust
// the cluster CA get through, others (wrong CA, plaintext) are refused at the handshake.
#include <doctest/doctest.h>

#include <asio/co_spawn.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/use_awaitable.hpp>
#include <atomic>
#include <filesystem>
#include <thread>

#include "../temp_dir.hpp"
#include "net/client.hpp"
#include "net/connection.hpp"
#include "net/pki.hpp"
#include "net/tls.hpp"

using namespace hq;
using namespace hq::net;

namespace {

// Answers every QueueRequest with an empty QueueReply; counts failed handshakes.
class EchoServer {
 public:
  explicit EchoServer(std::shared_ptr<TlsContext> tls) : tls_(std::move(tls)), acceptor_(io_) {
    asio::ip::tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(ep.protocol());
    acceptor_.bind(ep);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, accept_loop(this), [](std::exception_ptr) {});
    thread_ = std::thread([this] { io_.run(); });
  }
  ~EchoServer() {
    asio::post(io_, [this] { acceptor_.close(); io_.stop(); });
    thread_.join();
  }
  uint16_t port() const { return port_; }
  int failed_handshakes() const { return failed_; }

 private:
  static asio::awaitable<void> accept_loop(EchoServer* self) {
    while (self->acceptor_.is_open()) {
      auto socket = co_await self->acceptor_.async_accept(asio::use_awaitable);
      auto conn = std::make_shared<Connection>(self->io_.get_executor(), make_tls_stream(std::move(socket), self->tls_));
      asio::co_spawn(self->io_, serve(self, conn), [](std::exception_ptr) {});
    }
  }
  static asio::awaitable<void> serve(EchoServer* self, std::shared_ptr<Connection> conn) {
    auto hello = co_await conn->handshake_as_server("tls-test");
    if (!hello) {
      ++self->failed_;
      co_return;
    }
    while (true) {
      auto msg = co_await conn->recv();
      if (!msg) co_return;
      pb::Envelope reply;
      reply.set_seq(msg->seq());
      reply.mutable_queue_reply()->set_now(42);
      conn->send(reply);
    }
  }

  std::shared_ptr<TlsContext> tls_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::atomic<int> failed_{0};
  std::thread thread_;
};

}  // namespace

TEST_CASE("tls: clients that trust the cluster CA talk - others are refused") {
  auto ca = make_cluster_ca("t");
  REQUIRE(ca.is_ok());
  auto server_cert = issue_server_cert(*ca, "controller");
  REQUIRE(server_cert.is_ok());
  auto srv = make_tls_server_context(server_cert->cert_pem, server_cert->key_pem);
  REQUIRE_MESSAGE(srv.is_ok(), srv.status().message());
  EchoServer server(*srv);
  Endpoint ep{"127.0.0.1", server.port()};

  auto good = RpcClient::connect(ep, Transport{false, ca->cert_pem}, "client", 5);
  REQUIRE_MESSAGE(good.is_ok(), good.status().message());
  CHECK((*good)->cluster() == "tls-test");
  for (int i = 0; i < 50; ++i) {  // several round trips, and a large frame
    pb::Envelope q;
    q.mutable_queue()->set_user(std::string(i == 7 ? 200000 : 10, 'u'));
    auto r = (*good)->call(q, 5);
    REQUIRE(r.is_ok());
    CHECK(r->queue_reply().now() == 42);
  }

  auto other_ca = make_cluster_ca("other");
  auto wrong = RpcClient::connect(ep, Transport{false, other_ca->cert_pem}, "client", 5);
  CHECK(!wrong.is_ok());
  CHECK(wrong.status().message().find("secure connection") != std::string::npos);

  auto plain = RpcClient::connect(ep, Transport{true, ""}, "client", 5);
  CHECK(!plain.is_ok());

  CHECK(!make_tls_client_context("garbage").is_ok());
  CHECK(!make_tls_server_context(server_cert->cert_pem, other_ca->key_pem).is_ok());  // key does not match
  auto again = RpcClient::connect(ep, Transport{false, ca->cert_pem}, "client", 5);
  CHECK(again.is_ok());  // the server is still serving
}

TEST_CASE("tls: the client session cache is written, and a corrupt one falls back to a full handshake") {
  auto ca = make_cluster_ca("t");
  auto server_cert = issue_server_cert(*ca, "controller");
  auto srv = make_tls_server_context(server_cert->cert_pem, server_cert->key_pem);
  REQUIRE(srv.is_ok());
  EchoServer server(*srv);
  Endpoint ep{"127.0.0.1", server.port()};
  hq::test::TempDir dir;
  std::string cache = dir.path() + "/session";
  Transport t{false, ca->cert_pem, cache};
  for (int i = 0; i < 3; ++i) {
    auto c = RpcClient::connect(ep, t, "client", 5, /*pipelined=*/i == 2);
    REQUIRE(c.is_ok());
    pb::Envelope q;
    q.mutable_queue();
    auto r = (*c)->call(q, 5);
    REQUIRE_MESSAGE(r.is_ok(), r.status().message());
    CHECK((*c)->cluster() == "tls-test");
  }
  FILE* f = fopen(cache.c_str(), "rb");
  REQUIRE(f);
  fseek(f, 0, SEEK_END);
  CHECK(ftell(f) > 32);
  fclose(f);
  f = fopen(cache.c_str(), "wb");
  fputs("corrupt session", f);
  fclose(f);
  CHECK(RpcClient::connect(ep, t, "client", 5).is_ok());
}

namespace {

// One handshake with `ctx` against the server on `port`, on this thread.
Status handshake_with(std::shared_ptr<TlsContext> ctx, uint16_t port) {
  asio::io_context io;
  Status out = internal("not run");
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        asio::ip::tcp::socket socket(io);
        co_await socket.async_connect({asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
        auto conn = std::make_shared<Connection>(io.get_executor(), make_tls_stream(std::move(socket), ctx));
        auto ack = co_await conn->handshake_as_client("node", "peer");
        out = ack.is_ok() ? Status::ok() : ack.status();
        conn->close("done");
      },
      [&](std::exception_ptr e) {
        if (e) out = unavailable("exception");
      });
  io.run();
  return out;
}

}  // namespace

TEST_CASE("tls: a client pinned to a self-signed certificate's fingerprint talks only to that server") {
  auto mine = make_self_signed_server_cert("hq node e2");
  auto other = make_self_signed_server_cert("hq node e3");
  REQUIRE(mine.is_ok());
  REQUIRE(other.is_ok());
  auto srv = make_tls_server_context(mine->cert_pem, mine->key_pem);
  REQUIRE(srv.is_ok());
  EchoServer server(*srv);
  auto fp = cert_fingerprint(mine->cert_pem);
  auto other_fp = cert_fingerprint(other->cert_pem);
  REQUIRE(fp.is_ok());
  REQUIRE(other_fp.is_ok());
  CHECK(*fp != *other_fp);

  auto pinned = make_tls_client_context_pinned(*fp);
  REQUIRE(pinned.is_ok());
  Status good = handshake_with(*pinned, server.port());
  CHECK_MESSAGE(good.is_ok(), good.message());
  auto again = handshake_with(*pinned, server.port());  // the context serves many connections
  CHECK(again.is_ok());

  auto wrong = make_tls_client_context_pinned(*other_fp);
  REQUIRE(wrong.is_ok());
  CHECK(!handshake_with(*wrong, server.port()).is_ok());
  // The cluster CA's trust does not extend to a self-signed certificate either.
  auto ca = make_cluster_ca("t");
  auto ca_client = make_tls_client_context(ca->cert_pem);
  REQUIRE(ca_client.is_ok());
  CHECK(!handshake_with(*ca_client, server.port()).is_ok());

  CHECK(!make_tls_client_context_pinned("abc").is_ok());  // not a SHA-256

  // With a session cache the second connection resumes the pinned session.
  hq::test::TempDir dir;
  std::string cache = dir.path() + "/session-agent";
  auto cached = make_tls_client_context_pinned(*fp, cache);
  REQUIRE(cached.is_ok());
  CHECK(handshake_with(*cached, server.port()).is_ok());
  CHECK(std::filesystem::exists(cache));
  CHECK(handshake_with(*cached, server.port()).is_ok());
  // A cache the pinned server cannot have made is no way around the pin.
  auto other_srv = make_tls_server_context(other->cert_pem, other->key_pem);
  REQUIRE(other_srv.is_ok());
  EchoServer impostor(*other_srv);
  CHECK(!handshake_with(*cached, impostor.port()).is_ok());
}
