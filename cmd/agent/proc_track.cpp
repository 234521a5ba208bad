#include "cmd/agent/proc_track.hpp"

#include <cctype>
#include <chrono>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace hq::cmd {
namespace {

// Whether /proc/<pid>/environ holds exactly `entry` ("HQ_JOB_ID=12"); at most 256 KiB read.
bool environ_has(const std::string& pid, const std::string& entry) {
  int fd = ::open(("/proc/" + pid + "/environ").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string env;
  char buf[16384];
  ssize_t n;
  while (env.size() < (256u << 10) && (n = ::read(fd, buf, sizeof buf)) > 0) env.append(buf, static_cast<size_t>(n));
  ::close(fd);
  for (size_t pos = 0; pos < env.size();) {
    size_t end = env.find('\0', pos);
    if (end == std::string::npos) end = env.size();
    if (env.compare(pos, end - pos, entry) == 0) return true;
    pos = end + 1;
  }
  return false;
}

std::vector<pid_t> job_processes(uint64_t job_id, uid_t uid) {
  std::vector<pid_t> out;
  std::string entry = "HQ_JOB_ID=" + std::to_string(job_id);
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (dirent* e = ::readdir(proc)) {
    std::string name = e->d_name;
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    struct stat st {};
    if (::stat(("/proc/" + name).c_str(), &st) != 0 || st.st_uid != uid) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid != ::getpid() && environ_has(name, entry)) out.push_back(pid);
  }
  ::closedir(proc);
  return out;
}

}  // namespace

int kill_job_processes(uint64_t job_id, uid_t uid, int wait_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  int found = 0;
  for (bool first = true;; first = false) {
    std::vector<pid_t> left = job_processes(job_id, uid);
    if (first) found = static_cast<int>(left.size());
    if (left.empty() || std::chrono::steady_clock::now() > deadline) return found;
    for (pid_t pid : left) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace hq::cmd
