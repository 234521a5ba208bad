// net/http_server on a real loopback socket: requests answered now and later, kept-alive and
// pipelined requests, and bad input (malformed, a body or headers too large, a client too
// slow) answered with the right status and the connection closed, never a hang.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <string>
#include <thread>

#include "net/http_server.hpp"

using namespace hq::net;

namespace {

// A server on 127.0.0.1 in a thread of its own, answering with `handler`.
class Server {
 public:
  explicit Server(HttpHandler handler, HttpLimits limits = {}) : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(io_, accept(std::move(handler), limits), asio::detached);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Server() {
    asio::post(io_, [this] { io_.stop(); });
    thread_.join();
  }
  uint16_t port() const { return port_; }
  asio::io_context& io() { return io_; }

 private:
  asio::awaitable<void> accept(HttpHandler handler, HttpLimits limits) {
    for (;;) {
      asio::error_code ec;
      auto socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(io_, serve_http(make_tcp_stream(std::move(socket)), handler, limits), asio::detached);
    }
  }
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::thread thread_;
};

int connect_to(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may close before it reads everything (a too-large body)
    off += static_cast<size_t>(n);
  }
}

// Everything the server sends until it closes, or until `until` appears; waits at most 10 s.
std::string read_reply(int fd, const std::string& until = "") {
  std::string out;
  char buf[4096];
  for (int waited = 0; waited < 100; ++waited) {
    if (!until.empty() && out.find(until) != std::string::npos) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

HttpHandler echo() {
  return [](const HttpRequest& req, HttpRespond respond) {
    HttpResponse r;
    const std::string* token = req.header("x-slurm-user-token");
    r.body = req.method + " " + req.path + " q=" + req.query + " body=" + req.body + " token=" + (token ? *token : "-");
    respond(std::move(r));
  };
}

}  // namespace

TEST_CASE("http server: a request is parsed (method, path, query, headers by lower-case name, body) and answered") {
  Server s(echo());
  int fd = connect_to(s.port());
  send_all(fd, "POST /slurm/v0.0.43/job/submit?x=1 HTTP/1.1\r\nHost: h\r\nX-SLURM-USER-TOKEN: tok\r\n"
               "Content-Length: 5\r\nConnection: close\r\n\r\nhello");
  std::string reply = read_reply(fd);
  close(fd);
  CHECK(reply.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  const std::string body = "POST /slurm/v0.0.43/job/submit q=x=1 body=hello token=tok";
  CHECK(reply.find("Content-Length: " + std::to_string(body.size()) + "\r\n") != std::string::npos);
  CHECK(reply.substr(reply.size() - body.size() - 4) == "\r\n\r\n" + body);
}

TEST_CASE("http server: kept-alive and pipelined requests on one connection, each answered in order") {
  Server s(echo());
  int fd = connect_to(s.port());
  send_all(fd, "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n");
  std::string both = read_reply(fd, "GET /b");
  CHECK(both.find("GET /a q=") < both.find("GET /b q="));
  send_all(fd, "GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  CHECK(read_reply(fd).find("GET /c q=") != std::string::npos);
  close(fd);
}

TEST_CASE("http server: a handler may answer later (after a durable commit), once") {
  asio::io_context* io = nullptr;
  Server s([&io](const HttpRequest&, HttpRespond respond) {
    asio::post(*io, [respond] {
      respond(HttpResponse{202, "application/json", "{}", {}});
      respond(HttpResponse{500, "text/plain", "twice", {}});  // ignored
    });
  });
  io = &s.io();
  int fd = connect_to(s.port());
  send_all(fd, "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
  std::string reply = read_reply(fd);
  close(fd);
  CHECK(reply.rfind("HTTP/1.1 202 Accepted\r\n", 0) == 0);
  CHECK(reply.find("twice") == std::string::npos);
}

TEST_CASE("http server: bad input gets 400, 413 or 431 and a closed connection - the handler never sees it") {
  int calls = 0;
  HttpLimits limits;
  limits.body_bytes = 100;
  limits.header_bytes = 1024;
  Server s([&calls](const HttpRequest&, HttpRespond respond) { ++calls, respond(HttpResponse{}); }, limits);
  auto exchange = [&](const std::string& bytes) {
    int fd = connect_to(s.port());
    send_all(fd, bytes);
    std::string reply = read_reply(fd);
    close(fd);
    return reply;
  };
  CHECK(exchange("NOT HTTP AT ALL\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(exchange("GET / HTTP/1.1\r\nContent-Length: abc\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(exchange("POST / HTTP/1.1\r\nContent-Length: 1000\r\n\r\n" + std::string(1000, 'x')).rfind("HTTP/1.1 413 ", 0) == 0);
  CHECK(exchange("GET / HTTP/1.1\r\nX-Big: " + std::string(4000, 'a') + "\r\n\r\n").rfind("HTTP/1.1 431 ", 0) == 0);
  CHECK(calls == 0);
}

TEST_CASE("http server: a client too slow to send its request is cut off") {
  HttpLimits limits;
  limits.request_seconds = 0.3;
  Server s(echo(), limits);
  int fd = connect_to(s.port());
  send_all(fd, "GET / HTTP/1.1\r\nHost:");  // and nothing more
  std::string reply = read_reply(fd);  // returns when the server closes (well before 10 s)
  close(fd);
  CHECK(reply.empty());
  int ok = connect_to(s.port());  // the server goes on
  send_all(ok, "GET /next HTTP/1.1\r\nConnection: close\r\n\r\n");
  CHECK(read_reply(ok).find("GET /next") != std::string::npos);
  close(ok);
}

TEST_CASE("http server: Expect: 100-continue gets 100 Continue once the headers are in, then the answer") {
  Server s(echo());
  int fd = connect_to(s.port());
  send_all(fd, "POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n");
  CHECK(read_reply(fd, "\r\n\r\n") == "HTTP/1.1 100 Continue\r\n\r\n");
  send_all(fd, "data");
  std::string reply = read_reply(fd);
  close(fd);
  CHECK(reply.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(reply.find("POST /up q= body=data") != std::string::npos);
}
