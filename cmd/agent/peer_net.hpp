// Links between node agents, for job steps that span nodes: the agent of a job's first
// node (its step manager) dials the agents of the job's other nodes and keeps the link for
// later steps. Each agent listens on the address it reaches the controller from (so the
// controller can hand that address out), port `hq node --step-port` (0: the previous run's,
// kept in the spool, else any: first nodes of running jobs know the old one). TLS with a
// self-signed certificate kept in the spool (peer.pem/peer.key, 0600); the dialler pins its
// fingerprint, which the controller handed out over its authenticated channel. The dialler
// proves it is a node with a node token minted from the cluster secret, used once. On a
// plaintext cluster (tests) the links are plain TCP with the same tokens. Both ends of a
// link send a Heartbeat every ping interval; a link silent for three intervals (its host
// died or hangs) is closed, which ends the steps that used it.
// The same listener takes srun from other hosts (srun outside a job, or inside salloc): a
// client Hello with a user token (once), then an srun session as on the step socket,
// for the uid the token names.
// Runs on the agent's event-loop thread.
#pragma once
#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/replay_guard.hpp"
#include "core/status.hpp"
#include "net/connection.hpp"
#include "net/token.hpp"

namespace hq::net {
struct TlsContext;
}

namespace hq::cmd {

// The node's own certificate: self-signed, made once and kept in the spool (peer.pem,
// peer.key, 0600) so its fingerprint stays the same across agent restarts. The step
// listener and the /metrics listener serve it.
struct NodeCertificate {
  std::string cert_pem, key_pem;
};
Result<NodeCertificate> node_certificate(const std::string& spool_dir, const std::string& node);

class PeerNet {
 public:
  using ConnPtr = std::shared_ptr<net::Connection>;
  // An authenticated link from node `node` (inbound) or to it (outbound): messages, then
  // its end. Called for every message of every link.
  using OnMessage = std::function<void(const ConnPtr&, const std::string& node, const pb::Envelope&)>;
  using OnClosed = std::function<void(const ConnPtr&, const std::string& node)>;
  struct Options {
    std::string node;       // this agent's name
    std::string spool_dir;  // where the certificate is kept
    bool plaintext = false;
    uint16_t port = 0;
    std::function<const net::Keyring&()> keys;
    std::function<int64_t()> ping_interval;  // seconds (the controller's heartbeat interval)
  };

  PeerNet(asio::io_context& io, Options opts, OnMessage on_message, OnClosed on_closed);
  ~PeerNet();
  // Listens on `address` (port from the options) unless listening already.
  Status listen(const asio::ip::address& address);
  bool listening() const { return acceptor_.is_open(); }
  uint16_t port() const { return port_; }
  const std::string& fingerprint() const { return fingerprint_; }
  // The link to `node` at host:port (pinning `fingerprint`), dialled on first use and kept.
  asio::awaitable<Result<ConnPtr>> link(const std::string& node, const std::string& host, uint32_t port,
                                        const std::string& fingerprint);
  void stop();
  // Where an authenticated srun's connection goes (the step manager); none: refused.
  using OnUser = std::function<void(const ConnPtr&, uint32_t uid)>;
  void set_user_sessions(OnUser on_user) { on_user_ = std::move(on_user); }

 private:
  Status load_certificate();
  Status bind(const asio::ip::address& address, uint16_t port);
  void accept_next();
  asio::awaitable<void> inbound(asio::ip::tcp::socket socket);
  asio::awaitable<Result<ConnPtr>> dial(const std::string& node, const std::string& host, uint32_t port,
                                        const std::string& fingerprint);
  asio::awaitable<void> read_loop(ConnPtr conn, std::string node);
  asio::awaitable<void> keepalive(ConnPtr conn, std::string node);

  asio::io_context& io_;
  Options opts_;
  OnMessage on_message_;
  OnClosed on_closed_;
  OnUser on_user_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::string cert_pem_, key_pem_, fingerprint_;
  std::shared_ptr<net::TlsContext> server_tls_;
  std::map<std::string, std::shared_ptr<net::TlsContext>> client_tls_;  // per pinned fingerprint
  std::map<std::string, ConnPtr> links_;                                 // outbound, per node
  std::map<const net::Connection*, double> last_heard_;                  // every link: monotonic seconds
  ReplayGuard replay_;
};

}  // namespace hq::cmd
