// cmd/controller/output_tail: the last bytes of a file, read as its user in a detached
// process: the file's end (not the bytes after `most` from its end), its size, a short
// file whole, and one that is not the user's refused.
#include <doctest/doctest.h>

#include <asio/io_context.hpp>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

#include "cmd/controller/output_tail.hpp"
#include "../temp_dir.hpp"

using namespace hq;
using namespace hq::cmd;

namespace {

// Counting text, so that any slice shows where it came from.
std::string numbered_text(size_t bytes) {
  std::string out;
  for (size_t i = 0; out.size() < bytes; ++i) out += std::to_string(i) + "\n";
  out.resize(bytes);
  return out;
}

Result<TailResult> tail_of(const std::string& path, size_t most, uint32_t uid = ::geteuid()) {
  asio::io_context io;
  TailRequest req;
  req.path = path;
  req.uid = uid;
  req.gid = ::getegid();
  req.most = most;
  std::optional<Result<TailResult>> got;
  read_tail_as_user(io, req, [&](Result<TailResult> r) { got = std::move(r); });
  io.run_for(std::chrono::seconds(20));
  REQUIRE(got.has_value());
  return std::move(*got);
}

}  // namespace

TEST_CASE("output tail: the file's last bytes, however many are asked for") {
  test::TempDir dir;
  std::string path = dir.path() + "/out.txt";
  std::string text = numbered_text(200 * 1024);
  std::ofstream(path, std::ios::binary) << text;
  for (size_t most : {size_t{100}, size_t{16 * 1024}, size_t{64 * 1024}, size_t{100 * 1024}}) {
    auto r = tail_of(path, most);
    REQUIRE(r.is_ok());
    CHECK(r.value().size == static_cast<int64_t>(text.size()));
    size_t expect = std::min(most, size_t{64 * 1024});  // a reply holds at most 64 KiB
    CHECK(r.value().tail == text.substr(text.size() - expect));
  }
  std::ofstream(dir.path() + "/short.txt") << "hello\n";
  auto r = tail_of(dir.path() + "/short.txt", 1024);
  REQUIRE(r.is_ok());
  CHECK(r.value().tail == "hello\n");
  CHECK(!tail_of(path, 1024, ::geteuid() + 1).is_ok());  // not that user's file
}
