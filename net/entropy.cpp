#include "net/entropy.hpp"

#include <cerrno>
#include <mbedtls/entropy.h>
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

}  // namespace hq::net
