// Fuzz: time and size specs; formatting what parsed must parse back to the same value.
#include <cstdlib>
#include <string>

#include "core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto d = hq::parse_duration(text); d && *d > 0 && *d < 100000LL * 86400) {
    auto back = hq::parse_duration(hq::format_limit(*d));
    if (!back || *back != *d) std::abort();
  }
  (void)hq::parse_size_mib(text);
  (void)hq::format_elapsed(static_cast<hq::Duration>(size) * 977);
  return 0;
}
