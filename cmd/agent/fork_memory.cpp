// See fork_memory.hpp.
#include "cmd/agent/fork_memory.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/paths.hpp"
#include "cmd/process.hpp"

namespace hq::cmd {
namespace {

constexpr size_t kPointer = sizeof(char*);
constexpr size_t kThreadDescriptorRoom = 4096;  // more than glibc's struct pthread

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// The start of the brk heap, from /proc/self/maps (it never moves); 0 when not found.
uintptr_t find_heap_start() {
  std::string maps = read_small_file("/proc/self/maps");
  size_t tag = maps.find(" [heap]\n");
  if (tag == std::string::npos) return 0;
  size_t line = maps.rfind('\n', tag);
  line = line == std::string::npos ? 0 : line + 1;
  return static_cast<uintptr_t>(std::strtoull(maps.c_str() + line, nullptr, 16));
}

uintptr_t heap_start() {
  static const uintptr_t start = find_heap_start();
  return start;
}

}  // namespace

ForkBlock::ForkBlock(size_t bytes) : size_(page_up(bytes == 0 ? 1 : bytes)) {
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p != MAP_FAILED) base_ = static_cast<char*>(p);
}

ForkBlock::~ForkBlock() {
  if (base_) munmap(base_, size_);
}

void* ForkBlock::take(size_t bytes, size_t align) {
  size_t at = round_up(used_, align);
  if (!base_ || at + bytes > size_) return nullptr;
  used_ = at + bytes;
  return base_ + at;
}

const char* ForkBlock::put(std::string_view s) {
  char* out = room<char>(s.size() + 1);
  if (!out) return nullptr;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  return out;
}

char* const* ForkBlock::put_list(const std::vector<std::string>& list) {
  char** array = room<char*>(list.size() + 1);
  if (!array) return nullptr;
  for (size_t i = 0; i < list.size(); ++i)
    if (!(array[i] = const_cast<char*>(put(list[i])))) return nullptr;
  array[list.size()] = nullptr;
  return array;
}

size_t ForkBlock::size_of(const std::vector<std::string>& list) {
  size_t bytes = (list.size() + 1) * kPointer + kPointer;  // the array, and its alignment
  for (const auto& s : list) bytes += size_of(s);
  return bytes;
}

HeapNotForked::HeapNotForked() {
  uintptr_t start = heap_start();
  auto end = reinterpret_cast<uintptr_t>(sbrk(0));
  // A static binary's main thread has its TLS block and thread descriptor (glibc's struct
  // pthread, 2,304 bytes) at the start of the brk heap, at and below its thread pointer:
  // the child needs them (errno, its tid, the stack guard).
  auto thread = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  if (thread >= start && thread < end) start = page_up(thread + kThreadDescriptorRoom);
  if (start == 0 || end <= start) return;
  if (madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTFORK) != 0) return;
  start_ = reinterpret_cast<void*>(start);
  size_ = end - start;
}

HeapNotForked::~HeapNotForked() {
  if (size_ > 0) madvise(start_, size_, MADV_DOFORK);
}

}  // namespace hq::cmd
