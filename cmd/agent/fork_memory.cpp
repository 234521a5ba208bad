// See fork_memory.hpp.
#include "cmd/agent/fork_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <sys/auxv.h>
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

// The static TLS block below the thread pointer (TLS variant II: the executable's block
// ends where the descriptor starts), from the PT_TLS program header: its size, rounded to
// its alignment, and the alignment a copy needs (at least glibc's TCB's, 64 on x86-64).
struct TlsBlock {
  size_t below = 0, align = 64;
};

TlsBlock find_tls_block() {
  TlsBlock tls;
  auto* headers = reinterpret_cast<const ElfW(Phdr)*>(getauxval(AT_PHDR));
  size_t count = getauxval(AT_PHNUM);
  for (size_t i = 0; headers && i < count; ++i)
    if (headers[i].p_type == PT_TLS) {
      size_t align = headers[i].p_align ? headers[i].p_align : 1;
      tls.below = round_up(headers[i].p_memsz, align);
      tls.align = std::max(tls.align, align);
    }
  return tls;
}

const TlsBlock& tls_block() {
  static const TlsBlock tls = find_tls_block();
  return tls;
}

}  // namespace

ForkBlock::ForkBlock(size_t bytes) : size_(page_up(bytes == 0 ? 1 : bytes)) {
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p != MAP_FAILED) base_ = static_cast<char*>(p);
}

ForkBlock::~ForkBlock() {
  if (base_ && owned_) munmap(base_, size_);
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

size_t thread_area_room() { return tls_block().below + kThreadDescriptorRoom + tls_block().align; }

void* copy_thread_area(char* room) {
  auto thread = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
  auto heap_end = reinterpret_cast<uintptr_t>(sbrk(0));
  size_t below = tls_block().below;
  // Only the main thread's area, at the heap's start, is known to be readable this far
  // (kThreadDescriptorRoom past the pointer, as HeapNotForked assumes too).
  if (heap_start() == 0 || thread < heap_start() + below || thread + kThreadDescriptorRoom > heap_end) return nullptr;
  // glibc's tcbhead_t starts with two pointers to itself: `tcb` (at 0) and `self` (at 16).
  const auto* original = reinterpret_cast<const uintptr_t*>(thread);
  if (original[0] != thread || original[2] != thread) return nullptr;
  uintptr_t copy = round_up(reinterpret_cast<uintptr_t>(room) + below, tls_block().align);
  std::memcpy(reinterpret_cast<char*>(copy - below), reinterpret_cast<const char*>(thread - below),
              below + kThreadDescriptorRoom);
  auto* header = reinterpret_cast<uintptr_t*>(copy);
  header[0] = copy;
  header[2] = copy;
  return reinterpret_cast<void*>(copy);
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
