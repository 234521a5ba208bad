// Length-prefixed frames: a 4-byte big-endian payload length, then the payload.
// FrameDecoder is pure byte handling (no I/O) so it can be fuzzed directly.
// Not thread-safe: one decoder per connection.
//
// A long frame (64 KiB or more) gets a buffer of its own for its whole length at once, and
// is handed over in it: no buffer doubled as it grows, no copy to cut it out of what came
// with it. A decoder that trusts lengths (a client reading the answers it asked for) makes
// that buffer when the header comes, sized, and its bytes can be read straight into it
// (direct_space, filled). One that does not (a server) only reserves it, once 64 KiB of
// the frame have come: memory is written, and so committed, only as bytes come.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.hpp"

namespace hq::net {

constexpr uint32_t kMaxFrameBytes = 16 * 1024 * 1024;

std::string encode_frame(std::string_view payload);
void append_frame(std::string& out, std::string_view payload);
// The length alone (the caller appends the `n` bytes of payload itself).
void append_frame_header(std::string& out, uint32_t n);

class FrameDecoder {
 public:
  enum class Lengths { kWaitFor64KiB, kTrusted };
  explicit FrameDecoder(uint32_t max_frame = kMaxFrameBytes, Lengths lengths = Lengths::kWaitFor64KiB)
      : max_(max_frame), trusted_(lengths == Lengths::kTrusted) {}
  void feed(const char* data, size_t n);
  // Next complete payload; nullopt if more bytes are needed; error if the frame is too big.
  Result<std::optional<std::string>> next();
  // Bytes held that no frame handed over has taken (a long frame's header not counted).
  size_t buffered() const { return buf_.size() - pos_ + long_have_; }
  // Where the rest of the long frame under way goes, for a decoder that trusts lengths
  // (empty when none is under way or all of it has come): read into it, then say how many
  // bytes came with filled().
  std::pair<char*, size_t> direct_space();
  void filled(size_t n);
  // Called with a long frame's length before its buffer is reserved (squeue maps the heap
  // its reply will need in one go: cmd/process's prefault_heap_for). Process-wide: every
  // decoder of the process calls it, on its own thread.
  using LongFrameHook = void (*)(size_t frame_bytes);
  static void on_long_frame(LongFrameHook hook) { long_frame_hook_.store(hook, std::memory_order_relaxed); }

 private:
  void start_long_frame(uint32_t n);

  std::string buf_;
  size_t pos_ = 0;
  uint32_t max_;
  bool trusted_;
  bool in_long_ = false;  // long_ holds the frame under way, long_have_ of its bytes
  std::string long_;
  size_t long_size_ = 0, long_have_ = 0;
  static inline std::atomic<LongFrameHook> long_frame_hook_{nullptr};
};

}  // namespace hq::net
