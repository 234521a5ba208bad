// print_file: a listing passed as a file is printed as print_text would print its text.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include "cmd/client/output.hpp"
#include "golden_cases.hpp"

namespace hq::cmd {
namespace {

TEST_CASE("print_file prints the file's first bytes, and refuses a file shorter than its answer said") {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i) + "\n";  // longer than one read
  int fd = ::memfd_create("listing", MFD_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
  auto all = test::capture_output([&] { return print_file(fd, text.size()).is_ok() ? 0 : 1; });
  CHECK(all.rc == 0);
  CHECK(all.out == text);
  auto part = test::capture_output([&] { return print_file(fd, 12).is_ok() ? 0 : 1; });  // and from the start again
  CHECK(part.out == text.substr(0, 12));
  CHECK(::lseek(fd, 0, SEEK_CUR) == 0);  // the file's own offset, shared with the controller, is not moved
  Status shorter = print_file(fd, text.size() + 1);
  CHECK(!shorter.is_ok());
  CHECK(shorter.message().find("not what its answer says") != std::string::npos);
  ::close(fd);
}

}  // namespace
}  // namespace hq::cmd
