// See shim_memory.hpp.
#include "cmd/agent/shim_memory.hpp"

#include <sys/mman.h>
#include <utility>
#include <vector>

#include "cmd/process.hpp"

namespace hq::cmd {
namespace {

constexpr size_t kStandardArea = 256 << 10;  // a plan of some 100 KiB: argv, envp, paths
constexpr size_t kMaxPooled = 64;            // as many as run at once, mostly

std::vector<char*>& pool() {
  static std::vector<char*> areas;
  return areas;
}

}  // namespace

size_t ShimArea::fixed_bytes() { return 2 * (kGuard + kStack) + page_up(thread_area_room()); }

ShimArea::ShimArea(size_t plan_bytes) {
  size_t want = fixed_bytes() + page_up(plan_bytes == 0 ? 1 : plan_bytes);
  size_t size = want <= kStandardArea ? kStandardArea : want;
  if (size == kStandardArea && !pool().empty()) {
    base_ = pool().back();
    pool().pop_back();
    size_ = size;
    return;
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) return;
  auto* base = static_cast<char*>(p);
  if (mprotect(base, kGuard, PROT_NONE) != 0 || mprotect(base + kGuard + kStack, kGuard, PROT_NONE) != 0) {
    munmap(p, size);
    return;
  }
  base_ = base;
  size_ = size;
}

ShimArea& ShimArea::operator=(ShimArea&& other) noexcept {
  base_ = std::exchange(other.base_, nullptr);
  size_ = std::exchange(other.size_, 0);
  return *this;
}

ForkBlock ShimArea::plan() const {
  size_t fixed = fixed_bytes();
  return ForkBlock(base_ + fixed, size_ - fixed);
}

void ShimArea::free_after_reap() {
  if (!base_) return;
  if (size_ == kStandardArea && pool().size() < kMaxPooled) {
    pool().push_back(base_);
  } else {
    munmap(base_, size_);
  }
  base_ = nullptr;
  size_ = 0;
}

size_t ShimArea::pooled() { return pool().size(); }

}  // namespace hq::cmd
