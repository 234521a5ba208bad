// Maps, in one system call each, the memory every hq process touches as it starts: its
// static data (the C library's end of .data, and .bss), and, once it is known to run a
// command (not `hq --version` or a usage message), the code client commands run and the
// first stretch of its heap and of its stack.
// Touched page by page, each first write is a page fault (on VMs 1-20 us each, against
// under 1 us a page mapped by MADV_POPULATE_WRITE); a client such as sbatch took about 50
// of them before doing anything. The static data is mapped from .preinit_array, before
// `.init` and every static initializer, on the main thread, before any other thread exists.
// Kernels before 5.14 refuse MADV_POPULATE_WRITE and _READ: the pages then fault in as before.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/process.hpp"
#include "cmd/startup.hpp"

extern "C" char __data_start[];  // the linker's: the start of .data, of .bss, and the end of .bss
extern "C" char __bss_start[];
extern "C" char _end[];

// The first and the last of the hot functions (cmake/hot_symbols.txt): they do nothing.
extern "C" __attribute__((noinline, used)) void hq_hot_text_begin() { __asm__ volatile(""); }
extern "C" __attribute__((noinline, used)) void hq_hot_text_end() { __asm__ volatile(""); }

namespace {

using hq::cmd::page_down;
using hq::cmd::page_up;

constexpr size_t kStackStart = 64 << 10;  // inside the 128 KiB the kernel maps for a new stack

void populate(uintptr_t from, uintptr_t to) {
  if (to > from) (void)hq::cmd::populate_within(reinterpret_cast<void*>(from), to - from);
}

// Where the static data a process writes at its start begins: the C library's own (malloc's
// arena, stdio's streams, the exit handlers), at the end of .data because libc comes last
// in the link, then .bss. The rest of .data (137 KB, the libraries' tables) is mostly
// never written: mapping it too made sbatch copy 32 pages it did not use (about 20 us).
uintptr_t start_data_begin(uintptr_t page) {
  auto libc = reinterpret_cast<uintptr_t>(&stdout);
  auto bss = reinterpret_cast<uintptr_t>(__bss_start);
  bool libc_in_data = libc >= reinterpret_cast<uintptr_t>(__data_start) && libc < bss;
  return (libc_in_data ? libc : bss) / page * page;
}

constexpr uintptr_t kMostHotText = 8 << 20;  // a list's span; more: the link did not order them

// The code client commands run, which the link lays out first (cmake/hot_symbols.txt, its
// first and last names these two): mapped in one call, 0.1 ms for its 2.3 MiB here, where
// a command's first touches of it took 25-30 page faults of 12 us each (the kernel maps 64
// KiB around each). Unordered (a link without lld), the two lie anywhere: nothing mapped.
// Not for `hq --version`, which runs a few dozen pages of it: mapping 2.3 MiB, and taking
// the mapping down at the exit, cost it more than its faults (1.86 -> 1.76 ms of CPU, the
// two alternated 400 times); the static initializers, which the list puts first, fault in
// their few windows before main.
void populate_hot_text(uintptr_t page) {
  auto begin = reinterpret_cast<uintptr_t>(&hq_hot_text_begin) / page * page;
  auto end = (reinterpret_cast<uintptr_t>(&hq_hot_text_end) + page - 1) / page * page;
  if (end > begin && end - begin <= kMostHotText)
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ);
}

// Computes its own page bounds: the helpers' cached page size is a static of its own,
// whose page would fault (read, then written) before the rest is mapped.
void populate_start_memory() {
  const auto page = static_cast<uintptr_t>(getpagesize());
  uintptr_t from = start_data_begin(page);
  uintptr_t to = (reinterpret_cast<uintptr_t>(_end) + page - 1) / page * page;
  if (to > from) (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
}

// Run from .preinit_array: after libc's own start, before `.init` and every static
// initializer, whose first writes (libstdc++'s locale and streams, the exit handlers' list)
// would otherwise fault, a page each, after a read of the same page had mapped it shared.
__attribute__((section(".preinit_array"), used)) void (*const populate_at_start)() = populate_start_memory;

}  // namespace

namespace hq::cmd {

void populate_command_memory() {
  populate_hot_text(static_cast<uintptr_t>(getpagesize()));
  // The heap's free top: glibc grew it by the first request plus M_TOP_PAD (128 KiB),
  // about what a client such as sbatch uses in all.
  if (void* first = malloc(64)) {
    populate(page_down(reinterpret_cast<uintptr_t>(first)), page_down(reinterpret_cast<uintptr_t>(sbrk(0))));
    free(first);
  }
  char here;
  uintptr_t sp = page_down(reinterpret_cast<uintptr_t>(&here));
  populate(sp - kStackStart, sp);
}

}  // namespace hq::cmd
