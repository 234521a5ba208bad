// A cgroup2 hierarchy for tests that need the real kernel: /sys/fs/cgroup where the host
// mounts cgroup2 there, else a private mount of it in this test process's own mount
// namespace (so the mount point is seen nowhere else; the hierarchy behind it is the
// host's one cgroup2 tree, with or without controllers). Needs root. Groups made below
// it are the test's to remove.
#pragma once
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <linux/magic.h>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace hq::test {

class Cgroup2Mount {
 public:
  // `scratch`: an empty directory the test owns, for the mount point.
  explicit Cgroup2Mount(const std::string& scratch) {
    struct statfs fs {};
    if (::geteuid() != 0) {
      why_not_ = "needs root: makes cgroups";
      return;
    }
    if (::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
      path_ = "/sys/fs/cgroup";
      return;
    }
    std::string mnt = scratch + "/cgroup2";
    std::error_code ec;
    std::filesystem::create_directories(mnt, ec);
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      why_not_ = std::string("no private mount namespace here: ") + std::strerror(errno);
      return;
    }
    if (::mount("cgroup2", mnt.c_str(), "cgroup2", 0, nullptr) != 0) {
      why_not_ = std::string("cannot mount cgroup2: ") + std::strerror(errno);
      return;
    }
    path_ = mnt;
    mounted_ = true;
  }
  ~Cgroup2Mount() {
    if (mounted_) ::umount2(path_.c_str(), MNT_DETACH);
  }
  Cgroup2Mount(const Cgroup2Mount&) = delete;
  Cgroup2Mount& operator=(const Cgroup2Mount&) = delete;

  const std::string& path() const { return path_; }  // empty: none (why_not says why)
  const std::string& why_not() const { return why_not_; }

 private:
  std::string path_, why_not_;
  bool mounted_ = false;
};

}  // namespace hq::test
