// `hq accounting`: the accounting store as a daemon of its own, for sites that keep it off
// the controller's host, or one store for several clusters. It serves store/acct_store.hpp's
// calls over TLS (a certificate from the cluster CA) to controllers only: a Hello of role
// "controller" with a token of that role minted from the store's own secret
// (keys_dir/accounting.secret) where there is one, else the cluster secret; users' tokens
// are refused (they ask the controller, which asks the store). The store is SQLite or
// PostgreSQL (store::open_acct_store), owned by one worker thread; the io thread owns the
// connections.
// A connection's requests are answered in order (the worker runs them in order, and
// posts each answer back to the io thread).
#include <algorithm>

#include <CLI/CLI.hpp>
#include <asio/co_spawn.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/signal_set.hpp>
#include <asio/use_awaitable.hpp>
#include <filesystem>
#include <unistd.h>

#include "cmd/accounting/store_wire.hpp"
#include "cmd/cli_parse.hpp"
#include "cmd/commands.hpp"
#include "cmd/config_toml.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/replay_guard.hpp"
#include "core/std_streams.hpp"
#include "net/client.hpp"
#include "net/clock.hpp"
#include "net/connection.hpp"
#include "net/log.hpp"
#include "net/peer.hpp"
#include "net/tls.hpp"
#include "store/acct_store.hpp"
#include "store/worker.hpp"

namespace hq::cmd {
namespace {

using ConnPtr = std::shared_ptr<net::Connection>;
// Jobs' records per reply: a reply stays well under a frame's 16 MiB.
constexpr size_t kReplyBytes = 4 << 20;

// A long answer in replies of about kReplyBytes each, every one but the last saying `more`.
class ReplyParts {
 public:
  // The reply that `bytes` more go into.
  pb::StoreReply& room(size_t bytes) {
    if (bytes_ > kReplyBytes) {
      out_.back().set_more(true);
      out_.emplace_back();
      bytes_ = 0;
    }
    bytes_ += bytes;
    return out_.back();
  }
  std::vector<pb::StoreReply> take() { return std::move(out_); }

 private:
  std::vector<pb::StoreReply> out_ = std::vector<pb::StoreReply>(1);
  size_t bytes_ = 0;
};

Result<std::vector<pb::StoreReply>> answer_query(store::AcctStore& db, const pb::StoreJobQuery& wire) {
  store::AcctJobQuery q = from_pb(wire);
  std::vector<std::string> steps;
  auto jobs = db.query(q, q.with_steps ? &steps : nullptr);
  if (!jobs) return jobs.status();
  ReplyParts parts;
  for (std::string& job : std::move(jobs).value()) parts.room(job.size()).add_jobs(std::move(job));
  for (std::string& step : steps) parts.room(step.size()).add_steps(std::move(step));
  return parts.take();
}

Result<std::vector<pb::StoreReply>> answer_node_spans(store::AcctStore& db, const pb::StoreJobQuery& wire) {
  auto spans = db.node_spans(from_pb(wire));
  if (!spans) return spans.status();
  ReplyParts parts;
  for (std::string& span : std::move(spans).value()) parts.room(span.size()).add_spans(std::move(span));
  return parts.take();
}

Result<std::vector<pb::StoreReply>> answer_load_model(store::AcctStore& db) {
  auto rows = db.load_model();
  if (!rows) return rows.status();
  ReplyParts parts;
  for (const auto& [key, body] : *rows) {
    pb::StoreModelRow* row = parts.room(body.size()).add_rows();
    row->set_kind(key.first);
    row->set_key(key.second);
    row->set_body(body);
  }
  return parts.take();
}

// One reply holding `value` (or the store's error).
Result<std::vector<pb::StoreReply>> one_value(const Result<int64_t>& value) {
  if (!value) return value.status();
  std::vector<pb::StoreReply> out(1);
  out[0].set_value(*value);
  return out;
}

// The answers to one request, worked out on the store's thread.
Result<std::vector<pb::StoreReply>> answer(store::AcctStore& db, const pb::StoreRequest& req) {
  switch (req.op_case()) {
    case pb::StoreRequest::kShipped:
      return one_value(db.shipped(req.source()));
    case pb::StoreRequest::kApply: {
      std::vector<store::AcctJob> jobs;
      jobs.reserve(static_cast<size_t>(req.apply().jobs_size() + req.apply().spans_size()));
      for (const auto& row : req.apply().jobs()) jobs.push_back(from_pb(row));
      for (const auto& row : req.apply().spans()) {
        jobs.push_back(from_pb(row));
        jobs.back().node_span = true;
      }
      std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
      return one_value(db.apply(req.source(), jobs));
    }
    case pb::StoreRequest::kQuery:
      return answer_query(db, req.query());
    case pb::StoreRequest::kCount:
      return one_value(db.count());
    case pb::StoreRequest::kNodeSpans:
      return answer_node_spans(db, req.node_spans());
    case pb::StoreRequest::kLoadModel:
      return answer_load_model(db);
    case pb::StoreRequest::kSaveModel: {
      Status s = db.save_model(from_pb(req.save_model().before()), from_pb(req.save_model().next()));
      if (!s) return s;
      return std::vector<pb::StoreReply>(1);
    }
    default:
      return invalid("a store request of no known kind");
  }
}

class StoreServer {
 public:
  // Tokens are checked with store_secret_file(keys_dir): the store's own secret once there
  // is one (looked for at each connection, as the controller does), else the cluster's.
  StoreServer(asio::io_context& io, std::unique_ptr<store::AcctStore> db, std::string keys_dir)
      : io_(io), db_(std::move(db)), keys_dir_(std::move(keys_dir)), keys_path_(store_secret_file(keys_dir_)), keys_(keys_path_) {}
  ~StoreServer() { worker_.stop(); }

  Status load_keys() {
    Status s = keys_.load();
    if (s) log::info("accounting: controllers' tokens are checked with " + keys_path_ + secret_kind(keys_path_));
    return s;
  }
  std::string where() const { return db_->where(); }

  // Only a controller: the token's role and the Hello's both say so, and the token is new.
  Result<net::Identity> authenticate(const pb::Hello& hello) {
    if (std::string want = store_secret_file(keys_dir_); want != keys_path_) {  // a store secret made (or removed)
      KeyringWatcher next(want);
      if (Status s = next.load(); !s) {
        log::warn("accounting: " + s.message() + " (tokens are still checked with " + keys_path_ + ")");
      } else {
        keys_ = std::move(next);
        keys_path_ = want;
        log::info("accounting: controllers' tokens are checked with " + keys_path_ + secret_kind(keys_path_) + " from now on");
      }
    }
    if (std::string changed = keys_.refresh(); !changed.empty()) log::info(changed);
    auto who = net::verify_token(keys_.keys(), hello.token(), net::wall_now());
    if (!who) return who;
    if (who->role != "controller" || hello.role() != "controller")
      return denied("the accounting store answers controllers only (this is role '" + hello.role() +
                    "'); ask the controller (sacct, sacctmgr)");
    if (!replay_.first_use(who->nonce, who->expires, net::wall_now())) return denied("identity token was already used");
    return who;
  }

  void handle(const ConnPtr& conn, uint64_t seq, pb::StoreRequest req) {
    worker_.run([this, conn, seq, req = std::move(req)]() mutable {
      auto replies = answer(*db_, req);
      if (!replies) log::warn("accounting: " + replies.status().message());
      // The connection goes back with the answer: its last reference must not end here,
      // off the io thread.
      asio::post(io_, [conn = std::move(conn), seq, replies = std::move(replies)]() mutable {
        if (!replies) return conn->send(net::error_reply(seq, replies.status()));
        for (auto& reply : *replies) {
          pb::Envelope env;
          env.set_seq(seq);
          *env.mutable_store_reply() = std::move(reply);
          conn->send(env);
        }
      });
    });
  }

 private:
  asio::io_context& io_;
  static std::string secret_kind(const std::string& path) {
    return path.ends_with("/accounting.secret") ? " (the store's own secret)" : " (the cluster secret)";
  }

  std::unique_ptr<store::AcctStore> db_;  // used on worker_ only
  std::string keys_dir_, keys_path_;
  KeyringWatcher keys_;
  ReplayGuard replay_;
  store::Worker worker_;  // last: stopped first
};

asio::awaitable<void> store_session(StoreServer& srv, ConnPtr conn) {
  auto greeted = co_await net::greet(*conn, "accounting", 10, [&srv](const pb::Hello& hello) { return srv.authenticate(hello); });
  if (!greeted) co_return;
  log::info("controller connected from " + conn->peer());
  while (true) {
    auto msg = co_await conn->recv();
    if (!msg) break;
    if (!msg->has_store_request()) {
      conn->send(net::error_reply(msg->seq(), invalid("the accounting store takes store requests only")));
      continue;
    }
    srv.handle(conn, msg->seq(), std::move(*msg->mutable_store_request()));
  }
  conn->close("session ended");
}

asio::awaitable<void> accept_loop(StoreServer& srv, asio::ip::tcp::acceptor& acceptor,
                                  std::shared_ptr<net::TlsContext> tls) {
  auto ex = co_await asio::this_coro::executor;
  while (acceptor.is_open()) {
    asio::error_code ec;
    asio::ip::tcp::socket socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      log::warn("accept failed: " + ec.message());
      continue;
    }
    auto conn = std::make_shared<net::Connection>(ex, net::make_tls_stream(std::move(socket), tls));
    asio::co_spawn(ex, store_session(srv, conn), [conn](std::exception_ptr e) {
      if (e) conn->close("session error");
    });
  }
}

Status listen_on(asio::ip::tcp::acceptor& acceptor, const AccountingConfig& a) {
  asio::error_code ec;
  auto addr = asio::ip::make_address(a.host == "localhost" ? "127.0.0.1" : a.host, ec);
  if (ec) addr = asio::ip::address_v4::any();  // no host, or a name: every interface
  try {
    asio::ip::tcp::endpoint ep(addr, static_cast<uint16_t>(a.port));
    acceptor.open(ep.protocol());
    acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen(64);
  } catch (const std::exception& e) {
    return unavailable("cannot listen on " + (a.host.empty() ? std::string("*") : a.host) + ":" +
                       std::to_string(a.port) + ": " + e.what());
  }
  return Status::ok();
}

int fail(const std::string& message) {
  hq::cerr() << "hq accounting: " << message << "\n";
  return 1;
}

int serve_store(const ClusterConfig& config, const std::string& log_file) {
  log::init("accounting", log_file);
  raise_fd_limit();
  auto tls = accounting_tls(config.keys_dir);
  if (!tls) return fail(tls.status().message());
  std::string path = config.accounting.path.empty() ? config.controller.state_dir + "/accounting.db" : config.accounting.path;
  std::error_code fec;
  bool postgres = store::is_postgres_uri(path);
  // accounting.addr goes beside the SQLite file, or into the state directory
  std::string dir = postgres ? config.controller.state_dir : std::filesystem::path(path).parent_path().string();
  if (!dir.empty()) std::filesystem::create_directories(dir, fec);
  auto db = store::open_acct_store(path);
  if (!db) return fail(db.status().message());
  if (auto n = (*db)->count(); !n)  // a database server down now is asked again at each request
    log::warn("accounting: " + n.status().message() + " (trying again at each request)");
  asio::io_context io(1);
  StoreServer srv(io, std::move(db).value(), config.keys_dir);
  if (Status s = srv.load_keys(); !s) return fail(s.message());
  asio::ip::tcp::acceptor acceptor(io);
  if (Status s = listen_on(acceptor, config.accounting); !s) return fail(s.message());
  uint16_t port = acceptor.local_endpoint().port();
  std::string host = config.accounting.host.empty() || config.accounting.host == "0.0.0.0" ? "127.0.0.1" : config.accounting.host;
  if (Status s = write_file_atomic((dir.empty() ? "." : dir) + "/accounting.addr", host + ":" + std::to_string(port) + "\n", 0644); !s)
    log::warn(s.message());
  log::info("accounting store " + srv.where() + " listening on " + host + ":" + std::to_string(port) + " (pid " +
            std::to_string(getpid()) + ")");
  asio::co_spawn(io, accept_loop(srv, acceptor, *tls), [](std::exception_ptr e) {
    if (e) log::error("accept loop ended by an exception");
  });
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code&, int sig) {
    log::info("signal " + std::to_string(sig) + ": shutting down");
    acceptor.close();
    io.stop();
  });
  io.run();
  return 0;
}

}  // namespace

int run_accounting(const Args& args) {
  CLI::App app{"hq accounting: the accounting store as a daemon of its own (controllers with [accounting] "
               "storage = \"remote\" ship their job records to it and ask it sacct's questions)"};
  std::string config_path, log_file, path, listen;
  app.add_option("-c,--config", config_path, "cluster config (TOML): [accounting] host, port and path, [cluster] keys_dir");
  app.add_option("--path", path, "the store: an SQLite file, or a PostgreSQL database as a libpq URI "
                                 "(postgresql://USER@HOST[,HOST2]/DB?target_session_attrs=read-write); default: "
                                 "[accounting] path, else <state_dir>/accounting.db");
  app.add_option("--listen", listen, "HOST:PORT to listen on (default: [accounting] host and port, 6819)");
  app.add_option("--log-file", log_file, "log to this file instead of stderr");
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    return cli_parse_failure(app, e, "hq accounting");
  }
  if (config_path.empty()) {
    hq::cerr() << "hq accounting: -c/--config FILE is required\n" << app.help();
    return 2;
  }
  auto config = load_config_file(config_path);
  if (!config) return fail(config.status().message());
  if (!path.empty()) config->accounting.path = path;
  if (!listen.empty()) {
    auto ep = net::parse_endpoint(listen, 6819);
    if (!ep) return fail("--listen " + listen + ": " + ep.status().message());
    config->accounting.host = ep->host;
    config->accounting.port = ep->port;
  }
  return serve_store(*config, log_file);
}

}  // namespace hq::cmd
