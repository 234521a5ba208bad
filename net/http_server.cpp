#include "net/http_server.hpp"

#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cctype>
#include <chrono>
#include <functional>
#include <optional>

namespace hq::net {
namespace {

namespace http = boost::beast::http;
using Parser = http::request_parser<http::string_body>;

std::string_view sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

HttpRequest request_of(const http::request<http::string_body>& m, const std::string& peer) {
  HttpRequest r;
  r.method = std::string(m.method_string());
  r.target = std::string(m.target());
  size_t q = r.target.find('?');
  r.path = r.target.substr(0, q);
  if (q != std::string::npos) r.query = r.target.substr(q + 1);
  for (const auto& f : m) r.headers.emplace_back(lower(sv(f.name_string())), std::string(f.value()));
  r.body = m.body();
  r.peer = peer;
  return r;
}

HttpResponse error_response(int status, std::string_view message) {
  HttpResponse r;
  r.status = status;
  r.body = std::string(message) + "\n";
  return r;
}

// The status a parse error answers: 413 for a body too large, 431 for headers too large,
// 400 for the rest.
int status_of(const boost::beast::error_code& ec) {
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  return 400;
}

// Reads one request into `parser` from `buf` (bytes left from the last one) and the
// stream: true when it is whole; false with `ec` clear when the peer closed before a
// request began, with `ec` set for a bad or cut-off request. `first_byte` runs when the
// request's first byte is there. A client that sent `Expect: 100-continue` is told to go
// on once its headers are in (and within the limits).
asio::awaitable<bool> read_request(ByteStream& stream, std::string& buf, Parser& parser, boost::beast::error_code& ec,
                                   const std::function<void()>& first_byte) {
  char chunk[16 * 1024];
  bool started = !buf.empty(), continued = false;
  if (started) first_byte();
  for (;;) {
    if (!buf.empty()) {
      size_t used = parser.put(boost::asio::buffer(buf.data(), buf.size()), ec);
      buf.erase(0, used);
      if (ec == http::error::need_more) ec = {};
      else if (ec) co_return false;
      if (parser.is_done()) co_return true;
      if (parser.is_header_done() && !continued) {
        continued = true;
        if (boost::beast::iequals(parser.get()[http::field::expect], "100-continue")) {
          static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
          co_await stream.write_all(asio::buffer(kContinue, sizeof kContinue - 1));
        }
      }
      if (used > 0 && !buf.empty()) continue;
    }
    size_t n = co_await stream.read_some(asio::buffer(chunk, sizeof chunk));
    if (n == 0) {  // the peer closed
      if (!started && buf.empty()) co_return false;
      ec = http::error::partial_message;
      co_return false;
    }
    if (!started) first_byte();
    started = true;
    buf.append(chunk, n);
  }
}

// Closes the connection when a step (the TLS handshake, a request, its answer, writing it)
// takes longer than it was given: the read or write under way then ends. Shared with the
// timer's handler, so a handler queued as the connection ends finds it still there; each
// arm() is a new generation, so a handler of an earlier one does nothing.
class Watchdog : public std::enable_shared_from_this<Watchdog> {
 public:
  Watchdog(asio::any_io_executor ex, std::shared_ptr<ByteStream> conn) : timer_(ex), conn_(std::move(conn)) {}
  void arm(double seconds) {
    uint64_t generation = ++generation_;
    timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
    timer_.async_wait([self = shared_from_this(), generation](const asio::error_code& e) {
      if (e || generation != self->generation_) return;
      self->fired_ = true;
      self->conn_->close();
    });
  }
  void disarm() {
    ++generation_;
    timer_.cancel();
  }
  bool fired() const { return fired_; }

 private:
  asio::steady_timer timer_;
  std::shared_ptr<ByteStream> conn_;
  uint64_t generation_ = 0;
  bool fired_ = false;
};

// The head, then the body as it is (a listing of many MiB is not copied once more).
asio::awaitable<void> write_response(ByteStream& stream, const HttpResponse& r, bool keep_alive, bool head) {
  std::string bytes = http_response_bytes(r, keep_alive, /*head=*/true);
  if (!head && r.body.size() < 64 * 1024) {
    bytes += r.body;  // small: one write
    co_await stream.write_all(asio::buffer(bytes));
    co_return;
  }
  co_await stream.write_all(asio::buffer(bytes));
  if (!head) co_await stream.write_all(asio::buffer(r.body));
}

// The handler's answer, awaited for at most `seconds` (503 after that).
asio::awaitable<HttpResponse> answer_of(const HttpHandler& handler, const HttpRequest& req, double seconds) {
  auto ex = co_await asio::this_coro::executor;
  auto answer = std::make_shared<std::optional<HttpResponse>>();
  auto ready = std::make_shared<asio::steady_timer>(ex);
  ready->expires_after(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  handler(req, [answer, ready](HttpResponse r) {
    if (answer->has_value()) return;  // answered once
    *answer = std::move(r);
    ready->cancel();
  });
  if (!answer->has_value()) {
    asio::error_code wait_ec;
    co_await ready->async_wait(asio::redirect_error(asio::use_awaitable, wait_ec));
  }
  if (answer->has_value()) co_return std::move(**answer);
  co_return error_response(503, "no answer in time");
}

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return &v;
  return nullptr;
}

std::string http_response_bytes(const HttpResponse& r, bool keep_alive, bool head) {
  http::response<http::empty_body> m{static_cast<http::status>(r.status), 11};
  m.set(http::field::server, "hq");
  m.set(http::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) m.set(k, v);
  m.keep_alive(keep_alive);
  m.content_length(r.body.size());
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(m.reason()) + "\r\n";
  for (const auto& f : m) out += std::string(f.name_string()) + ": " + std::string(f.value()) + "\r\n";
  out += "\r\n";
  if (!head) out += r.body;  // HEAD: the headers GET would have, no body
  return out;
}

asio::awaitable<void> serve_http(std::unique_ptr<ByteStream> stream, HttpHandler handler, HttpLimits limits) {
  auto ex = co_await asio::this_coro::executor;
  std::shared_ptr<ByteStream> conn(std::move(stream));
  auto watchdog = std::make_shared<Watchdog>(ex, conn);
  std::string buf;
  try {
    watchdog->arm(limits.request_seconds);  // the TLS handshake too
    co_await conn->start();
    for (int served = 0; served < limits.max_requests; ++served) {
      Parser parser;
      parser.header_limit(static_cast<uint32_t>(limits.header_bytes));
      parser.body_limit(limits.body_bytes);
      // Idle between kept-alive requests; from a request's first byte, request_seconds.
      watchdog->arm(served == 0 ? limits.request_seconds : limits.idle_seconds);
      boost::beast::error_code ec;
      bool got = co_await read_request(*conn, buf, parser, ec, [&] { watchdog->arm(limits.request_seconds); });
      watchdog->disarm();
      if (!got && !ec) break;  // closed between requests
      if (!got) {
        if (watchdog->fired()) break;
        watchdog->arm(limits.write_seconds);
        co_await write_response(*conn, error_response(status_of(ec), "bad request: " + ec.message()), false, false);
        break;
      }
      HttpRequest req = request_of(parser.get(), conn->peer());
      bool keep_alive = parser.get().keep_alive() && served + 1 < limits.max_requests;
      HttpResponse res = co_await answer_of(handler, req, limits.answer_seconds);
      watchdog->arm(limits.write_seconds);  // a client that does not read is cut off
      co_await write_response(*conn, res, keep_alive, req.method == "HEAD");
      watchdog->disarm();
      if (!keep_alive) break;
    }
  } catch (const std::exception&) {
    // The peer went away or the watchdog closed it: nothing more to say to it.
  }
  watchdog->disarm();
  conn->close();
}

}  // namespace hq::net
