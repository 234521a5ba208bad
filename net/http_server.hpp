// HTTP/1.1 on a ByteStream (TLS or plain TCP): requests parsed by Boost.Beast's parser (the
// only file that includes Beast), one after another on a kept-alive connection, each
// answered by a handler that may reply later (after a durable commit). Bad input never
// reaches the handler: malformed requests get 400, a body over the limit 413, headers over
// the limit 431; each closes the connection, as does a client too slow to send its request.
// Runs on the stream's executor (the controller's loop thread); not thread-safe.
#pragma once
#include <asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/stream.hpp"

namespace hq::net {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: "/slurm/v0.0.43/jobs?x=1"
  std::string path;    // the target up to '?'
  std::string query;   // after '?' ("" none)
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  std::string peer;
  // The first header of that (lower-case) name, or nullptr.
  const std::string* header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // more (Location, Cache-Control, ...)
};

using HttpRespond = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(const HttpRequest&, HttpRespond)>;

struct HttpLimits {
  size_t header_bytes = 16 * 1024;
  size_t body_bytes = 1 << 20;
  double request_seconds = 10;  // the TLS handshake; a request from its first byte to its end
  double idle_seconds = 60;     // waiting for the next request on a kept-alive connection
  double answer_seconds = 60;   // the handler's answer (503 after)
  double write_seconds = 30;    // writing an answer (a client that does not read is cut off)
  int max_requests = 10000;     // per connection
};

// Serves requests on `stream` until the peer closes, an error, or a limit.
asio::awaitable<void> serve_http(std::unique_ptr<ByteStream> stream, HttpHandler handler, HttpLimits limits = {});

// The response as bytes on the wire (status line, headers with Content-Length, body; no body
// for a HEAD request's).
std::string http_response_bytes(const HttpResponse& r, bool keep_alive, bool head = false);

}  // namespace hq::net
