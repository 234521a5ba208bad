// SLUIDs: a job's cluster-wide unique, time-sortable id, as Slurm's (reference accounting.md
// §6): 64 bits of [12-bit cluster id][42-bit Unix milliseconds][10-bit sequence], written
// "s" + 13 Crockford base-32 characters, which sort as the ids do. A job gets one at submit
// and a new one at each requeue (its first is kept as OriginalSLUID). Pure.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hq {

inline constexpr uint32_t kSluidMaxCluster = 0xfff;

uint64_t make_sluid(uint32_t cluster, int64_t unix_ms, uint32_t seq);
// "s0" + ...: 14 characters; "" for 0 (no SLUID).
std::string sluid_text(uint64_t sluid);
// The text form in any case (Crockford's I/L read as 1, O as 0); nullopt when it is not one.
std::optional<uint64_t> parse_sluid(std::string_view text);
inline int64_t sluid_ms(uint64_t sluid) { return static_cast<int64_t>((sluid >> 10) & ((uint64_t{1} << 42) - 1)); }
inline uint32_t sluid_cluster(uint64_t sluid) { return static_cast<uint32_t>(sluid >> 52); }

// Hands out SLUIDs that only grow: within one millisecond the sequence counts up, and past
// 1,023 moves into the next millisecond; a clock that steps back is not followed.
class SluidClock {
 public:
  uint64_t next(uint32_t cluster, int64_t now_ms);
  // One already handed out (after a restart): later ones come after it.
  void observe(uint64_t sluid);

 private:
  int64_t last_ms_ = -1;
  uint32_t seq_ = 0;
};

}  // namespace hq
