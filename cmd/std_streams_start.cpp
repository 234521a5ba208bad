// The standard streams built on first use, not before main (core/std_streams.hpp says why).
// libstdc++ 12 builds std::cout and the other seven streams, and with them the classic
// locale, from std::ios_base::Init's constructor, which every translation unit that
// includes <iostream> calls from its static initializer (ours, CLI11's, libprotobuf's).
// The static link (CMakeLists.txt, hq_static_link) wraps that constructor: those calls do
// nothing, and hq_start_std_streams(), which hq::cout(), hq::cerr() and hq::cin() call,
// makes the one real call. Until then the stream objects are zeroed memory: nothing may
// name std::cout, std::cerr, std::clog or std::cin directly (scripts/check_layering.sh).
// The matching destructors, which the units' exit handlers run, are wrapped too: passed on
// once the streams are built (the first flushes them, as before), dropped until then, so
// that the reference count they decrement is still 0 for a first use during the exit (a
// static destructor's hq::cerr()). Static initializers run on the main thread before main;
// hq_start_std_streams is thread-safe (a function-local static).
#include <ios>

extern "C" void __real__ZNSt8ios_base4InitC1Ev(void* self);
extern "C" void __real__ZNSt8ios_base4InitD1Ev(void* self);

// How many constructions were deferred (the static initializers') and whether the streams
// were built since: tests/cmd/std_streams_start_test.cpp, core/std_streams.cpp.
extern "C" {
int hq_std_stream_builds_deferred = 0;
bool hq_std_streams_built = false;  // written and read with __atomic builtins
}

extern "C" void __wrap__ZNSt8ios_base4InitC1Ev(void* /*self*/) { ++hq_std_stream_builds_deferred; }

extern "C" void __wrap__ZNSt8ios_base4InitD1Ev(void* self) {
  if (__atomic_load_n(&hq_std_streams_built, __ATOMIC_ACQUIRE)) __real__ZNSt8ios_base4InitD1Ev(self);
}

extern "C" void hq_start_std_streams() {
  static const bool built = [] {
    alignas(std::ios_base::Init) static unsigned char init[sizeof(std::ios_base::Init)];
    __real__ZNSt8ios_base4InitC1Ev(init);
    __atomic_store_n(&hq_std_streams_built, true, __ATOMIC_RELEASE);
    return true;
  }();
  (void)built;
}
