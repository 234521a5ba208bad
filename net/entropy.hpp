// Entropy for mbedTLS DRBGs straight from the kernel (getrandom), avoiding
// mbedtls_entropy_init(), whose HAVEGE source costs ~1M instructions per process; and
// mbedTLS's error codes as text.
#pragma once
#include <cstddef>
#include <string>

namespace hq::net {

// mbedtls_ctr_drbg_seed-compatible entropy callback; `ctx` is unused.
int kernel_entropy(void* ctx, unsigned char* out, size_t len);
// `n` random bytes from the kernel (getrandom); empty if it fails.
std::string random_bytes(size_t n);
// mbedTLS's text for error code `rc` (mbedtls_strerror).
std::string mbed_error(int rc);

}  // namespace hq::net
