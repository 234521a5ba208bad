// Operator programs the agent runs as root: the health check (periodic), and the prolog
// and epilog around each job (Slurm's HealthCheckProgram, Prolog, Epilog). Each runs as
// a child of the agent with a bounded time, its output in a temporary file, and a
// callback with the outcome; the agent's SIGCHLD loop hands their exits to reaped().
// Agent event-loop thread only.
#pragma once
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace hq::cmd {

struct HelperOutcome {
  bool ok = false;
  std::string message;  // "exit 3: disk /scratch full" (the first line of its output)
};

class HelperRunner {
 public:
  explicit HelperRunner(asio::io_context& io, std::string tmp_dir) : io_(io), tmp_dir_(std::move(tmp_dir)) {}
  // Starts `program` with `env` (KEY=VALUE) added to a minimal environment; past
  // `timeout_s` it is killed and counts as failed. A program that cannot start fails.
  void run(const std::string& program, const std::vector<std::string>& env, int timeout_s,
           std::function<void(HelperOutcome)> done);
  // True when `pid` was a helper (its callback has run).
  bool reaped(pid_t pid, int status);

 private:
  struct Running {
    std::string out_path;
    std::function<void(HelperOutcome)> done;
    std::unique_ptr<asio::steady_timer> timer;
    bool timed_out = false;
  };
  asio::io_context& io_;
  std::string tmp_dir_;
  std::map<pid_t, Running> running_;
};

}  // namespace hq::cmd
