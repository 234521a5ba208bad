#include "cmd/agent/peer_net.hpp"

#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/detached.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <unistd.h>

#include "cmd/paths.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"
#include "net/log.hpp"
#include "net/pki.hpp"
#include "net/stream.hpp"
#include "net/tls.hpp"

namespace hq::cmd {

PeerNet::PeerNet(asio::io_context& io, Options opts, OnMessage on_message, OnClosed on_closed)
    : io_(io), opts_(std::move(opts)), on_message_(std::move(on_message)), on_closed_(std::move(on_closed)), acceptor_(io) {}

PeerNet::~PeerNet() = default;

Result<NodeCertificate> node_certificate(const std::string& spool_dir, const std::string& node) {
  std::string cert_path = spool_dir + "/peer.pem", key_path = spool_dir + "/peer.key";
  NodeCertificate out{read_small_file(cert_path), read_small_file(key_path)};
  if (!out.cert_pem.empty() && !out.key_pem.empty()) return out;
  auto made = net::make_self_signed_server_cert("hq node " + node);
  if (!made) return made.status();
  out = {made->cert_pem, made->key_pem};
  if (Status s = write_file_atomic(key_path, out.key_pem, 0600); !s) return s;
  if (Status s = write_file_atomic(cert_path, out.cert_pem, 0600); !s) return s;
  return out;
}

Status PeerNet::load_certificate() {
  std::string cert_path = opts_.spool_dir + "/peer.pem";
  auto cert = node_certificate(opts_.spool_dir, opts_.node);
  if (!cert) return cert.status();
  cert_pem_ = cert->cert_pem;
  key_pem_ = cert->key_pem;
  auto fp = net::cert_fingerprint(cert_pem_);
  if (!fp) return fp.status().with_context(cert_path);
  auto ctx = net::make_tls_server_context(cert_pem_, key_pem_);
  if (!ctx) return ctx.status().with_context(cert_path);
  fingerprint_ = *fp;
  server_tls_ = *ctx;
  return Status::ok();
}

Status PeerNet::bind(const asio::ip::address& address, uint16_t port) {
  asio::error_code ec;
  asio::ip::tcp::endpoint at(address, port);
  acceptor_.open(at.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(at, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) return Status::ok();
  asio::error_code ignored;
  acceptor_.close(ignored);
  return unavailable("step listener on " + address.to_string() + ":" + std::to_string(port) + ": " + ec.message());
}

// Without a configured port, the port of the agent's previous run (kept in the spool) comes
// first: the first nodes of running jobs were told that one.
Status PeerNet::listen(const asio::ip::address& address) {
  if (acceptor_.is_open()) return Status::ok();
  if (!opts_.plaintext && !server_tls_)
    if (Status s = load_certificate(); !s) return s.with_context("step listener certificate");
  std::string port_file = opts_.spool_dir + "/peer.port";
  auto previous = parse_int(trim(read_small_file(port_file)), 1, 65535);
  Status bound = opts_.port == 0 && previous ? bind(address, static_cast<uint16_t>(*previous)) : unavailable("");
  if (!bound) bound = bind(address, opts_.port);
  if (!bound) return bound;
  asio::error_code ec;
  port_ = acceptor_.local_endpoint(ec).port();
  if (opts_.port == 0 && (!previous || *previous != port_))
    if (Status s = write_file_atomic(port_file, std::to_string(port_) + "\n", 0644); !s)
      log::warn("cannot keep the step listener's port for the next start: " + s.message());
  log::info("step listener for other nodes' agents on " + address.to_string() + ":" + std::to_string(port_));
  accept_next();
  return Status::ok();
}

void PeerNet::stop() {
  asio::error_code ec;
  acceptor_.close(ec);
  for (auto& [node, conn] : links_) conn->close("agent stopping");
  links_.clear();
}

void PeerNet::accept_next() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) asio::co_spawn(io_, inbound(std::move(socket)), asio::detached);
    accept_next();
  });
}

// Another agent dialled in: it must show a node token for the name it gives, once.
asio::awaitable<void> PeerNet::inbound(asio::ip::tcp::socket socket) {
  std::unique_ptr<net::ByteStream> stream =
      opts_.plaintext ? net::make_tcp_stream(std::move(socket)) : net::make_tls_stream(std::move(socket), server_tls_);
  auto conn = std::make_shared<net::Connection>(io_.get_executor(), std::move(stream));
  auto hello = co_await conn->handshake_as_server(opts_.node);
  if (!hello) co_return;
  Time now = net::wall_now();
  auto who = net::verify_token(opts_.keys(), hello->token(), now);
  Status refused;
  bool user = hello->role() == "client";
  if (!who) refused = who.status();
  else if (user && (who->role != "user" || !on_user_)) refused = denied("srun needs a user's token");
  else if (!user && (hello->role() != "node" || who->role != "node" || who->node != hello->name()))
    refused = denied("a peer link needs a node's token");
  else if (!replay_.first_use(who->nonce, who->expires, now))
    refused = denied("identity token was already used");
  if (!refused) {
    log::warn("refused a peer link from " + conn->peer() + ": " + refused.message());
    conn->send(net::error_reply(0, refused));
    conn->close("refused");
    co_return;
  }
  if (user) {
    on_user_(conn, who->uid);
    co_return;
  }
  co_await read_loop(conn, hello->name());
}

asio::awaitable<Result<PeerNet::ConnPtr>> PeerNet::link(const std::string& node, const std::string& host, uint32_t port,
                                                       const std::string& fingerprint) {
  if (auto it = links_.find(node); it != links_.end() && it->second->is_open()) co_return it->second;
  try {
    co_return co_await dial(node, host, port, fingerprint);
  } catch (const std::exception& e) {
    co_return unavailable("cannot reach the agent of " + node + " at " + host + ":" + std::to_string(port) + ": " +
                          e.what());
  }
}

asio::awaitable<Result<PeerNet::ConnPtr>> PeerNet::dial(const std::string& node, const std::string& host, uint32_t port,
                                                       const std::string& fingerprint) {
  if (port == 0) co_return unavailable("the agent of " + node + " has no step listener");
  std::shared_ptr<net::TlsContext> tls;
  if (!opts_.plaintext) {
    auto& cached = client_tls_[fingerprint];
    if (!cached) {
      auto ctx = net::make_tls_client_context_pinned(fingerprint);
      if (!ctx) co_return ctx.status().with_context("the agent of " + node);
      cached = *ctx;
    }
    tls = cached;
  }
  asio::ip::tcp::resolver resolver(io_);
  auto eps = co_await resolver.async_resolve(host, std::to_string(port), asio::use_awaitable);
  asio::ip::tcp::socket socket(io_);
  co_await asio::async_connect(socket, eps, asio::use_awaitable);
  socket.set_option(asio::ip::tcp::no_delay(true));
  std::unique_ptr<net::ByteStream> stream =
      tls ? net::make_tls_stream(std::move(socket), tls) : net::make_tcp_stream(std::move(socket));
  auto conn = std::make_shared<net::Connection>(io_.get_executor(), std::move(stream));
  net::Identity me;
  me.role = "node";
  me.node = opts_.node;
  auto token = net::mint_token(opts_.keys(), me, net::wall_now());
  if (!token) co_return token.status();
  auto ack = co_await conn->handshake_as_client("node", opts_.node, *token);
  if (!ack) co_return ack.status().with_context("the agent of " + node);
  if (auto it = links_.find(node); it != links_.end() && it->second->is_open()) {
    conn->close("a link to this node exists");  // another step dialled meanwhile
    co_return it->second;
  }
  links_[node] = conn;
  asio::co_spawn(io_, read_loop(conn, node), asio::detached);
  co_return conn;
}

asio::awaitable<void> PeerNet::read_loop(ConnPtr conn, std::string node) {
  last_heard_[conn.get()] = net::mono_seconds();
  asio::co_spawn(io_, keepalive(conn, node), asio::detached);
  while (true) {
    auto msg = co_await conn->recv();
    if (!msg) break;
    last_heard_[conn.get()] = net::mono_seconds();
    if (!msg->has_heartbeat()) on_message_(conn, node, *msg);
  }
  last_heard_.erase(conn.get());
  if (auto it = links_.find(node); it != links_.end() && it->second == conn) links_.erase(it);
  on_closed_(conn, node);
}

asio::awaitable<void> PeerNet::keepalive(ConnPtr conn, std::string node) {
  asio::steady_timer timer(io_);
  while (conn->is_open()) {
    int64_t interval = std::max<int64_t>(1, opts_.ping_interval ? opts_.ping_interval() : 10);
    timer.expires_after(std::chrono::seconds(interval));
    asio::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    auto heard = last_heard_.find(conn.get());
    if (!conn->is_open() || heard == last_heard_.end()) break;
    double silent = net::mono_seconds() - heard->second;
    if (silent > 3.0 * static_cast<double>(interval)) {
      log::warn("no word from " + node + "'s agent for " + std::to_string(static_cast<int>(silent)) +
                " s; closing the link");
      conn->close("silent for " + std::to_string(static_cast<int>(silent)) + " s");
      break;
    }
    pb::Envelope ping;
    ping.mutable_heartbeat()->set_time(net::wall_now());
    conn->send(ping);
  }
}

}  // namespace hq::cmd
