// The static executables' exceptions (cmd/static_unwind.cpp, CMakeLists.txt's
// hq_static_link): this test binary is linked as hq is, so here too crtbeginT's
// registration of the whole .eh_frame must have been skipped (libgcc would sort all of it
// at the first throw: 20 ms for hq), the binary must carry the .eh_frame_hdr that libgcc
// searches instead, and an exception must still find its handler through a few frames.
#include <doctest/doctest.h>

#include <link.h>

#include <stdexcept>
#include <string>

#include "../skip.hpp"

extern "C" __attribute__((weak)) int hq_frame_registrations_skipped;

namespace {

int eh_frame_headers(dl_phdr_info* info, size_t, void* found) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') return 0;  // the main program only
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME) ++*static_cast<int*>(found);
  return 0;
}

[[gnu::noinline]] int thrower(int depth) {
  if (depth == 0) throw std::runtime_error("deep");
  return thrower(depth - 1) + 1;
}

}  // namespace

TEST_CASE("static executables: exceptions through the .eh_frame_hdr - no frames registered for libgcc to sort at the first throw") {
  if (&hq_frame_registrations_skipped == nullptr) HQ_SKIP("a dynamic build (sanitizers or HQ_STATIC off): not linked by hq_static_link");
  CHECK(hq_frame_registrations_skipped == 1);  // crtbeginT's, before main
  int headers = 0;
  dl_iterate_phdr(eh_frame_headers, &headers);
  CHECK(headers == 1);
  std::string caught;
  try {
    thrower(8);
  } catch (const std::runtime_error& e) {
    caught = e.what();
  }
  CHECK(caught == "deep");
}
