// write_file_atomic and create_new_file (cmd/paths): a failed write (a file size limit,
// a full filesystem, a missing directory) keeps the old file and leaves no temp file.
#include <doctest/doctest.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../skip.hpp"
#include "../temp_dir.hpp"
#include "cmd/paths.hpp"
#include "tests/fixture_file.hpp"

using namespace hq;
using hq::cmd::create_new_file;
using hq::cmd::write_file_atomic;

namespace {

// While alive, files this process writes may not grow past `bytes` (writes past it fail
// with EFBIG instead of raising SIGXFSZ).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lower = old_;
    lower.rlim_cur = bytes;
    ok_ = setrlimit(RLIMIT_FSIZE, &lower) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
  bool ok_ = false;
};

// A 64 KiB tmpfs mounted on `dir` (root only), unmounted at scope exit.
class TinyTmpfs {
 public:
  explicit TinyTmpfs(std::string dir) : dir_(std::move(dir)) {
    mounted_ = geteuid() == 0 && mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") == 0;
    why_not_ = mounted_ ? "" : geteuid() != 0 ? "not root" : std::string("mount failed: ") + std::strerror(errno);
  }
  ~TinyTmpfs() {
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }

 private:
  std::string dir_;
  bool mounted_ = false;
  std::string why_not_;
};

bool exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace

TEST_CASE("write_file_atomic: replaces the file whole, with its mode, and leaves no temp file") {
  test::TempDir dir;
  std::string path = dir.path() + "/controller.addr";
  REQUIRE(write_file_atomic(path, "old\n", 0644).is_ok());
  REQUIRE(write_file_atomic(path, "127.0.0.1:6817\n", 0600).is_ok());
  CHECK(hq::test::slurp_file(path) == "127.0.0.1:6817\n");
  struct stat st {};
  REQUIRE(stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CHECK_FALSE(exists(path + ".new"));
}

TEST_CASE("write_file_atomic: a missing directory is an error naming the file") {
  test::TempDir dir;
  Status s = write_file_atomic(dir.path() + "/missing/controller.addr", "x", 0644);
  REQUIRE_FALSE(s.is_ok());
  CHECK_MESSAGE(s.message().find(dir.path() + "/missing/controller.addr.new") != std::string::npos, s.message());
}

TEST_CASE("write_file_atomic: a write that fails part-way keeps the old file") {
  test::TempDir dir;
  std::string path = dir.path() + "/controller.addr";
  REQUIRE(write_file_atomic(path, "old\n", 0644).is_ok());
  Status s;
  {
    FileSizeLimit limit(16);
    REQUIRE(limit.ok());
    s = write_file_atomic(path, std::string(4096, 'n'), 0644);
  }
  REQUIRE_FALSE(s.is_ok());
  CHECK_MESSAGE(s.message().find("cannot write " + path + ".new") != std::string::npos, s.message());
  CHECK(hq::test::slurp_file(path) == "old\n");
  CHECK_FALSE(exists(path + ".new"));
}

TEST_CASE("write_file_atomic: a full filesystem keeps the old file") {
  test::TempDir dir;
  std::string mnt = dir.path() + "/tiny";
  REQUIRE(std::filesystem::create_directory(mnt));
  TinyTmpfs fs(mnt);
  if (!fs.mounted())
    HQ_SKIP("no tiny tmpfs to fill (" + fs.why_not() + "); the file size limit test covers the failing write");
  std::string path = mnt + "/controller.addr";
  REQUIRE(write_file_atomic(path, "old\n", 0644).is_ok());
  Status filler = create_new_file(mnt + "/filler", std::string(60 * 1024, 'f'), 0644);
  INFO(filler.message());
  Status s = write_file_atomic(path, std::string(32 * 1024, 'n'), 0644);
  REQUIRE_FALSE(s.is_ok());
  CHECK_MESSAGE(s.message().find("No space left on device") != std::string::npos, s.message());
  CHECK(hq::test::slurp_file(path) == "old\n");
  CHECK_FALSE(exists(path + ".new"));
}

TEST_CASE("create_new_file: never overwrites, and a failed write leaves no half file") {
  test::TempDir dir;
  std::string path = dir.path() + "/secret";
  REQUIRE(create_new_file(path, "1 abc\n", 0600).is_ok());
  Status again = create_new_file(path, "2 def\n", 0600);
  CHECK_FALSE(again.is_ok());
  CHECK(hq::test::slurp_file(path) == "1 abc\n");
  Status s;
  {
    FileSizeLimit limit(16);
    REQUIRE(limit.ok());
    s = create_new_file(dir.path() + "/ca.key", std::string(4096, 'k'), 0600);
  }
  CHECK_FALSE(s.is_ok());
  CHECK_FALSE(exists(dir.path() + "/ca.key"));
}
