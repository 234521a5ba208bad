// A shim that shares the agent's memory (cmd/agent/shim_memory, clone_sharing_memory):
// it sees and writes the agent's memory, but errno and glibc's thread descriptor are its
// own copy's; its area goes back to the pool only when freed after its reaping.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/agent/fork_memory.hpp"
#include "cmd/agent/shim_memory.hpp"
#include "cmd/agent/vfork_into.hpp"
#include "../skip.hpp"

namespace {

using hq::cmd::ShimArea;

int shared_seen_errno = 0;     // written by the child, in the memory it shares with us
volatile int shared_word = 0;  // likewise

// In the child: a failing system call sets errno (EBADF) in the child's thread area.
[[noreturn]] void fail_a_call(void*) {
  errno = 0;
  (void)close(-1);
  shared_seen_errno = errno;
  shared_word = 42;
  _exit(0);
}

bool area_mapped(const void* p) {
  auto page = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095};
  return msync(reinterpret_cast<void*>(page), 4096, MS_ASYNC) == 0;
}

}  // namespace

TEST_CASE("a child sharing our memory writes it, but sets errno in its own thread area") {
  ShimArea area(4096);
  REQUIRE(area.ok());
  void* thread = hq::cmd::copy_thread_area(area.thread_room());
  REQUIRE_MESSAGE(thread != nullptr, "this (static) binary's main thread area was not found at the heap's start");
  CHECK(thread != __builtin_thread_pointer());
  errno = 0;
  shared_word = 0;
  pid_t pid = hq::cmd::clone_sharing_memory(area.shim_stack(), ShimArea::kStack, thread, fail_a_call, nullptr);
  if (pid == -ENOSYS || pid == -EPERM) HQ_SKIP("clone3 is refused here");
  REQUIRE(pid > 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  int ours = errno;
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(shared_word == 42);               // its write is in our memory
  CHECK(shared_seen_errno == EBADF);      // its errno was set...
  CHECK(ours == 0);                       // ...in its own copy, not ours
  area.free_after_reap();
}

TEST_CASE("a shim's area goes back to the pool only once freed after its reaping") {
  char* stack = nullptr;
  {
    ShimArea area(100);
    REQUIRE(area.ok());
    stack = area.shim_stack();
  }  // destroyed without free_after_reap: a shim may still run on it
  CHECK(area_mapped(stack));
  size_t before = ShimArea::pooled();
  ShimArea area(100);
  REQUIRE(area.ok());
  area.free_after_reap();
  CHECK(ShimArea::pooled() == std::min<size_t>(before + 1, 64));
  CHECK_FALSE(area.ok());
  ShimArea again(100);  // the pooled one, still mapped
  REQUIRE(again.ok());
  CHECK(area_mapped(again.shim_stack()));
  ShimArea big(1 << 20);  // past the standard size: its own mapping, unmapped when freed
  REQUIRE(big.ok());
  char* big_stack = big.shim_stack();
  big.free_after_reap();
  CHECK_FALSE(area_mapped(big_stack));
  again.free_after_reap();
}
