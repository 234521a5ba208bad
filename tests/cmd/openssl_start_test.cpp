// OpenSSL's CPU probe at first use, not at every start (cmd/openssl_start.cpp, CMakeLists.txt's
// hq_static_link): this test binary is linked as hq is, so the probe libcrypto calls from
// `.init` must have been skipped, and OpenSSL's own initialisation must still probe.
#include <doctest/doctest.h>

#include <openssl/crypto.h>

#include "../skip.hpp"

extern "C" __attribute__((weak)) int hq_openssl_probes_skipped;
extern "C" __attribute__((weak)) int hq_openssl_probes_made;

TEST_CASE("static executables: OpenSSL's CPU probe is skipped at start and made by OpenSSL's initialisation") {
  if (&hq_openssl_probes_skipped == nullptr) HQ_SKIP("a dynamic build (sanitizers or HQ_STATIC off): not linked by hq_static_link");
  CHECK(hq_openssl_probes_skipped == 1);  // `.init`'s, before main
  // What libpq does first (OPENSSL_init_ssl); a no-op if a test before this one did it.
  REQUIRE(OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, nullptr) == 1);
  CHECK(hq_openssl_probes_skipped == 1);
  CHECK(hq_openssl_probes_made >= 1);  // (what it found, OPENSSL_ia32cap_P, is local to libcrypto's objects)
}
