// Starts a vfork-style child (it shares the caller's memory and the caller waits until it
// execs or exits) that is inside a given cgroup v2 group from its first instruction:
// clone3(CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP) with a stack of its own. Moving a
// process into a v2 group afterwards (a write to cgroup.procs) takes the kernel's
// cgroup_threadgroup_rwsem for writing, which can wait for an RCU grace period and slows
// every fork on the host meanwhile; a process born in its group takes nothing of the kind.
// x86-64 Linux 5.7 or later; elsewhere it answers -ENOSYS and callers use vfork().
// The child function runs on the new stack with the caller's signal mask and must never
// return to the caller: it execs or _exits, making system calls only.
// Thread rules: any thread; one stack per thread, reused by each call.
// clone_sharing_memory (below) starts a child that runs beside its caller instead.
#pragma once
#include <cerrno>
#include <cstddef>
#include <sys/types.h>

namespace hq::cmd {

// `child(arg)` in a new process inside the group whose directory `cgroup_fd` is open on
// (-1: the caller's group). Returns the child's pid, or -errno (-ENOSYS: not available).
pid_t vfork_into_cgroup(int cgroup_fd, void (*child)(void*), void* arg);

// Whether an answer of these functions says the kernel refuses them (no clone3 or no such
// flag: before Linux 5.3 or 5.7; a seccomp profile: EPERM), so that the caller forks instead.
inline bool clone3_refused(long answer) {
  return answer == -ENOSYS || answer == -EINVAL || answer == -E2BIG || answer == -EPERM;
}

// The same in the caller's group, on a stack the caller gives (`size` bytes at `stack`),
// for a caller without a heap (the job's shim, cmd/agent/launcher.cpp).
pid_t vfork_on_stack(char* stack, size_t size, void (*child)(void*), void* arg);

// `child(arg)` in a new process with a copy of the caller's memory, as fork() makes, inside
// the group whose directory `cgroup_fd` is open on (clone3 with CLONE_INTO_CGROUP: the
// job's shim on cgroup v2, which then need not move itself there). The child runs on its
// copy of the caller's stack and must end by exec or _exit, making system calls only: glibc
// is not told of the new process (no atfork handlers, its thread's cached id is the
// caller's). -errno on failure: -ENOSYS where clone3 or the flag is not to be had, -EBADF
// where `cgroup_fd` is not a group's directory.
pid_t fork_into_cgroup(int cgroup_fd, void (*child)(void*), void* arg);

// `child(arg)` in a new process that shares the caller's memory but not its wait: the
// caller goes on at once (clone3 with CLONE_VM and CLONE_SETTLS; the job's shim,
// cmd/agent/shim_memory.hpp). The child runs on `size` bytes at `stack` with
// `thread_pointer` as its thread area, which must be a copy of the caller's
// (copy_thread_area): errno and glibc's per-thread state are written there, not in the
// caller's. It must only make system calls and never allocate: the heap is the caller's,
// in use by it meanwhile. Its end is reported by SIGCHLD, as a fork's. -errno on failure.
pid_t clone_sharing_memory(char* stack, size_t size, void* thread_pointer, void (*child)(void*), void* arg);

}  // namespace hq::cmd
