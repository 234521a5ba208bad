// `hq controller`: the TCP server around Controller. Accepts connections, runs the
// handshake, then one session loop per connection dispatching through a handler table
// (decode, call Controller, reply); and the local client socket, where clients on this
// host are who the kernel says (no TLS, no token). One io_context thread owns everything.
// `hq controller --check-state` verifies a state directory offline instead (recovery.hpp).
#include <CLI/CLI.hpp>
#include "cmd/cli_parse.hpp"
#include <asio/co_spawn.hpp>
#include <asio/redirect_error.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <filesystem>
#include <google/protobuf/arena.h>
#include <unistd.h>

#include "cmd/auth_service.hpp"
#include "cmd/commands.hpp"
#include "cmd/config_toml.hpp"
#include "cmd/controller/controller.hpp"
#include "cmd/controller/recovery.hpp"
#include "cmd/keys.hpp"
#include "cmd/local_listener.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/std_streams.hpp"
#include "net/brief_wire.hpp"
#include "net/clock.hpp"
#include "net/connection.hpp"
#include "net/log.hpp"
#include "net/tls.hpp"
#include "net/unix_stream.hpp"
#include "store/journal.hpp"

namespace hq::cmd {
namespace {

using ConnPtr = std::shared_ptr<net::Connection>;
using Handler = std::function<void(Controller&, const ConnPtr&, const pb::Envelope&, const net::Identity&)>;

void reply(const ConnPtr& conn, uint64_t seq, pb::Envelope env) {
  env.set_seq(seq);
  conn->send(env);
}

// A handler that answers at once: `fill` writes the reply into an Envelope.
template <typename Fill>
Handler answer(Fill fill) {
  return [fill](Controller& c, const ConnPtr& conn, const pb::Envelope& m, const net::Identity& who) {
    pb::Envelope env;
    fill(c, m, who, env);
    reply(conn, m.seq(), std::move(env));
  };
}

// A handler that answers once the outcome is durable: `start` calls the Controller with a
// callback taking a Result; `set` writes its value into the reply Envelope.
template <typename Start, typename Set>
Handler answer_later(Start start, Set set) {
  return [start, set](Controller& c, const ConnPtr& conn, const pb::Envelope& m, const net::Identity& who) {
    uint64_t seq = m.seq();
    start(c, m, who, [conn, seq, set](auto r) {
      if (!r) return conn->send(net::error_reply(seq, r.status()));
      pb::Envelope env;
      set(env, std::move(r).value());
      reply(conn, seq, std::move(env));
    });
  };
}

// A node or partition administration request: `start` calls the Controller with a callback
// taking the NodeControlReply it answers with (once durable).
template <typename Start>
Handler answer_admin(Start start) {
  return [start](Controller& c, const ConnPtr& conn, const pb::Envelope& m, const net::Identity& who) {
    uint64_t seq = m.seq();
    start(c, m, who, [conn, seq](pb::NodeControlReply r) {
      pb::Envelope env;
      *env.mutable_node_control_reply() = std::move(r);
      reply(conn, seq, std::move(env));
    });
  };
}

// A listing the controller keeps, sent to a local client as the file itself (a sealed
// memfd, SCM_RIGHTS): the client copies it to its output with no bytes through the socket.
// False where none is kept or the file cannot go (not a local socket, a write under way).
bool send_listing_file(Controller& c, const ConnPtr& conn, const pb::Envelope& m, const net::Identity& who) {
  auto file = c.kept_listing_file(m.queue(), who);
  if (!file) return false;
  pb::Envelope env;
  env.set_seq(m.seq());
  *env.mutable_queue_reply() = std::move(file->reply);
  std::string frame;
  size_t size = env.ByteSizeLong();
  net::append_frame_header(frame, static_cast<uint32_t>(size));
  frame.append(env.SerializeAsString());
  return conn->send_frame_passing_file(frame, file->fd);
}

const std::map<pb::Envelope::MsgCase, Handler>& client_handlers() {
  static const std::map<pb::Envelope::MsgCase, Handler> table = {
      {pb::Envelope::kSubmit,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.submit(m.submit(), who, done); },
                    [](pb::Envelope& env, pb::SubmitReply r) { *env.mutable_submit_reply() = std::move(r); })},
      {pb::Envelope::kAllocate,  // answered up to twice on its seq: pending, then granted
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.allocate(m.allocate(), who, done); },
                    [](pb::Envelope& env, pb::AllocateReply r) { *env.mutable_allocate_reply() = std::move(r); })},
      {pb::Envelope::kToken,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { done(c.http_token(m.token(), who)); },
                    [](pb::Envelope& env, pb::TokenReply r) { *env.mutable_token_reply() = std::move(r); })},
      {pb::Envelope::kStepMgrQuery,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) {
                      done(c.stepmgr_of(m.step_mgr_query(), who));
                    },
                    [](pb::Envelope& env, pb::AllocateReply r) { *env.mutable_allocate_reply() = std::move(r); })},
      {pb::Envelope::kAllocationAlive,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) {
                      done(c.allocation_alive(m.allocation_alive(), who));
                    },
                    [](pb::Envelope& env, pb::AllocationAliveReply r) { *env.mutable_allocation_alive_reply() = std::move(r); })},
      {pb::Envelope::kJobComplete,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.complete(m.job_complete(), who, done); },
                    [](pb::Envelope& env, pb::JobCompleteReply r) { *env.mutable_job_complete_reply() = std::move(r); })},
      {pb::Envelope::kJobUpdate,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.update_jobs(m.job_update(), who, done); },
                    [](pb::Envelope& env, pb::JobUpdateReply r) { *env.mutable_job_update_reply() = std::move(r); })},
      {pb::Envelope::kJobControl,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.job_control(m.job_control(), who, done); },
                    [](pb::Envelope& env, pb::JobControlReply r) { *env.mutable_job_control_reply() = std::move(r); })},
      {pb::Envelope::kExplain, answer([](Controller& c, const pb::Envelope& m, const net::Identity& who, pb::Envelope& out) {
         *out.mutable_explain_reply() = c.explain(m.explain(), who);
       })},
      {pb::Envelope::kQueue,
       [](Controller& c, const ConnPtr& conn, const pb::Envelope& m, const net::Identity& who) {
         if (m.queue().brief() && !m.queue().with_priority()) {  // squeue's default: bytes from the jobs
           if (m.queue().render().wanted() && m.queue().listing_as_file() && send_listing_file(c, conn, m, who)) return;
           std::string buf(net::kQueueReplyHeadRoom, '\0');
           std::optional<size_t> reply_from;  // squeue's text, where it asks for it and it can be made here
           if (m.queue().render().wanted()) reply_from = c.queue_listing(m.queue(), who, buf);
           if (!reply_from) c.queue_brief_wire(m.queue(), who, buf);
           size_t from = net::frame_queue_reply_in_place(m.seq(), buf, reply_from.value_or(net::kQueueReplyHeadRoom));
           conn->send_frame(std::move(buf), from);
           return;
         }
         google::protobuf::Arena arena;  // thousands of jobs: one block of memory, freed at once
         auto* env = google::protobuf::Arena::CreateMessage<pb::Envelope>(&arena);
         c.queue(m.queue(), who, *env->mutable_queue_reply());
         env->set_seq(m.seq());
         conn->send(*env);
       }},
      {pb::Envelope::kCancel,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.cancel(m.cancel(), who, done); },
                    [](pb::Envelope& env, pb::CancelReply r) { *env.mutable_cancel_reply() = std::move(r); })},
      {pb::Envelope::kNodeControl, answer_admin([](Controller& c, const pb::Envelope& m, const net::Identity& who,
                                                  auto done) { c.node_control(m.node_control(), who, done); })},
      {pb::Envelope::kPartitionUpdate,
       answer_admin([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) {
         c.update_partition(m.partition_update(), who, done);
       })},
      {pb::Envelope::kReservation,
       answer_admin([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) {
         c.reservation_request(m.reservation(), who, done);
       })},
      {pb::Envelope::kAcctQuery,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.acct_query(m.acct_query(), who, done); },
                    [](pb::Envelope& env, pb::AcctQueryReply r) { *env.mutable_acct_query_reply() = std::move(r); })},
      {pb::Envelope::kAcctMgr,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity& who, auto done) { c.acct_mgr(m.acct_mgr(), who, done); },
                    [](pb::Envelope& env, pb::AcctMgrReply r) { *env.mutable_acct_mgr_reply() = std::move(r); })},
      {pb::Envelope::kAssocMgr,  // answered once fair share is current
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity&, auto done) {
                      c.with_shares([&c, req = m.assoc_mgr(), done] { done(Result<pb::AssocMgrReply>(c.assoc_mgr(req))); });
                    },
                    [](pb::Envelope& env, pb::AssocMgrReply r) { *env.mutable_assoc_mgr_reply() = std::move(r); })},
      {pb::Envelope::kReport,
       answer_later([](Controller& c, const pb::Envelope& m, const net::Identity&, auto done) { c.report(m.report(), done); },
                    [](pb::Envelope& env, pb::ReportReply r) { *env.mutable_report_reply() = std::move(r); })},
      {pb::Envelope::kShare,
       answer_later([](Controller& c, const pb::Envelope&, const net::Identity&, auto done) {
                      c.with_shares([&c, done] { done(Result<pb::ShareReply>(c.shares())); });
                    },
                    [](pb::Envelope& env, pb::ShareReply r) { *env.mutable_share_reply() = std::move(r); })},
      {pb::Envelope::kStepQuery, answer([](Controller& c, const pb::Envelope& m, const net::Identity&, pb::Envelope& out) {
         *out.mutable_step_query_reply() = c.steps(m.step_query());
       })},
      {pb::Envelope::kNodes, answer([](Controller& c, const pb::Envelope& m, const net::Identity&, pb::Envelope& out) {
         *out.mutable_nodes_reply() = c.nodes();
         c.add_reservations(*out.mutable_nodes_reply());
         if (m.nodes().with_config()) c.add_config(*out.mutable_nodes_reply());
         if (m.nodes().with_topology()) c.add_topology(m.nodes().topology_name(), *out.mutable_nodes_reply());
       })},
  };
  return table;
}

void log_close(const ConnPtr& conn, const Status& why) {
  if (why.code() != Code::kUnavailable) log::warn("closed connection from " + conn->peer() + ": " + why.message());
}

// Closes `conn` when no message arrived for `idle_s`; touch() on every message.
class IdleTimer {
 public:
  IdleTimer(asio::any_io_executor ex, ConnPtr conn, Duration idle_s)
      : timer_(std::make_shared<asio::steady_timer>(ex)), conn_(std::move(conn)), idle_s_(idle_s) {
    touch();
  }
  ~IdleTimer() { timer_->cancel(); }
  void touch() {
    timer_->expires_after(std::chrono::seconds(idle_s_));
    timer_->async_wait([weak = std::weak_ptr<net::Connection>(conn_), idle = idle_s_](const asio::error_code& ec) {
      if (auto c = weak.lock(); c && !ec) c->close("idle for " + std::to_string(idle) + " s");
    });
  }

 private:
  std::shared_ptr<asio::steady_timer> timer_;
  ConnPtr conn_;
  Duration idle_s_;
};

// A client request's type as /metrics counts it: its message's field name.
const char* rpc_name(pb::Envelope::MsgCase c) {
  switch (c) {
    case pb::Envelope::kAcctMgr: return "acct_mgr";
    case pb::Envelope::kAcctQuery: return "acct_query";
    case pb::Envelope::kAllocate: return "allocate";
    case pb::Envelope::kAllocationAlive: return "allocation_alive";
    case pb::Envelope::kAssocMgr: return "assoc_mgr";
    case pb::Envelope::kCancel: return "cancel";
    case pb::Envelope::kExplain: return "explain";
    case pb::Envelope::kJobComplete: return "job_complete";
    case pb::Envelope::kJobControl: return "job_control";
    case pb::Envelope::kJobUpdate: return "job_update";
    case pb::Envelope::kNodeControl: return "node_control";
    case pb::Envelope::kNodes: return "nodes";
    case pb::Envelope::kPartitionUpdate: return "partition_update";
    case pb::Envelope::kQueue: return "queue";
    case pb::Envelope::kReport: return "report";
    case pb::Envelope::kReservation: return "reservation";
    case pb::Envelope::kShare: return "share";
    case pb::Envelope::kStepMgrQuery: return "step_mgr_query";
    case pb::Envelope::kStepQuery: return "step_query";
    case pb::Envelope::kSubmit: return "submit";
    case pb::Envelope::kToken: return "token";
    default: return "other";
  }
}

asio::awaitable<void> client_session(Controller& ctl, ConnPtr conn, net::Identity who) {
  IdleTimer idle(co_await asio::this_coro::executor, conn, ctl.config().client_idle_timeout);
  while (true) {
    auto msg = co_await conn->recv();
    idle.touch();
    if (!msg) {
      log_close(conn, msg.status());
      break;
    }
    auto it = client_handlers().find(msg->msg_case());
    if (it == client_handlers().end()) {
      conn->send(net::error_reply(msg->seq(), invalid("unexpected message from a client")));
      continue;
    }
    double t0 = net::mono_seconds();
    it->second(ctl, conn, *msg, who);
    ctl.count_request(rpc_name(msg->msg_case()), net::mono_seconds() - t0);
  }
}

asio::awaitable<void> agent_session(Controller& ctl, ConnPtr conn) {
  auto first = co_await conn->recv();
  if (!first) co_return;
  if (first->has_ca_request()) {  // configless join: the CA, then the node reconnects verified
    auto ca = ctl.ca_for(first->ca_request());
    if (!ca) co_return conn->send(net::error_reply(first->seq(), ca.status()));
    pb::Envelope env;
    *env.mutable_ca_reply() = *ca;
    reply(conn, first->seq(), std::move(env));
    // The node hangs up once it has the answer; closing first could cut the reply off.
    IdleTimer linger(co_await asio::this_coro::executor, conn, 10);
    (void)co_await conn->recv();
    co_return;
  }
  if (!first->has_register_node()) {
    conn->send(net::error_reply(first->seq(), invalid("a node must register first")));
    co_return;
  }
  std::string name = first->register_node().name();
  if (!ctl.agent_register(conn, first->seq(), first->register_node())) co_return;
  while (true) {
    auto msg = co_await conn->recv();
    if (!msg) {
      log_close(conn, msg.status());
      break;
    }
    if (msg->has_heartbeat()) {
      ctl.agent_heartbeat(name, msg->heartbeat());
      pb::Envelope echo;  // the agent hears the controller (fencing counts from its last word)
      echo.mutable_heartbeat()->set_time(msg->heartbeat().time());
      conn->send(echo);
    }
    else if (msg->has_job_ended()) ctl.agent_job_ended(name, conn, msg->job_ended());
    else if (msg->has_node_health()) ctl.agent_health(name, msg->node_health());
    else if (msg->has_step_report()) ctl.agent_steps(name, conn, msg->step_report());
    else log::warn("node " + name + " sent an unexpected message; ignored");
  }
  ctl.agent_disconnected(name, conn);
}

asio::awaitable<void> session(Controller& ctl, ConnPtr conn) {
  auto greeted = co_await net::greet(*conn, ctl.config().name, static_cast<double>(ctl.config().handshake_timeout),
                                     [&ctl](const pb::Hello& hello) { return ctl.authenticate(hello); });
  if (!greeted) co_return;
  if (greeted->hello.role() == "node") co_await agent_session(ctl, conn);
  else co_await client_session(ctl, conn, greeted->who);
  conn->close("session ended");
}

// A client on the controller's own host, through the local socket: the kernel said who it
// is (SO_PEERCRED), so its Hello needs no token; nodes always come over TLS with theirs.
asio::awaitable<void> local_session(Controller& ctl, ConnPtr conn, net::Identity who) {
  auto hello = co_await conn->handshake_as_server(ctl.config().name, static_cast<double>(ctl.config().handshake_timeout));
  if (!hello) co_return;
  if (hello->role() != "client") {
    conn->send(net::error_reply(0, denied("the local socket serves clients only; a '" + hello->role() +
                                          "' connects over TLS")));
    co_return;
  }
  co_await client_session(ctl, conn, std::move(who));
  conn->close("session ended");
}

// Connections at once, in total and per peer (flood protection): per address over TCP,
// per uid on the local socket.
struct ConnectionCounts {
  int total = 0;
  std::map<std::string, int> per_peer;
  double last_refusal_log = 0;

  // Counts one more connection from `peer`; false (and a line in the log now and then)
  // when that would pass the config's limits.
  bool admit(const std::string& peer, const ClusterConfig& cfg) {
    if (total >= cfg.max_connections || per_peer[peer] >= cfg.max_connections_per_peer) {
      double now = net::mono_seconds();
      if (now - last_refusal_log > 5) {  // a flood must not flood the log too
        log::warn("refusing connections from " + peer + ": " + std::to_string(per_peer[peer]) + " open from it, " +
                  std::to_string(total) + " in total (limits " + std::to_string(cfg.max_connections_per_peer) + "/" +
                  std::to_string(cfg.max_connections) + ")");
        last_refusal_log = now;
      }
      return false;
    }
    ++total;
    ++per_peer[peer];
    return true;
  }
  void release(const std::string& peer) {
    --total;
    if (--per_peer[peer] == 0) per_peer.erase(peer);
  }
};

// Runs `session` for an admitted connection; its end gives the place back.
void spawn_session(asio::any_io_executor ex, asio::awaitable<void> session, std::shared_ptr<net::Connection> conn,
                   std::shared_ptr<ConnectionCounts> counts, std::string peer) {
  asio::co_spawn(ex, std::move(session), [conn, counts, peer](std::exception_ptr e) {
    counts->release(peer);
    if (!e) return;
    try { std::rethrow_exception(e); } catch (const std::exception& ex) {
      log::error("session with " + conn->peer() + " failed: " + ex.what());
    }
    conn->close("session error");
  });
}

// What an accepted, admitted TCP connection becomes: its stream (TLS or plain), the
// executor, and the place in the counts it gives back when it ends.
using ServeTcp = std::function<void(asio::any_io_executor, std::unique_ptr<net::ByteStream>,
                                    std::shared_ptr<ConnectionCounts>, std::string peer)>;

// Accepts on `acceptor` while it is open; each connection admitted by the limits (`what`
// names the listener in the log) goes to `serve`. `tls` null: plain TCP.
asio::awaitable<void> accept_tcp(Controller& ctl, asio::ip::tcp::acceptor& acceptor, std::shared_ptr<net::TlsContext> tls,
                                 std::string what, ServeTcp serve) {
  auto ex = co_await asio::this_coro::executor;
  auto counts = std::make_shared<ConnectionCounts>();
  while (acceptor.is_open()) {
    asio::error_code ec;
    asio::ip::tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      log::warn(what + " accept failed: " + ec.message());
      continue;
    }
    asio::error_code pec;
    std::string peer = socket.remote_endpoint(pec).address().to_string();
    if (!counts->admit(peer, ctl.config())) {
      socket.close(pec);
      continue;
    }
    serve(ex, tls ? net::make_tls_stream(std::move(socket), tls) : net::make_tcp_stream(std::move(socket)), counts, peer);
  }
}

// RPC connections: the handshake, then a client's or an agent's session.
asio::awaitable<void> accept_loop(Controller& ctl, asio::ip::tcp::acceptor& acceptor,
                                  std::shared_ptr<net::TlsContext> tls) {
  co_await accept_tcp(ctl, acceptor, std::move(tls), "rpc",
                      [&ctl](asio::any_io_executor ex, std::unique_ptr<net::ByteStream> stream,
                             std::shared_ptr<ConnectionCounts> counts, std::string peer) {
                        auto conn = std::make_shared<net::Connection>(ex, std::move(stream));
                        spawn_session(ex, session(ctl, conn), conn, std::move(counts), std::move(peer));
                      });
}

// HTTP connections ([controller] http_port): each served by net/http_server, its requests
// answered by Controller::http; `tls` null for plain HTTP (127.0.0.1 only).
asio::awaitable<void> http_accept_loop(Controller& ctl, asio::ip::tcp::acceptor& acceptor,
                                       std::shared_ptr<net::TlsContext> tls) {
  co_await accept_tcp(ctl, acceptor, std::move(tls), "http",
                      [&ctl](asio::any_io_executor ex, std::unique_ptr<net::ByteStream> stream,
                             std::shared_ptr<ConnectionCounts> counts, std::string peer) {
                        net::HttpHandler handler = [&ctl](const net::HttpRequest& req, net::HttpRespond respond) {
                          ctl.http(req, std::move(respond));
                        };
                        asio::co_spawn(ex, net::serve_http(std::move(stream), std::move(handler)),
                                       [counts, peer](std::exception_ptr) { counts->release(peer); });
                      });
}

// Opens the HTTP listener when [controller] http_port asks for one, and says where it is
// (<state_dir>/http.addr, and the dashboard's URL to `ctl` for hq token --url). False with a message on stderr when it cannot.
bool listen_http(const ClusterConfig& c, asio::ip::tcp::acceptor& acceptor, Controller& ctl) {
  if (c.controller.http_port < 0) return true;
  std::string host = c.controller.http_host.empty() ? c.controller.host : c.controller.http_host;
  asio::error_code ec;
  auto addr = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (ec) addr = asio::ip::address_v4::any();
  try {
    asio::ip::tcp::endpoint ep(addr, static_cast<uint16_t>(c.controller.http_port));
    acceptor.open(ep.protocol());
    acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen(256);
  } catch (const std::exception& e) {
    hq::cerr() << "hq controller: cannot listen for HTTP on " << host << ":" << c.controller.http_port << ": " << e.what() << "\n";
    return false;
  }
  std::string shown = host == "0.0.0.0" ? "127.0.0.1" : host;
  std::string where = shown + ":" + std::to_string(acceptor.local_endpoint().port());
  if (Status s = write_file_atomic(c.controller.state_dir + "/http.addr", where + "\n", 0644); !s) log::warn(s.message());
  // The link names the controller's own address when HTTP listens on every address.
  std::string link_host = host == "0.0.0.0" && c.controller.host != "0.0.0.0" ? c.controller.host : shown;
  if (link_host.find(':') != std::string::npos) link_host = "[" + link_host + "]";  // IPv6
  ctl.set_dashboard_url(std::string(c.controller.http_plain ? "http://" : "https://") + link_host + ":" +
                        std::to_string(acceptor.local_endpoint().port()) + "/ui/");
  log::info(std::string("serving ") + (c.controller.http_plain ? "HTTP" : "HTTPS") + " on " + where);
  return true;
}

asio::awaitable<void> local_accept_loop(Controller& ctl, asio::local::stream_protocol::acceptor& acceptor) {
  auto ex = co_await asio::this_coro::executor;
  auto counts = std::make_shared<ConnectionCounts>();
  while (acceptor.is_open()) {
    asio::error_code ec;
    auto socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      log::warn("local accept failed: " + ec.message());
      continue;
    }
    auto who = local_peer_identity(socket.native_handle());
    std::string peer = who ? "uid " + std::to_string(who->uid) : "";
    if (!who || !counts->admit(peer, ctl.config())) {
      socket.close(ec);
      continue;
    }
    auto conn = std::make_shared<net::Connection>(ex, net::make_unix_stream(std::move(socket)));
    spawn_session(ex, local_session(ctl, conn, std::move(*who)), conn, counts, peer);
  }
}

Result<asio::ip::tcp::endpoint> listen_endpoint(const ClusterConfig& c) {
  asio::error_code ec;
  auto addr = asio::ip::make_address(c.controller.host == "localhost" ? "127.0.0.1" : c.controller.host, ec);
  if (ec) addr = asio::ip::address_v4::any();  // a host name: listen on every interface
  return asio::ip::tcp::endpoint(addr, static_cast<uint16_t>(c.controller.port));
}

// The controller does not start on a state database it cannot use in full.
int refuse_state(const std::string& db_path, const std::string& what, const Status& why) {
  hq::cerr() << "hq controller: " << what << ": " << why.message() << "\n";
  if (why.code() == Code::kInvalid) hq::cerr() << "hq controller: " << damaged_state_advice(db_path) << "\n";
  return 1;
}

int serve(const ClusterConfig& config, const std::string& config_path, const std::string& log_file, bool plaintext) {
  std::error_code fec;
  std::filesystem::create_directories(config.controller.state_dir, fec);
  if (fec) {
    hq::cerr() << "hq controller: cannot create state dir " << config.controller.state_dir << ": " << fec.message() << "\n";
    return 1;
  }
  log::init("controller", log_file);
  raise_fd_limit();
  keep_freed_memory();
  no_fast_bins();
  std::shared_ptr<net::TlsContext> tls;
  if (plaintext) {
    log::warn("--insecure-plaintext: connections are NOT encrypted; use only for debugging");
  } else {
    auto ctx = controller_tls(config.keys_dir, config.name);
    if (!ctx) {
      hq::cerr() << "hq controller: " << ctx.status().message() << "\n";
      return 1;
    }
    tls = *ctx;
  }
  std::string db_path = state_db_path(config.controller.state_dir);
  auto journal = store::Journal::open(db_path);
  if (!journal) return refuse_state(db_path, "cannot open the state database", journal.status());
  asio::io_context io(1);
  Controller ctl(io, config, std::move(journal).value(), config.keys_dir + "/secret");
  std::error_code ec;
  std::string path = std::filesystem::absolute(config_path, ec).string();  // the daemon may change directory
  ctl.set_config_source([path] { return load_config_file(path); });
  if (Status s = ctl.load_keys(); !s) {
    hq::cerr() << "hq controller: " << s.message() << "\n";
    return 1;
  }
  std::string auth_path = config.controller.auth_socket.empty() ? config.controller.state_dir + "/auth.sock"
                                                                : config.controller.auth_socket;
  AuthService auth(io, auth_path, [&ctl]() -> const net::Keyring& { return ctl.keyring(); });
  if (Status s = auth.start(); !s) {
    hq::cerr() << "hq controller: " << s.message() << "\n";
    return 1;
  }
  if (Status s = ctl.recover(); !s) return refuse_state(db_path, "cannot recover state", s);
  std::string local_path = client_socket_path(config.controller);
  asio::local::stream_protocol::acceptor local(io);
  if (!local_path.empty()) {
    if (Status s = listen_local(local, local_path, "client socket"); !s) {
      hq::cerr() << "hq controller: " << s.message() << "\n";
      return 1;
    }
  }
  auto ep = listen_endpoint(config);
  asio::ip::tcp::acceptor acceptor(io);
  try {
    acceptor.open(ep->protocol());
    acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor.bind(*ep);
    acceptor.listen(1024);
  } catch (const std::exception& e) {
    hq::cerr() << "hq controller: cannot listen on " << config.controller.host << ":" << config.controller.port
              << ": " << e.what() << "\n";
    return 1;
  }
  asio::ip::tcp::acceptor http_acceptor(io);
  if (plaintext && config.controller.http_port >= 0 && !config.controller.http_plain) {
    hq::cerr() << "hq controller: --insecure-plaintext has no certificate for HTTPS: set http_plain = true "
                 "(127.0.0.1 only) or http_port = -1\n";
    return 1;
  }
  if (!listen_http(config, http_acceptor, ctl)) return 1;
  uint16_t port = acceptor.local_endpoint().port();
  std::string host = config.controller.host == "0.0.0.0" ? "127.0.0.1" : config.controller.host;
  if (Status s = write_file_atomic(config.controller.state_dir + "/controller.addr", host + ":" + std::to_string(port) + "\n", 0644); !s)
    log::warn(s.message());
  log::info("controller for cluster '" + config.name + "' listening on " + host + ":" + std::to_string(port) +
            " (pid " + std::to_string(getpid()) + ")");
  ctl.set_bound_port(port);
  ctl.start();
  asio::co_spawn(io, accept_loop(ctl, acceptor, tls), [](std::exception_ptr e) {
    if (e) log::error("accept loop ended by an exception");
  });
  if (http_acceptor.is_open())
    asio::co_spawn(io, http_accept_loop(ctl, http_acceptor, config.controller.http_plain ? nullptr : tls),
                   [](std::exception_ptr e) {
                     if (e) log::error("http accept loop ended by an exception");
                   });
  if (local.is_open())
    asio::co_spawn(io, local_accept_loop(ctl, local), [](std::exception_ptr e) {
      if (e) log::error("local accept loop ended by an exception");
    });
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code&, int sig) {
    log::info("signal " + std::to_string(sig) + ": shutting down");
    acceptor.close();
    if (http_acceptor.is_open()) http_acceptor.close();
    if (local.is_open()) close_local(local, local_path);
    auth.stop();
    ctl.shutdown();
    io.stop();
  });
  io.run();
  return 0;
}

// `hq controller --check-state`: verifies a state directory offline (nothing is started
// or written). `config_path` (optional) gives the nodes and partitions to replay into.
int check_state(const std::string& config_path, std::string state_dir) {
  ClusterState state;
  if (!config_path.empty()) {
    auto config = load_config_file(config_path);
    if (!config) {
      hq::cerr() << "hq controller: " << config.status().message() << "\n";
      return 1;
    }
    if (state_dir.empty()) state_dir = config->controller.state_dir;
    state = make_state(*config);
  }
  std::string db_path = state_db_path(state_dir);
  auto check = check_state_dir(state_dir, std::move(state));
  if (!check) return refuse_state(db_path, "state check failed", check.status());
  hq::cout() << describe_state_check(db_path, *check) << "\n";
  return 0;
}

}  // namespace

int run_controller(const Args& args) {
  CLI::App app{"hq controller: queue, scheduler and node registry"};
  std::string config_path, log_file, state_dir;
  bool plaintext = false, check = false;
  app.add_option("-c,--config", config_path, "cluster config (TOML)");
  app.add_flag("--insecure-plaintext", plaintext, "no TLS (debugging only; warns at every start)");
  app.add_option("--log-file", log_file, "log to this file instead of stderr");
  app.add_flag("--check-state", check,
               "verify the state directory offline and exit (0: usable, 1: not, with what is wrong and what "
               "to do); opens <state_dir>/state.db read-only, runs SQLite's integrity check, and replays the "
               "snapshot and every journal event as a start would. Starts nothing, writes nothing");
  app.add_option("--state-dir", state_dir, "with --check-state: the state directory to verify (instead of the config's)");
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    return cli_parse_failure(app, e, "hq controller");
  }
  if (!state_dir.empty() && !check) {
    hq::cerr() << "hq controller: --state-dir is for --check-state only (a controller takes its state_dir from -c)\n";
    return 2;
  }
  if (check && config_path.empty() && state_dir.empty()) {
    hq::cerr() << "hq controller: --check-state needs -c/--config FILE or --state-dir DIR\n";
    return 2;
  }
  if (check) return check_state(config_path, state_dir);
  if (config_path.empty()) {
    hq::cerr() << "hq controller: -c/--config FILE is required\n" << app.help();
    return 2;
  }
  auto config = load_config_file(config_path);
  if (!config) {
    hq::cerr() << "hq controller: " << config.status().message() << "\n";
    return 1;
  }
  return serve(*config, config_path, log_file, plaintext);
}

}  // namespace hq::cmd
