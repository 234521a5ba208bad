// Fuzz: hostlist expansion never crashes, and compress(expand(x)) expands back to the same list.
#include <cstdlib>
#include <string>

#include "core/hostlist.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string expr(reinterpret_cast<const char*>(data), size);
  auto hosts = hq::expand_hostlist(expr);
  if (!hosts || hosts->size() > 5000) return 0;
  for (auto order : {hq::HostlistOrder::kAsGiven, hq::HostlistOrder::kSorted, hq::HostlistOrder::kSortedUnique}) {
    std::string ranged = hq::compress_hostlist(*hosts, order);
    auto again = hq::expand_hostlist(ranged);
    if (!again) std::abort();
    if (order == hq::HostlistOrder::kAsGiven && *again != *hosts) std::abort();
    if (order != hq::HostlistOrder::kAsGiven && again->size() > hosts->size()) std::abort();
  }
  return 0;
}
