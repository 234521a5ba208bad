// ForkBlock and HeapNotForked: a child forked while HeapNotForked lives has no heap, yet
// reads what the parent put in a ForkBlock; the parent's heap is forked as usual again
// once it is gone; a block refuses what does not fit.
#include <cerrno>
#include <cstring>
#include <doctest/doctest.h>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "cmd/agent/fork_memory.hpp"
#include "../forked_child.hpp"

namespace {

using hq::cmd::ForkBlock;
using hq::cmd::HeapNotForked;

// 0 when the page holding `p` is mapped in the calling process, 1 when it is not.
int unmapped(const void* p) {
  auto page = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{4095};
  return msync(reinterpret_cast<void*>(page), 4096, MS_ASYNC) != 0 && errno == ENOMEM ? 1 : 0;
}

// Forks as the launcher does (_Fork: no atfork handlers); the child (system calls only)
// exits with `child()`; returns that exit code.
template <typename Child>
int in_child(Child child) {
  return hq::test::exit_code_in_child(child, hq::test::ForkKind::kRaw);
}

}  // namespace

TEST_CASE("a child forked without the heap reads the fork block and has no heap") {
  auto on_heap = std::make_unique<std::string>(std::string(200, 'h'));  // past the small-string buffer
  const char* heap_text = on_heap->data();
  std::vector<std::string> argv = {"/bin/true", "an argument", ""};
  ForkBlock block(ForkBlock::size_of(argv) + ForkBlock::size_of("exit path"));
  REQUIRE(block.ok());
  const char* path = block.put("exit path");
  char* const* list = block.put_list(argv);
  REQUIRE(path);
  REQUIRE(list);

  int code = -1;
  {
    HeapNotForked without_heap;
    REQUIRE_MESSAGE(without_heap.active(), "the brk heap was not found (or could not be marked)");
    code = in_child([&] {
      if (strcmp(path, "exit path") != 0) return 10;
      if (strcmp(list[0], "/bin/true") != 0 || strcmp(list[1], "an argument") != 0 || list[2][0] != '\0') return 11;
      if (list[3] != nullptr) return 12;
      return unmapped(heap_text) ? 0 : 13;  // the heap was not inherited
    });
  }
  CHECK(code == 0);
  on_heap->append("still writable");  // the parent's heap is its own all along
  CHECK(on_heap->size() == 214);
  // Once HeapNotForked is gone, a child gets the heap again.
  CHECK(in_child([&] { return unmapped(heap_text) ? 1 : 0; }) == 0);
}

TEST_CASE("a fork block refuses what does not fit") {
  ForkBlock block(16);  // rounded up to a page
  REQUIRE(block.ok());
  CHECK(block.put(std::string(4000, 'x')) != nullptr);
  CHECK(block.put(std::string(200, 'y')) == nullptr);
  CHECK(block.room<long>(1000) == nullptr);
  CHECK(block.put("") != nullptr);  // what is left still serves
}
