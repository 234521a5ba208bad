// doctest's main for every hq test binary.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

#include "temp_dir.hpp"

int main(int argc, char** argv) {
  // Whatever a test runs keeps its per-user files (the client's TLS session cache, an
  // agent's default spool) under the build directory, not in the tester's home.
  setenv("HQ_HOME", (hq::test::test_tmp_root() + "/home").c_str(), 1);
  doctest::Context context(argc, argv);
  return context.run();
}
