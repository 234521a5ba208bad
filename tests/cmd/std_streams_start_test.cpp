// The standard streams built at first use (core/std_streams.hpp, cmd/std_streams_start.cpp):
// this test binary is linked as hq is, so the static initializers' constructions must
// have been deferred, and the streams built once main (tests/main_test.cpp) asked for them.
// What a command that never asks builds is checked on hq itself (scripts/check_lazy_streams.sh).
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

#include "../skip.hpp"
#include "core/std_streams.hpp"

extern "C" __attribute__((weak)) int hq_std_stream_builds_deferred;
extern "C" __attribute__((weak)) bool hq_std_streams_built;

TEST_CASE("static executables: the standard streams are built at first use, and then work") {
  if (&hq_std_stream_builds_deferred == nullptr) HQ_SKIP("a dynamic build (sanitizers or HQ_STATIC off): not linked by hq_static_link");
  CHECK(hq_std_stream_builds_deferred >= 1);  // the static initializers of the units with <iostream>
  CHECK(hq_std_streams_built);                // by main, before doctest wrote a line
  std::ostringstream captured;
  std::streambuf* was = hq::cout().rdbuf(captured.rdbuf());
  hq::cout() << "built " << 1 << "\n";
  hq::cout().rdbuf(was);
  CHECK(captured.str() == "built 1\n");
  CHECK(&hq::cerr() == static_cast<std::ostream*>(&std::cerr));
  CHECK(hq::cerr().good());
  CHECK(hq::cin().tie() == &hq::cout());  // what the real construction sets up
}
