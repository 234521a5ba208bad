// Tests that cannot run here say so instead of passing. HQ_SKIP(reason) ends the test
// case; when it ends without a failure, the test binary prints "HQ_SKIPPED: <reason>",
// which tests/CMakeLists.txt gives CTest as SKIP_REGULAR_EXPRESSION, so `ctest` lists
// the test as "Skipped" (the line shows with -V or --output-on-failure). A case that
// failed before it skipped prints no marker: CTest lets a skip match hide a failure.
#pragma once
#include <string>

namespace hq::test {

// Records why the running test case cannot run (main_test.cpp reports it at the end).
void skip_test_case(std::string reason);
// Whether an assertion of the running test case has failed so far (fixtures print their
// daemons' logs then, for failures seen only in CI).
bool test_case_failed();

}  // namespace hq::test

#define HQ_SKIP(reason)                  \
  do {                                   \
    ::hq::test::skip_test_case(reason);  \
    return;                              \
  } while (0)
