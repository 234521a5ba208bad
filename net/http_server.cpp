#include "net/http_server.hpp"

#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cctype>
#include <chrono>
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
// request began, with `ec` set for a bad or cut-off request.
asio::awaitable<bool> read_request(ByteStream& stream, std::string& buf, Parser& parser, boost::beast::error_code& ec) {
  char chunk[16 * 1024];
  bool started = !buf.empty();
  for (;;) {
    if (!buf.empty()) {
      size_t used = parser.put(boost::asio::buffer(buf.data(), buf.size()), ec);
      buf.erase(0, used);
      if (ec == http::error::need_more) ec = {};
      else if (ec) co_return false;
      if (parser.is_done()) co_return true;
      if (used > 0 && !buf.empty()) continue;
    }
    size_t n = co_await stream.read_some(asio::buffer(chunk, sizeof chunk));
    if (n == 0) {  // the peer closed
      if (!started && buf.empty()) co_return false;
      ec = http::error::partial_message;
      co_return false;
    }
    started = true;
    buf.append(chunk, n);
  }
}

asio::awaitable<void> write_response(ByteStream& stream, const HttpResponse& r, bool keep_alive) {
  std::string bytes = http_response_bytes(r, keep_alive);
  co_await stream.write_all(asio::buffer(bytes));
}

}  // namespace

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return &v;
  return nullptr;
}

std::string http_response_bytes(const HttpResponse& r, bool keep_alive) {
  http::response<http::string_body> m{static_cast<http::status>(r.status), 11};
  m.set(http::field::server, "hq");
  m.set(http::field::content_type, r.content_type);
  for (const auto& [k, v] : r.headers) m.set(k, v);
  m.keep_alive(keep_alive);
  m.body() = r.body;
  m.prepare_payload();
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(m.reason()) + "\r\n";
  for (const auto& f : m) out += std::string(f.name_string()) + ": " + std::string(f.value()) + "\r\n";
  out += "\r\n";
  out += m.body();
  return out;
}

asio::awaitable<void> serve_http(std::unique_ptr<ByteStream> stream, HttpHandler handler, HttpLimits limits) {
  auto ex = co_await asio::this_coro::executor;
  std::shared_ptr<ByteStream> conn(std::move(stream));
  // Closes the connection when a request takes too long to arrive (slow clients hold no
  // place for ever); the read then ends.
  asio::steady_timer watchdog(ex);
  bool timed_out = false;
  auto arm = [&](double seconds) {
    watchdog.expires_after(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
    watchdog.async_wait([conn, &timed_out](const asio::error_code& e) {
      if (e) return;
      timed_out = true;
      conn->close();
    });
  };
  std::string buf;
  try {
    co_await conn->start();
    for (int served = 0; served < limits.max_requests; ++served) {
      Parser parser;
      parser.header_limit(static_cast<uint32_t>(limits.header_bytes));
      parser.body_limit(limits.body_bytes);
      arm(served == 0 || !buf.empty() ? limits.request_seconds : limits.idle_seconds);
      boost::beast::error_code ec;
      bool got = co_await read_request(*conn, buf, parser, ec);
      watchdog.cancel();
      if (!got && !ec) break;  // closed between requests
      if (!got) {
        if (!timed_out) co_await write_response(*conn, error_response(status_of(ec), "bad request: " + ec.message()), false);
        break;
      }
      HttpRequest req = request_of(parser.get(), conn->peer());
      bool keep_alive = parser.get().keep_alive() && served + 1 < limits.max_requests;
      // The handler answers now or later; the connection waits for it.
      auto answer = std::make_shared<std::optional<HttpResponse>>();
      auto ready = std::make_shared<asio::steady_timer>(ex, asio::steady_timer::time_point::max());
      handler(req, [answer, ready](HttpResponse r) {
        if (answer->has_value()) return;  // answered once
        *answer = std::move(r);
        ready->cancel();
      });
      if (!answer->has_value()) {
        asio::error_code wait_ec;
        co_await ready->async_wait(asio::redirect_error(asio::use_awaitable, wait_ec));
      }
      if (!answer->has_value()) break;
      co_await write_response(*conn, **answer, keep_alive);
      if (!keep_alive) break;
    }
  } catch (const std::exception&) {
    // The peer went away or the watchdog closed it: nothing more to say to it.
  }
  watchdog.cancel();
  conn->close();
}

}  // namespace hq::net
