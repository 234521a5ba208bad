// The web dashboard's files (web/: index.html, app.js, app.css), compiled into the binary
// by cmake/embed_bytes.cmake and served under /ui/ without a token (they hold no data; the
// page asks the REST API for it with the user's token). Pure lookup; thread-safe.
#pragma once
#include "net/http_server.hpp"

namespace hq::cmd {

// The answer to GET /ui/... (and / and /ui, which lead to /ui/): a file of the table, by
// exact name; 404 for any other path, 405 for a method other than GET or HEAD.
net::HttpResponse web_ui_response(const net::HttpRequest& req);

}  // namespace hq::cmd
