// Fuzz: token verification and keyring parsing refuse garbage cleanly; nothing forged passes.
#include <cstdlib>
#include <string>

#include "net/token.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  static const hq::net::Keyring ring =
      *hq::net::parse_keyring("1 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "k");
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (hq::net::verify_token(ring, bytes, 1000)) std::abort();  // a random input must never verify
  (void)hq::net::parse_keyring(bytes, "fuzz");
  return 0;
}
