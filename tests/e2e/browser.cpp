// Headless Chromium over the DevTools Protocol (see browser.hpp).
#include "browser.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <mbedtls/base64.h>

#include <fstream>
#include <vector>

#include "cluster_fixture.hpp"

namespace hq::test {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
using boost::asio::ip::tcp;
using google::protobuf::Struct;
using google::protobuf::Value;

bool parse(const std::string& json, Value& out) { return google::protobuf::util::JsonStringToMessage(json, &out).ok(); }

std::string to_json(const google::protobuf::Message& m) {
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(m, &out).ok()) return "";
  return out;
}

const Value* member(const Value& v, const std::string& key) {
  if (v.kind_case() != Value::kStructValue) return nullptr;
  auto it = v.struct_value().fields().find(key);
  return it == v.struct_value().fields().end() ? nullptr : &it->second;
}

}  // namespace

struct Browser::Impl {
  boost::asio::io_context io;
  websocket::stream<tcp::socket> ws{io};
  int next_id = 0;
};

std::string why_no_browser() {
  if (sh("command -v chromium").rc != 0) return "no chromium on this machine (Debian: apt install chromium)";
  return "";
}

Browser::Browser(const std::string& dir) {
  if (why_ = why_no_browser(); !why_.empty()) return;
  std::string profile = dir + "/chromium-profile", log = dir + "/chromium.log";
  std::string data_dir = "--user-data-dir=" + profile;  // made before the fork: the child only calls the system
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);                    // Chromium's helpers too end with the group
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // and with the test, should it crash
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
    execlp("chromium", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--no-default-browser-check", "--ignore-certificate-errors", "--window-size=1280,900",
           "--remote-debugging-port=0", "--remote-allow-origins=*", data_dir.c_str(), "about:blank", nullptr);
    _exit(127);
  }
  if (pid_ < 0) {
    why_ = "cannot fork chromium";
    return;
  }
  std::string port_file = profile + "/DevToolsActivePort", port;
  if (!wait_until([&] { std::istringstream(slurp(port_file)) >> port; return !port.empty(); }, 30))
    {
    why_ = "chromium did not start (" + log + ")";
    return;
  }
  Value targets;
  std::string ws_url;
  wait_until([&] {
    if (!parse(sh("curl -s --max-time 5 http://127.0.0.1:" + port + "/json/list").out, targets)) return false;
    for (const Value& t : targets.list_value().values()) {
      const Value* type = member(t, "type");
      const Value* url = member(t, "webSocketDebuggerUrl");
      if (type && url && type->string_value() == "page") ws_url = url->string_value();
    }
    return !ws_url.empty();
  }, 15);
  if (ws_url.empty()) {
    why_ = "chromium shows no page to drive";
    return;
  }
  auto impl = std::make_unique<Impl>();
  try {
    impl->ws.next_layer().connect(tcp::endpoint(boost::asio::ip::address_v4::loopback(), static_cast<uint16_t>(std::stoi(port))));
    impl->ws.read_message_max(256 << 20);
    impl->ws.handshake("127.0.0.1:" + port, ws_url.substr(ws_url.find('/', 5)));
  } catch (const std::exception& e) {
    {
    why_ = std::string("cannot reach chromium's DevTools: ") + e.what();
    return;
  }
  }
  impl_ = std::move(impl);
}

Browser::~Browser() {
  if (impl_) {
    beast::error_code ec;
    impl_->ws.next_layer().close(ec);
  }
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string Browser::call(const std::string& method, const std::string& params_json) {
  if (!impl_) return "";
  int id = ++impl_->next_id;
  std::string msg = "{\"id\":" + std::to_string(id) + ",\"method\":\"" + method + "\",\"params\":" + params_json + "}";
  try {
    impl_->ws.text(true);
    impl_->ws.write(boost::asio::buffer(msg));
    for (;;) {  // events come in between; the answer carries our id
      std::string text;
      if (!read_within(text, 30)) return "";
      Value v;
      if (!parse(text, v)) continue;
      const Value* got = member(v, "id");
      if (got && static_cast<int>(got->number_value()) == id) return text;
    }
  } catch (const std::exception&) {
    return "";
  }
}

// One message, or false after `seconds` (the connection is then closed: a browser that
// stopped answering fails the test rather than hanging it).
bool Browser::read_within(std::string& text, double seconds) {
  beast::flat_buffer buf;
  bool done = false;
  beast::error_code error;
  impl_->ws.async_read(buf, [&](beast::error_code ec, size_t) {
    error = ec;
    done = true;
  });
  impl_->io.restart();
  impl_->io.run_for(std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)));
  if (!done) {
    beast::error_code ignored;
    impl_->ws.next_layer().close(ignored);
    impl_->io.restart();
    impl_->io.run_for(std::chrono::milliseconds(100));  // the cancelled read completes
    return false;
  }
  text = beast::buffers_to_string(buf.data());
  return !error;
}

bool Browser::navigate(const std::string& url) {
  Struct params;
  (*params.mutable_fields())["url"].set_string_value(url);
  Value reply;
  if (!parse(call("Page.navigate", to_json(params)), reply)) return false;
  const Value* result = member(reply, "result");
  return result && !member(*result, "errorText");
}

std::string Browser::eval(const std::string& js) {
  Struct params;
  (*params.mutable_fields())["expression"].set_string_value(js);
  (*params.mutable_fields())["returnByValue"].set_bool_value(true);
  (*params.mutable_fields())["awaitPromise"].set_bool_value(true);
  Value reply;
  if (!parse(call("Runtime.evaluate", to_json(params)), reply)) return "";
  const Value* result = member(reply, "result");
  if (!result || member(*result, "exceptionDetails")) return "";
  const Value* inner = member(*result, "result");
  const Value* value = inner ? member(*inner, "value") : nullptr;
  return value ? to_json(*value) : "";
}

bool Browser::wait_true(const std::string& js, double seconds) {
  return wait_until([&] { return eval(js) == "true"; }, seconds);
}

bool Browser::screenshot(const std::string& png_path) {
  Value reply;
  if (!parse(call("Page.captureScreenshot", "{\"format\":\"png\"}"), reply)) return false;
  const Value* result = member(reply, "result");
  const Value* data = result ? member(*result, "data") : nullptr;
  if (!data) return false;
  const std::string& b64 = data->string_value();
  std::vector<unsigned char> png(b64.size());
  size_t n = 0;
  if (mbedtls_base64_decode(png.data(), png.size(), &n, reinterpret_cast<const unsigned char*>(b64.data()), b64.size()) != 0)
    return false;
  std::ofstream out(png_path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(n));
  return static_cast<bool>(out);
}

}  // namespace hq::test
