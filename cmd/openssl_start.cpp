// OpenSSL's CPU probe on first use of OpenSSL, not at every start. libcrypto.a (linked in for
// libpq, the PostgreSQL accounting store) calls OPENSSL_cpuid_setup from `.init`: some eight
// `cpuid` instructions, each a VM exit (about 7 us apiece on the AMD/PVM VMs measured in
// docs/performance.md), in every hq process, though only the accounting store's PostgreSQL
// link ever uses OpenSSL. The static link (CMakeLists.txt, hq_static_link) wraps the symbol: the call made
// from `.init`, before any static initializer, does nothing; every later call, which
// OpenSSL makes itself from OPENSSL_init_crypto before any of its work, probes as before.
// Until then OPENSSL_ia32cap_P holds zeros, which OpenSSL reads as "the generic code": every
// entry point libpq and its libraries call initialises OpenSSL first (ERR_*, RAND_*, the EVP
// fetches); a low-level call that does not (SHA256(), AES_*) would run the generic code,
// correct and slower. Single-threaded: `.init` and the static
// initializers run on the main thread before main.
extern "C" void __real_OPENSSL_cpuid_setup();

namespace {
bool g_static_initializers_started = false;

// The first static initializer (priority 101 runs before all unprioritized ones).
__attribute__((constructor(101))) void note_static_initializers_started() { g_static_initializers_started = true; }
}  // namespace

// How many calls were not passed on (`.init`'s one) and how many were: tests/cmd/openssl_start_test.cpp.
extern "C" {
int hq_openssl_probes_skipped = 0;
int hq_openssl_probes_made = 0;
}

extern "C" void __wrap_OPENSSL_cpuid_setup() {
  if (!g_static_initializers_started) {
    ++hq_openssl_probes_skipped;
    return;
  }
  ++hq_openssl_probes_made;
  __real_OPENSSL_cpuid_setup();
}
