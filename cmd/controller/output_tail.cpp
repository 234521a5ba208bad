#include "cmd/controller/output_tail.hpp"

#include <asio/posix/stream_descriptor.hpp>
#include <asio/read.hpp>
#include <asio/steady_timer.hpp>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace hq::cmd {
namespace {

// In the grandchild: become the user, check, read, write "S SIZE\n" and the bytes (or
// "E\n") to `out`. Only system calls: the controller's memory is a copy here.
[[noreturn]] void read_as_user(const TailRequest& req, const std::vector<gid_t>& groups, int out) {
  alarm(static_cast<unsigned>(req.timeout_s) + 1);
  auto fail = [out]() { (void)!write(out, "E\n", 2); _exit(1); };
  if (geteuid() == 0) {
    if (setgroups(groups.size(), groups.data()) != 0 || setgid(req.gid) != 0 || setuid(req.uid) != 0) fail();
  } else if (geteuid() != req.uid) {
    fail();  // only root may read as another user
  }
  int at = open(req.path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (at < 0 || fstat(at, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != req.uid) fail();
  char proc[64];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", at);
  int fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);  // this very file, with the user's rights
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) fail();
  // Mapped here, not static: 64 KiB of .bss would be mapped at every hq process's start.
  constexpr size_t kMost = 64 * 1024;
  void* buf = mmap(nullptr, kMost, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) fail();
  // The file's last bytes: at most `most`, and at most what the buffer holds.
  size_t want = std::min({kMost, req.most, static_cast<size_t>(st.st_size)});
  ssize_t n = pread(fd, buf, want, st.st_size - static_cast<off_t>(want));
  if (n < 0) fail();
  char head[48];
  int len = std::snprintf(head, sizeof head, "S %lld\n", static_cast<long long>(st.st_size));
  if (write(out, head, static_cast<size_t>(len)) != len || write(out, buf, static_cast<size_t>(n)) != n) _exit(1);
  _exit(0);
}

struct Pending {
  explicit Pending(asio::io_context& io, int fd) : pipe(io, fd), timer(io) {}
  asio::posix::stream_descriptor pipe;
  asio::steady_timer timer;
  std::string data;
  std::function<void(Result<TailResult>)> done;
  void finish(Result<TailResult> r) {
    if (!done) return;
    auto d = std::move(done);
    done = nullptr;
    asio::error_code ec;
    timer.cancel();
    pipe.close(ec);
    d(std::move(r));
  }
};

Status unreadable(const std::string& path) {
  return not_found("no output file of this job readable on the controller's host: " + path +
                   " (it may be on the job's node)");
}

}  // namespace

void read_tail_as_user(asio::io_context& io, const TailRequest& req, std::function<void(Result<TailResult>)> done) {
  std::vector<gid_t> groups(req.groups.begin(), req.groups.end());
  if (groups.empty()) groups.push_back(req.gid);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return done(internal("pipe failed"));
  pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return done(internal("fork failed"));
  }
  if (child == 0) {  // the grandchild reads; the child exits at once
    if (fork() == 0) {
      close(fds[0]);
      read_as_user(req, groups, fds[1]);
    }
    _exit(0);
  }
  close(fds[1]);
  waitpid(child, nullptr, 0);
  auto p = std::make_shared<Pending>(io, fds[0]);
  p->done = std::move(done);
  p->timer.expires_after(std::chrono::milliseconds(static_cast<int64_t>(req.timeout_s * 1000)));
  p->timer.async_wait([p, path = req.path](const asio::error_code& ec) {
    if (!ec) p->finish(unreadable(path));
  });
  p->data.reserve(req.most + 64);
  asio::async_read(p->pipe, asio::dynamic_buffer(p->data, req.most + 64),
                   [p, path = req.path](const asio::error_code&, size_t) {  // EOF: the reader is done
                     size_t nl = p->data.find('\n');
                     if (p->data.rfind("S ", 0) != 0 || nl == std::string::npos) return p->finish(unreadable(path));
                     TailResult out;
                     out.size = std::atoll(p->data.c_str() + 2);
                     out.tail = p->data.substr(nl + 1);
                     p->finish(std::move(out));
                   });
}

}  // namespace hq::cmd
