// Memory for a job's shim that shares the agent's memory (clone_sharing_memory): no copy
// of the agent's page tables to make at the shim's start, none to tear down at its end, no
// copy-on-write fault in the agent after it (a fork of the agent cost all three, the most
// of a short job's CPU on a VM whose page faults and TLB shoot-downs trap to the host).
// A ShimArea is one mapping: the shim's stack, the script child's stack (each above a
// guard page), a copy of the agent's thread area (errno and glibc's descriptor, the
// shim's own) and the plan the shim reads (strings, argv, envp). The shim runs on it until
// it is reaped, so an area goes back (to a pool of standard-sized ones, the next shim's)
// only through free_after_reap(); one merely destroyed stays mapped, since its shim may
// still run (a job left to the next agent).
// Thread rules: the agent's event-loop thread only (the pool is not locked).
#pragma once
#include <cstddef>

#include "cmd/agent/fork_memory.hpp"

namespace hq::cmd {

class ShimArea {
 public:
  static constexpr size_t kStack = 64 << 10;  // each: they format an error line at most

  ShimArea() = default;
  // An area with room for `plan_bytes` of plan; !ok() when it could not be mapped.
  explicit ShimArea(size_t plan_bytes);
  ShimArea(ShimArea&& other) noexcept { *this = static_cast<ShimArea&&>(other); }
  ShimArea& operator=(ShimArea&& other) noexcept;
  ShimArea(const ShimArea&) = delete;
  ShimArea& operator=(const ShimArea&) = delete;
  ~ShimArea() = default;  // left mapped: see the file's comment

  bool ok() const { return base_ != nullptr; }
  char* shim_stack() const { return base_ + kGuard; }
  char* script_stack() const { return base_ + 2 * kGuard + kStack; }
  char* thread_room() const { return base_ + 2 * (kGuard + kStack); }
  ForkBlock plan() const;  // the rest of the area, for the plan's strings and lists

  // Its shim has been reaped (or never ran): to the pool, or unmapped.
  void free_after_reap();

  // Areas waiting in the pool (tests).
  static size_t pooled();

 private:
  static constexpr size_t kGuard = 4096;
  static size_t fixed_bytes();
  char* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace hq::cmd
