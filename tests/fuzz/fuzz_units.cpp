// Fuzz: time and size specs, CPU lists, gres lists, NVIDIA information files, DNS SRV
// answers and partition node expressions; formatting what parsed must parse back to the
// same value.
#include <cstdlib>
#include <string>

#include "core/config.hpp"
#include "core/dns.hpp"
#include "core/hardware.hpp"
#include "core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if (auto d = hq::parse_duration(text); d && *d > 0 && *d < 100000LL * 86400) {
    auto back = hq::parse_duration(hq::format_limit(*d));
    if (!back || *back != *d) std::abort();
  }
  (void)hq::parse_size_mib(text);
  if (size < 64) {  // ranges expand: keep them small
    if (auto cpus = hq::parse_cpulist(text); cpus && cpus->size() < 100000) {
      auto back = hq::parse_cpulist(hq::format_cpulist(*cpus));
      if (!back || *back != *cpus) std::abort();
    }
  }
  (void)hq::parse_gres(text);
  (void)hq::parse_nvidia_information(text);
  if (size >= 2) (void)hq::parse_srv_response(text, static_cast<uint16_t>((data[0] << 8) | data[1]));
  if (size < 64) {
    hq::PartitionConfig p;
    (void)hq::parse_partition_nodes(text, p);
  }
  (void)hq::build_srv_query(7, text);
  (void)hq::format_elapsed(static_cast<hq::Duration>(size) * 977);
  return 0;
}
