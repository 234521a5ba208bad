#include "cmd/controller/web_ui.hpp"

#include <cstddef>
#include <string_view>

namespace hq {
// Generated from web/ (CMakeLists.txt, cmake/embed_bytes.cmake).
extern const unsigned char kWeb_index_html[], kWeb_app_js[], kWeb_app_css[];
extern const size_t kWeb_index_html_size, kWeb_app_js_size, kWeb_app_css_size;
}  // namespace hq

namespace hq::cmd {
namespace {

struct Asset {
  std::string_view path, content_type;
  const unsigned char* bytes;
  const size_t* size;
};

const Asset kAssets[] = {
    {"/ui/", "text/html; charset=utf-8", kWeb_index_html, &kWeb_index_html_size},
    {"/ui/app.js", "text/javascript; charset=utf-8", kWeb_app_js, &kWeb_app_js_size},
    {"/ui/app.css", "text/css; charset=utf-8", kWeb_app_css, &kWeb_app_css_size},
};

net::HttpResponse plain(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

}  // namespace

net::HttpResponse web_ui_response(const net::HttpRequest& req) {
  if (req.method != "GET" && req.method != "HEAD") return plain(405, "Method not allowed: the dashboard's files take GET\n");
  if (req.path == "/" || req.path == "/ui") {
    net::HttpResponse r = plain(302, "");
    r.headers.emplace_back("Location", "/ui/");
    return r;
  }
  for (const Asset& a : kAssets) {
    if (req.path != a.path) continue;
    net::HttpResponse r;
    r.content_type = std::string(a.content_type);
    r.body.assign(reinterpret_cast<const char*>(a.bytes), *a.size);
    // The page runs only its own script, talks only to this server, and is framed by no one.
    r.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    r.headers.emplace_back("X-Content-Type-Options", "nosniff");
    r.headers.emplace_back("Referrer-Policy", "no-referrer");
    r.headers.emplace_back("Cache-Control", "no-cache");
    return r;
  }
  return plain(404, "Not found: " + req.path + "\n");
}

}  // namespace hq::cmd
