// SLUIDs (see sluid.hpp).
#include "core/sluid.hpp"

#include <algorithm>

namespace hq {
namespace {

constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr int64_t kMsMask = (int64_t{1} << 42) - 1;

int crockford_value(char c) {
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  if (c == 'I' || c == 'L') return 1;
  if (c == 'O') return 0;
  for (int i = 0; i < 32; ++i)
    if (kCrockford[i] == c) return i;
  return -1;
}

}  // namespace

uint64_t make_sluid(uint32_t cluster, int64_t unix_ms, uint32_t seq) {
  return (uint64_t{cluster & kSluidMaxCluster} << 52) | (static_cast<uint64_t>(unix_ms & kMsMask) << 10) | (seq & 0x3ff);
}

std::string sluid_text(uint64_t sluid) {
  if (sluid == 0) return "";
  std::string out(14, '0');
  out[0] = 's';
  for (int i = 13; i >= 1; --i, sluid >>= 5) out[static_cast<size_t>(i)] = kCrockford[sluid & 31];
  return out;
}

std::optional<uint64_t> parse_sluid(std::string_view text) {
  if (text.size() != 14 || (text[0] != 's' && text[0] != 'S')) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 1; i < text.size(); ++i) {
    int d = crockford_value(text[i]);
    if (d < 0 || (i == 1 && d > 15)) return std::nullopt;  // 13 characters hold 65 bits: the first 4 of them
    v = (v << 5) | static_cast<uint64_t>(d);
  }
  if (v == 0) return std::nullopt;
  return v;
}

uint64_t SluidClock::next(uint32_t cluster, int64_t now_ms) {
  if (now_ms > last_ms_) {
    last_ms_ = now_ms;
    seq_ = 0;
  } else if (++seq_ > 0x3ff) {
    ++last_ms_;
    seq_ = 0;
  }
  return make_sluid(cluster, last_ms_, seq_);
}

void SluidClock::observe(uint64_t sluid) {
  int64_t ms = sluid_ms(sluid);
  uint32_t seq = static_cast<uint32_t>(sluid & 0x3ff);
  if (ms > last_ms_ || (ms == last_ms_ && seq > seq_)) {
    last_ms_ = ms;
    seq_ = seq;
  }
}

}  // namespace hq
