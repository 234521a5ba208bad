// The blocking client link to a controller's local socket (net/local_link), through
// RpcClient::connect_local, against a scripted server on a real Unix socket: the pipelined
// Hello and request in one write, the handshake's answer read first, the errors a one-shot
// client meets (nothing listening, a refusal, a hang-up, silence, a signal, a huge frame),
// and a large request and a large reply crossing without either side stalling.
#include <doctest/doctest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "../temp_dir.hpp"
#include "net/client.hpp"
#include "net/frame.hpp"

namespace {

using hq::Code;
using hq::pb::Envelope;

// A listening socket and one thread that accepts one client and runs `script` on it.
class ScriptedServer {
 public:
  using Script = std::function<void(int fd)>;
  ScriptedServer(const std::string& path, Script script) : path_(path) {
    listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, sizeof addr.sun_path - 1);
    REQUIRE(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(listener_, 4) == 0);
    thread_ = std::thread([this, script] {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 10000) != 1) return;
      int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      script(fd);
      close(fd);
    });
  }
  ~ScriptedServer() {
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }

 private:
  std::string path_;
  int listener_ = -1;
  std::thread thread_;
};

// Frames from `fd`, blocking; "" at its end.
class FrameReader {
 public:
  explicit FrameReader(int fd) : fd_(fd) {}
  std::string next() {
    char chunk[65536];
    while (true) {
      auto frame = decoder_.next();
      if (!frame) return "";
      if (frame->has_value()) return **frame;
      ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return "";
      decoder_.feed(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  hq::net::FrameDecoder decoder_;
};

bool write_all(int fd, const std::string& bytes) {
  for (size_t at = 0; at < bytes.size();) {
    ssize_t n = send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

void send_envelope(int fd, const Envelope& e) { write_all(fd, hq::net::encode_frame(e.SerializeAsString())); }

Envelope hello_ack(const std::string& cluster) {
  Envelope ack;
  ack.mutable_hello_ack()->set_version(1);
  ack.mutable_hello_ack()->set_cluster(cluster);
  return ack;
}

Envelope refusal(uint64_t seq, const std::string& why) {
  Envelope e;
  e.set_seq(seq);
  e.mutable_error()->set_code(static_cast<int>(Code::kInvalid));
  e.mutable_error()->set_message(why);
  return e;
}

// A submission whose script is `script`, sent over a new pipelined link to `path`.
hq::Result<Envelope> submit_script(const std::string& path, const std::string& script) {
  auto client = hq::net::RpcClient::connect_local(path, "client", 5, true);
  if (!client) return client.status();
  Envelope request;
  request.mutable_submit()->mutable_spec()->set_script(script);
  return (*client)->call(request, 20);
}

Envelope queue_reply(uint64_t seq) {
  Envelope reply;
  reply.set_seq(seq);
  reply.mutable_queue_reply();
  return reply;
}

Envelope queue_request() {
  Envelope q;
  q.mutable_queue();
  return q;
}

}  // namespace

TEST_CASE("local link: the Hello and the request are both sent before any answer - the handshake's answer is read before the reply") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  std::atomic<int> frames_in_first_read{0};
  std::string role;
  uint64_t seq = 0;
  ScriptedServer server(path, [&](int fd) {
    // Both frames are in the socket before anything is answered: one read takes both.
    pollfd p{fd, POLLIN, 0};
    poll(&p, 1, 5000);
    char chunk[65536];
    ssize_t n = recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return;
    hq::net::FrameDecoder decoder;
    decoder.feed(chunk, static_cast<size_t>(n));
    Envelope hello, request;
    for (Envelope* e : {&hello, &request}) {
      auto frame = decoder.next();
      if (!frame || !frame->has_value()) return;
      e->ParseFromString(**frame);
      ++frames_in_first_read;
    }
    role = hello.hello().role();
    seq = request.seq();
    send_envelope(fd, hello_ack("blue"));
    send_envelope(fd, queue_reply(request.seq()));
  });
  auto client = hq::net::RpcClient::connect_local(path, "client", 5, /*pipelined=*/true);
  REQUIRE(client.is_ok());
  auto reply = (*client)->call(queue_request(), 5);
  REQUIRE(reply.is_ok());
  CHECK(reply->has_queue_reply());
  CHECK(reply->seq() == seq);
  CHECK((*client)->cluster() == "blue");
  CHECK(frames_in_first_read == 2);
  CHECK(role == "client");
}

TEST_CASE("local link: without pipelining, connect waits for the HelloAck and takes the cluster's name from it") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  ScriptedServer server(path, [&](int fd) {
    FrameReader in(fd);
    Envelope hello;
    hello.ParseFromString(in.next());
    send_envelope(fd, hello_ack("green"));
    Envelope request;
    request.ParseFromString(in.next());
    send_envelope(fd, queue_reply(request.seq()));
  });
  auto client = hq::net::RpcClient::connect_local(path, "client", 5, /*pipelined=*/false);
  REQUIRE(client.is_ok());
  CHECK((*client)->cluster() == "green");
  CHECK((*client)->call(queue_request(), 5).is_ok());
}

TEST_CASE("local link: a refusal in place of the HelloAck is the call's error") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  ScriptedServer server(path, [&](int fd) {
    FrameReader(fd).next();
    Envelope refusal;
    refusal.mutable_error()->set_code(static_cast<int>(Code::kDenied));
    refusal.mutable_error()->set_message("nodes connect over TLS");
    send_envelope(fd, refusal);
  });
  auto client = hq::net::RpcClient::connect_local(path, "node", 5, /*pipelined=*/true);
  REQUIRE(client.is_ok());
  auto reply = (*client)->call(queue_request(), 5);
  REQUIRE(!reply.is_ok());
  CHECK(reply.status().code() == Code::kDenied);
  CHECK(reply.status().message() == "nodes connect over TLS");
}

TEST_CASE("local link: nothing listening, a hang-up, and a frame over the limit") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  auto none = hq::net::RpcClient::connect_local(path, "client", 1, true);
  REQUIRE(!none.is_ok());
  CHECK(none.status().code() == Code::kUnavailable);
  CHECK(none.status().message().find("cannot reach the controller's local socket " + path) != std::string::npos);

  {
    ScriptedServer server(path, [&](int fd) {
      FrameReader(fd).next();  // then closes without a word
    });
    auto client = hq::net::RpcClient::connect_local(path, "client", 5, true);
    REQUIRE(client.is_ok());
    auto reply = (*client)->call(queue_request(), 5);
    REQUIRE(!reply.is_ok());
    CHECK(reply.status().code() == Code::kUnavailable);  // what call_with_retry answers by asking again
    CHECK(reply.status().message().find("closed") != std::string::npos);
  }
  unlink(path.c_str());
  {
    ScriptedServer server(path, [&](int fd) {
      FrameReader(fd).next();
      write_all(fd, std::string("\x7f\xff\xff\xff", 4));  // 2 GiB announced
    });
    auto client = hq::net::RpcClient::connect_local(path, "client", 5, true);
    REQUIRE(client.is_ok());
    auto reply = (*client)->call(queue_request(), 5);
    REQUIRE(!reply.is_ok());
    CHECK(reply.status().code() == Code::kInvalid);
    CHECK(reply.status().message().find("exceeds the limit") != std::string::npos);
  }
}

TEST_CASE("local link: a silent peer ends the wait at the timeout, and an interruption ends it at once") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  auto silent = [](int fd) {  // reads what comes, answers nothing, until the client hangs up
    FrameReader in(fd);
    while (!in.next().empty()) {
    }
  };
  {
    ScriptedServer server(path, silent);
    auto client = hq::net::RpcClient::connect_local(path, "client", 5, true);
    REQUIRE(client.is_ok());
    auto t0 = std::chrono::steady_clock::now();
    auto reply = (*client)->call(queue_request(), 1);
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(!reply.is_ok());
    CHECK(reply.status().code() == Code::kUnavailable);
    CHECK(reply.status().message() == "timed out after 1 s");
    CHECK(took >= 0.99);
    CHECK(took < 5);
  }
  unlink(path.c_str());
  {
    ScriptedServer server(path, silent);
    auto client = hq::net::RpcClient::connect_local(path, "client", 5, true);
    REQUIRE(client.is_ok());
    (*client)->send(queue_request());
    int asked = 0;
    auto reply = (*client)->recv(3600, [&] { return ++asked >= 3; });
    REQUIRE(!reply.is_ok());
    CHECK(reply.status().code() == Code::kInternal);
    CHECK(reply.status().message() == "interrupted");
    CHECK(asked == 3);
  }
}

TEST_CASE("local link: a 6 MB request and a 6 MB reply cross: the client reads while it writes") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  const std::string big(6 << 20, 'x');
  size_t got_request = 0;
  {
    ScriptedServer server(path, [&](int fd) {
      FrameReader in(fd);
      in.next();  // the Hello
      // Answers first, in full, before it reads the request: a client that only wrote
      // would fill both directions' buffers and wait for ever.
      send_envelope(fd, hello_ack("big"));
      send_envelope(fd, refusal(1, big));
      Envelope request;
      request.ParseFromString(in.next());
      got_request = request.submit().spec().script().size();
    });
    auto reply = submit_script(path, big);
    REQUIRE(!reply.is_ok());
    CHECK(reply.status().code() == Code::kInvalid);
    CHECK(reply.status().message().size() == big.size());
  }
  CHECK(got_request == big.size());  // written whole before the reply was returned
}

TEST_CASE("local link: a listener whose backlog is full is waited for, up to the timeout") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(listener, 1) == 0);
  std::vector<int> queued;  // connections nobody accepts, until the backlog refuses one
  for (int i = 0; i < 64; ++i) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      CHECK(errno == EAGAIN);
      close(fd);
      break;
    }
    queued.push_back(fd);
  }
  REQUIRE(!queued.empty());
  auto t0 = std::chrono::steady_clock::now();
  auto full = hq::net::RpcClient::connect_local(path, "client", 0.3, true);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(!full.is_ok());
  CHECK(full.status().code() == Code::kUnavailable);
  CHECK(waited >= 0.25);
  CHECK(waited < 3);
  // Room made while it waits: it gets in.
  std::thread drain([&] {
    // Whether the connect below is already waiting or not, room is made and it gets in
    // (the waiting itself is the first half's check).
    pollfd p{listener, POLLIN, 0};
    for (size_t i = 0; i < queued.size() + 1 && poll(&p, 1, 5000) == 1; ++i) {  // bounded: never hangs
      int fd = accept(listener, nullptr, nullptr);
      if (fd < 0) break;
      close(fd);
    }
  });
  auto later = hq::net::RpcClient::connect_local(path, "client", 5, true);
  drain.join();
  CHECK(later.is_ok());
  for (int fd : queued) close(fd);
  close(listener);
}

TEST_CASE("local link: an answer sent before the peer hangs up on a request it did not read whole is still the answer") {
  hq::test::TempDir dir;
  std::string path = dir.path() + "/client.sock";
  const std::string big(6 << 20, 'y');
  {
    ScriptedServer server(path, [&](int fd) {
      FrameReader in(fd);
      in.next();  // the Hello; the 6 MB request behind it is never read
      send_envelope(fd, hello_ack("gone"));
      send_envelope(fd, refusal(1, "request too large"));
    });  // the server closes with the request unread: the client's write fails
    auto reply = submit_script(path, big);
    REQUIRE(!reply.is_ok());
    CHECK(reply.status().code() == Code::kInvalid);  // not kUnavailable, which a caller would resend
    CHECK(reply.status().message() == "request too large");
  }
}
