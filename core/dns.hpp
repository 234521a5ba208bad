// The little of DNS that controller discovery needs: an SRV query for
// `_hq._tcp.<domain>` and the parse of its answer (RFC 1035 messages, RFC 2782 records).
// Pure byte-level code, fuzzed; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

struct SrvRecord {
  uint16_t priority = 0, weight = 0, port = 0;
  std::string target;  // without the trailing dot
};

// A standard query (recursion desired) for `name`'s SRV records; an error for a name that
// is not a valid DNS name (labels 1-63 bytes, at most 253 in all).
Result<std::string> build_srv_query(uint16_t id, std::string_view name);
// The SRV answers of a response to query `id`, lowest priority first, then highest weight.
// An error names what is wrong (truncated, another id, a DNS error code, bad pointers).
Result<std::vector<SrvRecord>> parse_srv_response(std::string_view msg, uint16_t id);

}  // namespace hq
