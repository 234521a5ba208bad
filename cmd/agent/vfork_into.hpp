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
#pragma once
#include <cstddef>
#include <sys/types.h>

namespace hq::cmd {

// `child(arg)` in a new process inside the group whose directory `cgroup_fd` is open on
// (-1: the caller's group). Returns the child's pid, or -errno (-ENOSYS: not available).
pid_t vfork_into_cgroup(int cgroup_fd, void (*child)(void*), void* arg);

// The same in the caller's group, on a stack the caller gives (`size` bytes at `stack`),
// for a caller without a heap (the job's shim, cmd/agent/launcher.cpp).
pid_t vfork_on_stack(char* stack, size_t size, void (*child)(void*), void* arg);

}  // namespace hq::cmd
