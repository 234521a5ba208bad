#include "cmd/client/stepmgr_link.hpp"

#include <filesystem>
#include <sys/stat.h>

#include "cmd/paths.hpp"

#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <chrono>
#include <future>
#include <sys/socket.h>
#include <thread>
#include <vector>
#include <unistd.h>

#include "net/connection.hpp"
#include "net/frame.hpp"
#include "net/stream.hpp"
#include "net/tls.hpp"

namespace hq::cmd {
namespace {

using Local = asio::local::stream_protocol::socket;

// Frames from srun (the local end) to the agent; srun closing ends the link.
asio::awaitable<void> upstream(std::shared_ptr<Local> near, std::shared_ptr<net::Connection> remote) {
  net::FrameDecoder decoder;
  char buf[65536];
  while (true) {
    asio::error_code ec;
    size_t n = co_await near->async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec || n == 0) break;
    decoder.feed(buf, n);
    while (true) {
      auto frame = decoder.next();
      if (!frame || !frame->has_value()) break;
      pb::Envelope msg;
      if (msg.ParseFromString(**frame)) remote->send(msg);
    }
  }
  remote->close("srun done");
}

// Frames from the agent to srun, each written out before the next is read: when the agent
// hangs up, srun gets everything before the end.
asio::awaitable<void> downstream(std::shared_ptr<Local> near, std::shared_ptr<net::Connection> remote) {
  while (true) {
    auto msg = co_await remote->recv();
    if (!msg) break;
    asio::error_code ec;
    co_await asio::async_write(*near, asio::buffer(net::encode_frame(msg->SerializeAsString())),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
  }
  asio::error_code ec;
  near->shutdown(asio::socket_base::shutdown_send, ec);
}

// Each relay thread's end, for await_stepmgr_relays(); srun's one thread only.
std::vector<std::future<void>>& relay_ends() {
  static std::vector<std::future<void>> ends;
  return ends;
}

}  // namespace

void await_stepmgr_relays(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  for (auto& end : relay_ends()) end.wait_until(deadline);
  relay_ends().clear();
}

Result<int> dial_stepmgr(const StepMgrAddress& at, bool plaintext, const std::string& token, double timeout_s) {
  if (at.port == 0) return unavailable("the agent of node " + at.node + " takes no steps from other hosts (no step listener)");
  std::shared_ptr<net::TlsContext> tls;
  if (!plaintext) {
    // Its session is kept per agent certificate (as the controller's): the next srun resumes
    // it without public-key operations.
    std::string cache_dir = hq_home() + "/tls";
    std::error_code ec;
    std::filesystem::create_directories(cache_dir, ec);
    chmod(cache_dir.c_str(), 0700);
    std::string cache = ec ? "" : cache_dir + "/session-agent-" + at.fingerprint.substr(0, 16);
    auto ctx = net::make_tls_client_context_pinned(at.fingerprint, cache);
    if (!ctx) return ctx.status().with_context("the agent of node " + at.node);
    tls = *ctx;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return internal("socketpair failed");
  auto ready = std::make_shared<std::promise<Status>>();
  std::future<Status> done = ready->get_future();
  auto finished = std::make_shared<std::promise<void>>();
  relay_ends().push_back(finished->get_future());
  std::thread([at, tls, token, ready, finished, fd = sv[1]]() {
    asio::io_context io;
    auto near = std::make_shared<Local>(io);
    near->assign(asio::local::stream_protocol(), fd);
    auto link = [&]() -> asio::awaitable<void> {
      std::shared_ptr<net::Connection> remote;
      try {
        asio::ip::tcp::resolver resolver(io);
        auto eps = co_await resolver.async_resolve(at.host, std::to_string(at.port), asio::use_awaitable);
        asio::ip::tcp::socket socket(io);
        co_await asio::async_connect(socket, eps, asio::use_awaitable);
        socket.set_option(asio::ip::tcp::no_delay(true));
        std::unique_ptr<net::ByteStream> stream =
            tls ? net::make_tls_stream(std::move(socket), tls) : net::make_tcp_stream(std::move(socket));
        remote = std::make_shared<net::Connection>(io.get_executor(), std::move(stream));
      } catch (const std::exception& e) {
        ready->set_value(unavailable("cannot reach the agent of node " + at.node + " at " + at.host + ":" +
                                     std::to_string(at.port) + ": " + e.what()));
        co_return;
      }
      auto ack = co_await remote->handshake_as_client("client", "", token);
      if (!ack) {
        ready->set_value(ack.status().with_context("the agent of node " + at.node));
        co_return;
      }
      ready->set_value(Status::ok());
      asio::co_spawn(io, upstream(near, remote), asio::detached);
      co_await downstream(near, remote);
    };
    asio::co_spawn(io, link(), asio::detached);
    try {
      io.run();
    } catch (const std::exception&) {  // a relay that fails ends the link; never the process
    }
    finished->set_value();
  }).detach();
  if (done.wait_for(std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000))) != std::future_status::ready) {
    close(sv[0]);
    return unavailable("timed out reaching the agent of node " + at.node + " at " + at.host + ":" + std::to_string(at.port));
  }
  if (Status s = done.get(); !s) {
    close(sv[0]);
    return s;
  }
  return sv[0];
}

}  // namespace hq::cmd
