#include "net/entropy.hpp"

#include <cerrno>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <sys/random.h>

namespace hq::net {

int kernel_entropy(void*, unsigned char* out, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = getrandom(out + done, len - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  return kernel_entropy(nullptr, reinterpret_cast<unsigned char*>(out.data()), n) == 0 ? out : std::string();
}

std::string mbed_error(int rc) {
  char buf[160];
  mbedtls_strerror(rc, buf, sizeof buf);
  return buf;
}

}  // namespace hq::net
