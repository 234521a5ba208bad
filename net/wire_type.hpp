// Protocol Buffers' wire types and field tags, for the few places that read or write the
// wire format by hand (net/brief_wire.cpp, the snapshot reader in net/convert.cpp). Pure.
#pragma once
#include <cstdint>

namespace hq::net {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

constexpr uint32_t field_tag(uint32_t field, WireType type) { return field << 3 | type; }

}  // namespace hq::net
