// Forking the agent without copying its heap. A fork write-protects every page of the
// parent's heap: each page the agent then writes costs a copy-on-write fault, and on a VM
// with more than one CPU a TLB shoot-down interrupt to the other CPUs (about 60 such
// faults per batch job, the largest part of the agent's CPU in a run of short jobs). The
// heap is marked MADV_DONTFORK for the fork (HeapNotForked), so the child has none: what
// it reads lives in a ForkBlock, a mapping of its own that the child inherits, and the
// child must not allocate (only system calls and the block). Such a child is made with
// glibc's _Fork(), not fork(): fork() runs atfork handlers in the child (malloc's, the
// walk over every open FILE, NSS's) that read heap objects (a log file's FILE, NSS state). Thread rules: one thread
// (the agent's loop) forks; nothing here is shared.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hq::cmd {

// Memory outside the heap, mapped whole when made and unmapped when destroyed: strings and
// arrays copied in stay at their addresses in a forked child. `bytes` must hold everything
// put in (ForkBlock::size_of says how much a set of strings needs).
class ForkBlock {
 public:
  explicit ForkBlock(size_t bytes);
  // Over `bytes` at `base`, which the caller owns (a ShimArea's plan room): not unmapped here.
  ForkBlock(char* base, size_t bytes) : base_(base), size_(bytes), owned_(false) {}
  ~ForkBlock();
  ForkBlock(const ForkBlock&) = delete;
  ForkBlock& operator=(const ForkBlock&) = delete;
  bool ok() const { return base_ != nullptr; }

  // A copy of `s`, NUL-terminated; nullptr once the block is full.
  const char* put(std::string_view s);
  // Copies of `list` and a null-terminated array of pointers to them (execve's argv, envp).
  char* const* put_list(const std::vector<std::string>& list);
  // Room for `count` objects of `T` (trivially copyable), aligned; nullptr once full.
  template <typename T>
  T* room(size_t count) {
    return static_cast<T*>(take(count * sizeof(T), alignof(T)));
  }

  // Bytes that put() of each string in `list` and put_list() of it take, with alignment.
  static size_t size_of(const std::vector<std::string>& list);
  static size_t size_of(std::string_view s) { return s.size() + 1; }

 private:
  void* take(size_t bytes, size_t align);
  char* base_ = nullptr;
  size_t size_ = 0, used_ = 0;
  bool owned_ = true;
};

// While it lives, the main heap (brk) is not inherited by fork(): the child gets no copy
// and the parent's heap pages stay writable. Where the heap cannot be found it does
// nothing, and a fork copies the heap as before.
class HeapNotForked {
 public:
  HeapNotForked();
  ~HeapNotForked();
  HeapNotForked(const HeapNotForked&) = delete;
  HeapNotForked& operator=(const HeapNotForked&) = delete;
  bool active() const { return size_ > 0; }

 private:
  void* start_ = nullptr;
  size_t size_ = 0;
};

// Bytes below the thread pointer that a copy of the calling thread's area takes
// (copy_thread_area), and the room it needs in all, with its alignment.
size_t thread_area_room();

// A copy of the calling thread's area (its TLS block and glibc's thread descriptor) made at
// `room` (thread_area_room() bytes), for a child that shares this process's memory
// (clone_sharing_memory): its thread pointer, whose errno and descriptor are its own.
// nullptr where this thread's area is not where a static binary's main thread keeps it
// (at the start of the brk heap): the caller forks instead.
void* copy_thread_area(char* room);

}  // namespace hq::cmd
