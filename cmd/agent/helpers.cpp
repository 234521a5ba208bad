#include "cmd/agent/helpers.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/paths.hpp"
#include "core/units.hpp"

namespace hq::cmd {
namespace {

// The first non-empty line of a program's output, at most 200 characters.
std::string first_line(const std::string& path) {
  std::string text = read_small_file(path);
  for (std::string_view line : split(text, '\n')) {
    line = trim(line);
    if (!line.empty()) return std::string(line.substr(0, 200));
  }
  return "";
}

std::string describe(int status, bool timed_out, const std::string& output) {
  std::string what = timed_out              ? "timed out"
                     : WIFEXITED(status)    ? "exit " + std::to_string(WEXITSTATUS(status))
                     : WIFSIGNALED(status)  ? "signal " + std::to_string(WTERMSIG(status))
                                            : "ended";
  return output.empty() ? what : what + ": " + output;
}

}  // namespace

void HelperRunner::run(const std::string& program, const std::vector<std::string>& env, int timeout_s,
                       std::function<void(HelperOutcome)> done) {
  std::string out_path = tmp_dir_ + "/helper-XXXXXX";
  int out = mkstemp(out_path.data());
  if (out < 0) return done({false, "cannot create an output file in " + tmp_dir_ + ": " + std::strerror(errno)});
  std::vector<std::string> env_s = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string prog = program;
  char* argv[] = {prog.data(), nullptr};
  pid_t pid = fork();
  if (pid < 0) {
    ::close(out);
    ::unlink(out_path.c_str());
    return done({false, std::string("fork: ") + std::strerror(errno)});
  }
  if (pid == 0) {
    setsid();
    int in = open("/dev/null", O_RDONLY);
    if (in >= 0) dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(argv[0], argv, envp.data());
    dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  ::close(out);
  Running& r = running_[pid];
  r.out_path = out_path;
  r.done = std::move(done);
  r.timer = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(timeout_s));
  r.timer->async_wait([this, pid](const asio::error_code& ec) {
    auto it = running_.find(pid);
    if (ec || it == running_.end()) return;
    it->second.timed_out = true;
    ::kill(-pid, SIGKILL);
  });
}

bool HelperRunner::reaped(pid_t pid, int status) {
  auto it = running_.find(pid);
  if (it == running_.end()) return false;
  Running r = std::move(it->second);
  running_.erase(it);
  r.timer->cancel();
  ::kill(-pid, SIGKILL);  // whatever it left in its session
  std::string output = first_line(r.out_path);
  ::unlink(r.out_path.c_str());
  bool ok = !r.timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  r.done({ok, describe(status, r.timed_out, output)});
  return true;
}

}  // namespace hq::cmd
