// prefer_huge_heap_pages (cmd/process): the heap grows at once, is marked for huge pages
// (VmFlags "hg" in smaps), and a listing's large buffer then comes from that heap, not from
// a mapping of its own. Run in a forked child: it changes malloc's settings for good.
#include <doctest/doctest.h>

#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../forked_child.hpp"
#include "../skip.hpp"
#include "cmd/process.hpp"

namespace {

struct HeapArea {
  uintptr_t begin = 0, end = 0;
  bool huge = false;  // VmFlags has "hg"
};

// The [heap] areas of this process (madvise may split it in two): the span, and whether
// any part is marked for huge pages.
HeapArea heap_area() {
  std::ifstream smaps("/proc/self/smaps");
  HeapArea out;
  std::string line;
  bool in_heap = false;
  while (std::getline(smaps, line)) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first.find('-') != std::string::npos && first.back() != ':') {  // a mapping's first line
      in_heap = line.find("[heap]") != std::string::npos;
      if (in_heap) {
        uintptr_t b = std::stoull(first.substr(0, first.find('-')), nullptr, 16);
        uintptr_t e = std::stoull(first.substr(first.find('-') + 1), nullptr, 16);
        if (out.begin == 0 || b < out.begin) out.begin = b;
        if (e > out.end) out.end = e;
      }
    } else if (in_heap && first == "VmFlags:") {
      out.huge = out.huge || line.find(" hg") != std::string::npos;
    }
  }
  return out;
}

// Whether this kernel maps pages on request (MADV_POPULATE_WRITE, Linux 5.14).
bool kernel_populates() {
  void* probe = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED) return false;
  bool populates = madvise(probe, 4096, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(probe, 4096);
  return populates;
}

// Whether the page at `at` is resident.
bool resident(uintptr_t at) {
  unsigned char in = 0;
  return mincore(reinterpret_cast<void*>(at / 4096 * 4096), 4096, &in) == 0 && (in & 1);
}

// Whether this machine gives a huge page to a range marked for them: one byte written
// maps the whole 2 MiB. It may not (huge pages off, or memory too fragmented).
bool huge_pages_given() {
  constexpr size_t kHuge = 2 << 20;
  void* area = mmap(nullptr, 2 * kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return false;
  uintptr_t at = (reinterpret_cast<uintptr_t>(area) + kHuge - 1) / kHuge * kHuge;
  bool given = madvise(reinterpret_cast<void*>(at), kHuge, MADV_HUGEPAGE) == 0;
  if (given) {
    *reinterpret_cast<volatile char*>(at) = 1;
    given = resident(at + kHuge - 4096);
  }
  munmap(area, 2 * kHuge);
  return given;
}

// Takes (and keeps) the free blocks of 64 KiB or more that this process's heap holds
// (earlier tests' buffers), so that the next blocks come from the heap's top, as in a
// fresh client: until a block of 64 KiB no longer comes out of the free ones.
void drain_free_blocks() {
  auto in_bins = [] {
    struct mallinfo2 m = mallinfo2();
    return m.fordblks - m.keepcost;  // free bytes, less the top's
  };
  for (int i = 0; i < 100000; ++i) {
    size_t before = in_bins();
    if (!std::malloc(64 << 10) || in_bins() >= before) return;  // it came from the top
  }
}

}  // namespace

TEST_CASE("prefer_huge_heap_pages: the heap grows at once, is marked for huge pages, and large buffers come from it") {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (modes.find("[never]") != std::string::npos || modes.empty())
    HQ_SKIP("transparent huge pages are off here (" + modes + ")");
  int bad = hq::test::exit_code_in_child([] {
    drain_free_blocks();  // a fresh client's heap, not this test process's
    HeapArea before = heap_area();
    hq::cmd::prefer_huge_heap_pages(32 << 20);
    HeapArea after = heap_area();
    int bad = 0;
    if (after.end - after.begin < (before.end - before.begin) + (30 << 20)) bad |= 1;  // grew by about 32 MiB
    if (!after.huge) bad |= 2;
    void* buffer = std::malloc(8 << 20);  // a long listing's buffer
    auto at = reinterpret_cast<uintptr_t>(buffer);
    if (!(at >= after.begin && at < after.end)) bad |= 4;
    if (at % (2 << 20) != 0) bad |= 8;  // the heap's next block, at the first huge page
    std::memset(buffer, 1, 8 << 20);
    return bad;
  });
  REQUIRE(bad >= 0);
  CHECK_MESSAGE((bad & 1) == 0, "the heap did not grow at once");
  CHECK_MESSAGE((bad & 2) == 0, "the heap is not marked for huge pages");
  CHECK_MESSAGE((bad & 4) == 0, "an 8 MiB buffer did not come from the heap");
  CHECK_MESSAGE((bad & 8) == 0, "the next buffer does not start at the first 2 MiB page");
}

TEST_CASE("prefault_heap_for: the heap a reply will take is mapped at once, and a grown heap is not trimmed") {
  if (!kernel_populates()) HQ_SKIP("this kernel has no MADV_POPULATE_WRITE (Linux 5.14 and later)");
  int bad = hq::test::exit_code_in_child([] {  // it changes malloc's settings for good
    int bad = 0;
    hq::cmd::prefer_huge_heap_pages(32 << 20);  // as squeue does first
    HeapArea grown = heap_area();
    constexpr size_t kFrame = 256 << 10;  // a reply of 256 KiB: 1.25 MiB of heap mapped
    auto [at, size] = hq::cmd::prefault_heap_for(kFrame);
    if (size < (1 << 20)) bad |= 1;
    std::vector<unsigned char> resident(size / 4096 + 1);
    if (size > 0 && mincore(at, size, resident.data()) != 0) bad |= 2;
    for (size_t i = 0; i < size / 4096; ++i)
      if (!(resident[i] & 1)) bad |= 2;
    if (heap_area().end < grown.end) bad |= 4;  // its free() trimmed what prefer_huge_heap_pages grew
    return bad;
  });
  REQUIRE(bad >= 0);
  CHECK_MESSAGE((bad & 1) == 0, "less than 1 MiB was mapped for a 256 KiB reply");
  CHECK_MESSAGE((bad & 2) == 0, "the range it reports is not all resident");
  CHECK_MESSAGE((bad & 4) == 0, "the heap grown by prefer_huge_heap_pages was trimmed");
}

TEST_CASE("prefault_text_block: the next buffer of a text reply's size starts on a 2 MiB page, mapped at once") {
#if defined(__SANITIZE_ADDRESS__)
  HQ_SKIP("AddressSanitizer's allocator places blocks its own way (HQ_SANITIZE)");
#endif
  if (!kernel_populates()) HQ_SKIP("this kernel has no MADV_POPULATE_WRITE (Linux 5.14 and later)");
  bool huge = huge_pages_given();
  if (!huge) MESSAGE("huge pages are not given here: whether the buffer gets one is not checked");
  // Each size first in a fresh process (a client's first long reply), then the others in
  // the heap it left.
  const std::vector<size_t> frames{size_t{64} << 10, size_t{450} << 10, size_t{3} << 20};
  int bad = 0;
  for (size_t first = 0; first < frames.size() && bad >= 0; ++first) {
    int child = hq::test::exit_code_in_child([&] {  // it changes malloc's settings for good
      drain_free_blocks();  // a fresh client's heap, not this test process's
      int bad = 0;
      for (size_t k = 0; k < frames.size(); ++k) {
        size_t frame = frames[(first + k) % frames.size()];
        void* before = std::malloc(1000);  // the heap as a client leaves it: small blocks in use
        auto [at, size] = hq::cmd::prefault_text_block(frame);
        void* buffer = std::malloc(frame + 1);  // as the frame's buffer is made next
        auto where = reinterpret_cast<uintptr_t>(buffer);
        if (where % (2 << 20) != 0) bad |= 1;
        if (at != buffer || size < (frame + 1) / 4096 * 4096) bad |= 2;  // its whole pages
        size_t span = (frame + 1 + (2 << 20) - 1) / (2 << 20) * (2 << 20);
        if (reinterpret_cast<uintptr_t>(sbrk(0)) < where + span) bad |= 8;  // else MADV_HUGEPAGE fails
        if (k == 0 && huge && !resident(where + span - 4096)) bad |= 16;  // only the buffer's pages were asked for
        std::vector<unsigned char> pages(size / 4096 + 1);
        if (size > 0 && mincore(at, size, pages.data()) != 0) bad |= 4;
        for (size_t i = 0; i < size / 4096; ++i)
          if (!(pages[i] & 1)) bad |= 4;
        std::memset(buffer, 1, frame + 1);
        std::free(buffer);
        std::free(before);
      }
      return bad;
    });
    bad = child < 0 ? -1 : bad | child;
  }
  REQUIRE(bad >= 0);
  CHECK_MESSAGE((bad & 1) == 0, "the buffer does not start on a 2 MiB boundary");
  CHECK_MESSAGE((bad & 2) == 0, "the range mapped is not the buffer's");
  CHECK_MESSAGE((bad & 4) == 0, "the range it reports is not all resident");
  CHECK_MESSAGE((bad & 8) == 0, "the heap does not reach past the buffer's last 2 MiB page");
  CHECK_MESSAGE((bad & 16) == 0, "the buffer's range is not one huge page (a page in it was written first?)");
}
