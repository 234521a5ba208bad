// A temporary directory removed at scope exit, for component and end-to-end tests.
// Tests write only under the build directory: CTest sets HQ_TEST_TMPDIR (<build>/t, see
// tests/CMakeLists.txt); a test binary run by hand uses t/ next to itself, which is the
// same place. Never /tmp.
#pragma once
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace hq::test {

inline std::string test_tmp_root() {
  if (const char* env = std::getenv("HQ_TEST_TMPDIR"); env && *env) return env;
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "t").string();
}

class TempDir {
 public:
  // A Unix socket path holds 107 bytes; the longest one a test makes in its dir is an
  // agent's token service (join_test.cpp). A longer root fails here, by name, rather than
  // as a daemon that cannot bind.
  static constexpr size_t kMaxPath = 107 - (sizeof("/bare1/run/auth.sock") - 1);

  TempDir() {
    std::string root = test_tmp_root();
    std::string tmpl = root + "/XXXXXX";
    if (tmpl.size() > kMaxPath)
      throw std::runtime_error("temp dirs in " + root + " are too long for the Unix sockets tests make in them (at most " +
                               std::to_string(kMaxPath) + " bytes): set HQ_TEST_TMPDIR to a shorter directory");
    std::error_code ec;
    std::filesystem::create_directories(root, ec);
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot make a temp dir in " + root + ": " + std::strerror(errno));
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace hq::test
