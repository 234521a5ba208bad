// Runs a check in a forked child and returns its exit code: for tests of what a fork
// inherits, or that change process-wide settings (malloc's) for good. The child calls
// `check` and exits with what it returns; only system calls and memory already there are
// safe in it. One thread at a time.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

namespace hq::test {

enum class ForkKind { kGlibc, kRaw };  // fork(), or _Fork() (no atfork handlers, as the agent's launcher)

// The child's exit code; -1 when it could not be started or did not exit.
template <typename Check>
int exit_code_in_child(Check check, ForkKind kind = ForkKind::kGlibc) {
  pid_t pid = kind == ForkKind::kRaw ? _Fork() : fork();
  if (pid == 0) _exit(check());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace hq::test
