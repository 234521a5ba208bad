// A file passed with a frame over the controller's local socket (Connection's
// send_frame_passing_file, LocalLink's take_passed_file): the client gets its own
// descriptor of the file, after any frame queued before it, and the bytes arrive whole.
#include <doctest/doctest.h>

#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "net/connection.hpp"
#include "net/frame.hpp"
#include "net/local_link.hpp"
#include "net/unix_stream.hpp"
#include "../temp_dir.hpp"

namespace hq::net {
namespace {

std::string frame_of(const pb::Envelope& env) {
  std::string out;
  append_frame_header(out, static_cast<uint32_t>(env.ByteSizeLong()));
  out += env.SerializeAsString();
  return out;
}

pb::Envelope error_env(uint64_t seq, const std::string& message) {
  pb::Envelope env;
  env.set_seq(seq);
  env.mutable_error()->set_message(message);
  return env;
}

int memfd_holding(const std::string& text) {
  int fd = ::memfd_create("test", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
  return fd;
}

std::string read_all(int fd) {
  std::string out(1 << 16, '\0');
  ssize_t n = ::pread(fd, out.data(), out.size(), 0);
  REQUIRE(n >= 0);
  out.resize(static_cast<size_t>(n));
  return out;
}

// A controller's side of a local socket (a Connection) and a client's (a LocalLink).
struct Pair {
  test::TempDir dir;
  asio::io_context io;
  asio::local::stream_protocol::acceptor acceptor{io, asio::local::stream_protocol::endpoint(dir.path() + "/s.sock")};
  std::unique_ptr<LocalLink> link;
  std::shared_ptr<Connection> conn;
  Pair() {
    auto opened = LocalLink::open(dir.path() + "/s.sock", 5);
    REQUIRE(opened.is_ok());
    link = std::move(opened).value();
    asio::local::stream_protocol::socket socket(io);
    acceptor.accept(socket);
    conn = std::make_shared<Connection>(io.get_executor(), make_unix_stream(std::move(socket)));
  }
};

TEST_CASE("a file passed with a frame on a local socket reaches the client, behind what was queued first") {
  Pair pair;
  auto& io = pair.io;
  auto& link = pair.link;
  auto& conn = pair.conn;

  int file = memfd_holding("the listing\n");
  CHECK(conn->send_frame_passing_file(frame_of(error_env(7, "with the file")), file));
  ::close(file);  // the client holds its own descriptor now
  io.run();

  auto frame = link->recv_frame(5, {});
  REQUIRE(frame.is_ok());
  pb::Envelope got;
  REQUIRE(got.ParseFromString(*frame));
  CHECK(got.seq() == 7);
  int passed = link->take_passed_file();
  REQUIRE(passed >= 0);
  CHECK(read_all(passed) == "the listing\n");
  CHECK((::fcntl(passed, F_GETFD) & FD_CLOEXEC) != 0);
  ::close(passed);
  CHECK(link->take_passed_file() == -1);  // one file came
}

TEST_CASE("a connection sends no file while a write is under way, and then the caller sends bytes") {
  Pair pair;
  auto& io = pair.io;
  auto& link = pair.link;
  auto& conn = pair.conn;

  conn->send(error_env(1, "first"));  // its writer runs on the next io.run()
  int file = memfd_holding("x");
  CHECK(!conn->send_frame_passing_file(frame_of(error_env(2, "second")), file));
  ::close(file);
  conn->send(error_env(2, "second, as bytes"));
  io.run();
  for (uint64_t seq : {1, 2}) {
    auto frame = link->recv_frame(5, {});
    REQUIRE(frame.is_ok());
    pb::Envelope got;
    REQUIRE(got.ParseFromString(*frame));
    CHECK(got.seq() == seq);
  }
  CHECK(link->take_passed_file() == -1);
}

}  // namespace
}  // namespace hq::net
