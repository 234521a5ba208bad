#include "cmd/agent/vfork_into.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <linux/sched.h>
#include <memory>

namespace hq::cmd {

#if defined(__x86_64__)

// long hq_clone3_call(clone_args* args, size_t size, void (*fn)(void*), void* arg)
// The parent returns the kernel's answer. The child starts on the stack named in args
// (the kernel sets its stack pointer to stack + stack_size; none named: on its copy of the
// caller's), aligns it to 16 bytes as a call wants, calls fn(arg) there and, should
// fn return, exits with status 127. r8 and r9 carry fn and arg across the system call (it
// preserves every register but rax, rcx and r11, in the child too).
asm(R"(
  .text
  .p2align 4
  .globl hq_clone3_call
  .hidden hq_clone3_call
  .type hq_clone3_call, @function
hq_clone3_call:
  endbr64
  mov %rdx, %r8
  mov %rcx, %r9
  mov $435, %eax
  syscall
  test %rax, %rax
  jz 1f
  ret
1:
  xor %ebp, %ebp
  and $-16, %rsp
  mov %r9, %rdi
  call *%r8
  mov $127, %edi
  mov $60, %eax
  syscall
  hlt
  .size hq_clone3_call, .-hq_clone3_call
)");

extern "C" long hq_clone3_call(clone_args* args, size_t size, void (*fn)(void*), void* arg);

namespace {

constexpr size_t kChildStack = 256 * 1024;  // the child formats an error line at most

char* child_stack_top() {
  thread_local std::unique_ptr<char[]> stack(new char[kChildStack]);
  auto top = reinterpret_cast<uintptr_t>(stack.get()) + kChildStack;
  return reinterpret_cast<char*>(top & ~uintptr_t{15});
}

// clone3(flags) with the child on [bottom, top), its end reported by SIGCHLD; `cgroup_fd`
// >= 0 adds CLONE_INTO_CGROUP, `thread_pointer` CLONE_SETTLS. A pid, or -errno.
pid_t clone_on_stack(uint64_t flags, int cgroup_fd, void* thread_pointer, char* bottom, char* top,
                     void (*child)(void*), void* arg) {
  clone_args args;
  std::memset(&args, 0, sizeof args);
  args.flags = flags | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0) | (thread_pointer ? CLONE_SETTLS : 0);
  args.exit_signal = SIGCHLD;
  args.stack = reinterpret_cast<uintptr_t>(bottom);
  args.stack_size = static_cast<uint64_t>(top - bottom);
  if (cgroup_fd >= 0) args.cgroup = static_cast<uint64_t>(cgroup_fd);
  args.tls = reinterpret_cast<uintptr_t>(thread_pointer);
  return static_cast<pid_t>(hq_clone3_call(&args, sizeof args, child, arg));
}

char* stack_top(char* stack, size_t size) {
  return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t{15});
}

}  // namespace

pid_t vfork_into_cgroup(int cgroup_fd, void (*child)(void*), void* arg) {
  char* top = child_stack_top();
  return clone_on_stack(CLONE_VM | CLONE_VFORK, cgroup_fd, nullptr, top - (kChildStack - 16), top, child, arg);
}

pid_t vfork_on_stack(char* stack, size_t size, void (*child)(void*), void* arg) {
  return clone_on_stack(CLONE_VM | CLONE_VFORK, -1, nullptr, stack, stack_top(stack, size), child, arg);
}

pid_t clone_sharing_memory(char* stack, size_t size, void* thread_pointer, void (*child)(void*), void* arg) {
  return clone_on_stack(CLONE_VM, -1, thread_pointer, stack, stack_top(stack, size), child, arg);
}

pid_t fork_into_cgroup(int cgroup_fd, void (*child)(void*), void* arg) {
  if (cgroup_fd < 0) return -EBADF;
  // No stack: the child goes on at the caller's stack pointer, in its own copy of it.
  return clone_on_stack(0, cgroup_fd, nullptr, nullptr, nullptr, child, arg);
}

#else

pid_t vfork_into_cgroup(int, void (*)(void*), void*) { return -ENOSYS; }
pid_t vfork_on_stack(char*, size_t, void (*)(void*), void*) { return -ENOSYS; }
pid_t clone_sharing_memory(char*, size_t, void*, void (*)(void*), void*) { return -ENOSYS; }
pid_t fork_into_cgroup(int, void (*)(void*), void*) { return -ENOSYS; }

#endif

}  // namespace hq::cmd
