// A job's spool directory, and ended ones kept for the next job (see job_spool.hpp).
#include "cmd/agent/job_spool.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>
#include <string_view>
#include <vector>

namespace hq::cmd {
namespace {

namespace fs = std::filesystem;

// Kept directories per spool: enough for a node's burst of short jobs, few enough that a
// spool never holds many empty ones.
constexpr size_t kMaxKept = 64;
constexpr const char* kKeptPrefix = ".kept-";
// The files of a run a kept directory carries, each as a stale `.new`: the agent's own,
// and the script (its user's, reused only for a job of the same user).
constexpr const char* kReused[] = {"pids", "exit", "ended", "script"};

struct KeptDirs {
  std::mutex mu;
  std::map<std::string, std::vector<std::string>> names;  // spool dir -> kept names in it
  uint64_t next = 0;
};

KeptDirs& kept() {
  static KeptDirs k;
  return k;
}

bool stale_name(std::string_view name) { return name.size() > 4 && name.substr(name.size() - 4) == ".new"; }

// A run's file a kept directory carries (as itself or already as its stale `.new`).
bool reused(std::string_view name) {
  if (stale_name(name)) name.remove_suffix(4);
  for (const char* r : kReused)
    if (name == r) return true;
  return false;
}

// Everything in `dir` but `keep` and the agent's reusable files goes; those become stale
// `.new` files. False when something could not be removed.
bool strip_run(const std::string& dir, const std::string& keep) {
  std::error_code ec;
  bool ok = true;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name == keep) continue;
    if (!reused(name) || entry.is_symlink() || !entry.is_regular_file()) {
      std::error_code rm;
      fs::remove_all(entry.path(), rm);
      ok = ok && !rm;
    } else if (!stale_name(name)) {
      std::string from = dir + "/" + name, to = from + ".new";
      ok = ok && ::rename(from.c_str(), to.c_str()) == 0;
    }
  }
  return ok && !ec;
}

bool keep_dir(const std::string& spool_dir, const std::string& dir) {
  std::lock_guard<std::mutex> lock(kept().mu);
  auto& names = kept().names[spool_dir];
  if (names.size() >= kMaxKept) return false;
  std::string name = kKeptPrefix + std::to_string(kept().next++);
  if (::rename(dir.c_str(), (spool_dir + "/" + name).c_str()) != 0) return false;
  names.push_back(std::move(name));
  return true;
}

std::string take_kept(const std::string& spool_dir) {
  std::lock_guard<std::mutex> lock(kept().mu);
  auto it = kept().names.find(spool_dir);
  if (it == kept().names.end() || it->second.empty()) return "";
  std::string name = std::move(it->second.back());
  it->second.pop_back();
  return name;
}

}  // namespace

std::string job_dir(const std::string& spool_dir, uint64_t job_id) { return spool_dir + "/job" + std::to_string(job_id); }
std::string exit_file(const std::string& spool_dir, uint64_t job_id) { return job_dir(spool_dir, job_id) + "/exit"; }
std::string pids_file(const std::string& spool_dir, uint64_t job_id) { return job_dir(spool_dir, job_id) + "/pids"; }
std::string lease_file(const std::string& spool_dir) { return spool_dir + "/controller-lease"; }
std::string fenced_file(const std::string& spool_dir, uint64_t job_id) { return job_dir(spool_dir, job_id) + "/fenced"; }
std::string ended_file(const std::string& spool_dir, uint64_t job_id) { return job_dir(spool_dir, job_id) + "/ended"; }

Status make_job_dir(const std::string& spool_dir, uint64_t job_id) {
  std::string dir = job_dir(spool_dir, job_id);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::ok();  // a requeued run's, with its end kept
    return io_error("spool entry " + dir + " is not a directory");
  }
  for (std::string name = take_kept(spool_dir); !name.empty(); name = take_kept(spool_dir)) {
    std::string from = spool_dir + "/" + name;
    if (::rename(from.c_str(), dir.c_str()) == 0) return Status::ok();
    std::error_code ignored;
    fs::remove_all(from, ignored);
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::error_code ec;
    fs::create_directories(dir, ec);  // the spool itself may be missing
    if (ec) return io_error("cannot create spool dir " + dir + ": " + ec.message());
  }
  return Status::ok();
}

int open_script_file(const std::string& dir, uid_t uid) {
  std::string path = dir + "/script", stale = path + ".new";
  struct stat st {};
  if (::lstat(stale.c_str(), &st) == 0) {
    // Another user may still hold the old file open: it is theirs, so it is not reused.
    bool same_owner = S_ISREG(st.st_mode) && st.st_uid == uid && st.st_nlink == 1;
    if (same_owner && ::rename(stale.c_str(), path.c_str()) == 0) {
      // Never waiting on the user: a lease they hold on it, or its being run, would block
      // or fail the open; a new file is made instead.
      int fd = ::open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd >= 0 && ::fchmod(fd, 0700) == 0) return fd;
      if (fd >= 0) ::close(fd);
      ::unlink(path.c_str());
    } else {
      ::unlink(stale.c_str());
    }
  }
  ::unlink(path.c_str());  // a script left by an earlier run of the job is never written through
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
}

bool write_whole_file(int fd, const char* data, size_t size) {
  for (size_t done = 0; done < size;) {
    ssize_t n = ::pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  return st.st_size <= static_cast<off_t>(size) || ::ftruncate(fd, static_cast<off_t>(size)) == 0;
}

Status replace_spool_file(const std::string& path, const std::string& text, mode_t mode) {
  std::string tmp = path + ".new";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return io_error("cannot write " + tmp + ": " + std::strerror(errno));
  bool ok = write_whole_file(fd, text.data(), text.size());
  if (::close(fd) != 0) ok = false;
  if (!ok) return io_error("short write to " + tmp);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return io_error("cannot rename " + tmp + ": " + std::strerror(errno));
  return Status::ok();
}

void cleanup_spool(const std::string& spool_dir, uint64_t job_id) {
  std::string dir = job_dir(spool_dir, job_id);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return (void)fs::remove_all(dir, ec);
  if (strip_run(dir, "") && keep_dir(spool_dir, dir)) return;
  fs::remove_all(dir, ec);
}

void clear_run(const std::string& spool_dir, uint64_t job_id) {
  std::string dir = job_dir(spool_dir, job_id);
  if (!strip_run(dir, "ended")) {  // what could not be renamed goes the ordinary way
    std::error_code ec;
    for (const char* name : kReused)
      if (std::string(name) != "ended") fs::remove(dir + "/" + name, ec);
  }
}

namespace {

// The number in a kept directory's name, or -1.
int64_t kept_number(std::string_view name) {
  if (name.rfind(kKeptPrefix, 0) != 0) return -1;
  name.remove_prefix(std::strlen(kKeptPrefix));
  int64_t n = -1;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  return ec == std::errc() && end == name.data() + name.size() && n >= 0 ? n : -1;
}

// A new kept directory with the agent's stale files in it (the script comes with a job).
bool make_kept_dir(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0) return false;
  for (const char* name : {"pids.new", "exit.new", "ended.new"}) {
    int fd = ::open((dir + "/" + name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      std::error_code ec;
      fs::remove_all(dir, ec);
      return false;
    }
    ::close(fd);
  }
  return true;
}

}  // namespace

void prepare_kept_dirs(const std::string& spool_dir, size_t want) {
  want = std::min(want, kMaxKept);
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(spool_dir, ec))
    if (std::string name = entry.path().filename().string(); name.rfind(kKeptPrefix, 0) == 0) found.push_back(name);
  std::lock_guard<std::mutex> lock(kept().mu);
  auto& names = kept().names[spool_dir];
  names.clear();
  for (const auto& name : found) {
    std::string dir = spool_dir + "/" + name;
    int64_t number = kept_number(name);
    std::error_code st;
    bool usable = number >= 0 && names.size() < kMaxKept && fs::is_directory(fs::symlink_status(dir, st)) && strip_run(dir, "");
    if (!usable) {
      fs::remove_all(dir, st);
      continue;
    }
    names.push_back(name);
    kept().next = std::max(kept().next, static_cast<uint64_t>(number) + 1);
  }
  while (names.size() < want) {
    std::string name = kKeptPrefix + std::to_string(kept().next++);
    if (!make_kept_dir(spool_dir + "/" + name)) break;  // a spool that cannot take more: jobs make their own
    names.push_back(std::move(name));
  }
}

void drop_kept_dirs(const std::string& spool_dir) {
  {
    std::lock_guard<std::mutex> lock(kept().mu);
    kept().names.erase(spool_dir);
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(spool_dir, ec))
    if (entry.path().filename().string().rfind(kKeptPrefix, 0) == 0) {
      std::error_code rm;
      fs::remove_all(entry.path(), rm);
    }
}

size_t kept_dir_count(const std::string& spool_dir) {
  std::lock_guard<std::mutex> lock(kept().mu);
  auto it = kept().names.find(spool_dir);
  return it == kept().names.end() ? 0 : it->second.size();
}

}  // namespace hq::cmd
