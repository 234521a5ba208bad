// See std_streams.hpp. The hook is defined only where the standard streams' build is
// deferred (cmd/std_streams_start.cpp, linked into the static executables); elsewhere the
// weak reference is null and the streams were built before main.
#include "core/std_streams.hpp"

#include <iostream>

extern "C" __attribute__((weak)) void hq_start_std_streams();
extern "C" __attribute__((weak)) bool hq_std_streams_built;

namespace hq {
namespace {

void start_std_streams() {
  if (hq_start_std_streams != nullptr) hq_start_std_streams();
}

}  // namespace

std::ostream& cout() {
  start_std_streams();
  return std::cout;
}

std::ostream& cerr() {
  start_std_streams();
  return std::cerr;
}

std::istream& cin() {
  start_std_streams();
  return std::cin;
}

bool std_streams_built() {
  return &hq_std_streams_built == nullptr || __atomic_load_n(&hq_std_streams_built, __ATOMIC_ACQUIRE);
}

}  // namespace hq
