// Length-prefixed frames: a 4-byte big-endian payload length, then the payload.
// FrameDecoder is pure byte handling (no I/O) so it can be fuzzed directly.
// Not thread-safe: one decoder per connection.
#pragma once
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.hpp"

namespace hq::net {

constexpr uint32_t kMaxFrameBytes = 16 * 1024 * 1024;

std::string encode_frame(std::string_view payload);
void append_frame(std::string& out, std::string_view payload);
// The length alone (the caller appends the `n` bytes of payload itself).
void append_frame_header(std::string& out, uint32_t n);

class FrameDecoder {
 public:
  explicit FrameDecoder(uint32_t max_frame = kMaxFrameBytes) : max_(max_frame) {}
  void feed(const char* data, size_t n) { buf_.append(data, n); }
  // Next complete payload; nullopt if more bytes are needed; error if the frame is too big.
  Result<std::optional<std::string>> next();
  size_t buffered() const { return buf_.size() - pos_; }
  // Called with a long frame's length before its buffer is reserved (squeue maps the heap
  // its reply will need in one go: cmd/process's prefault_heap_for). Process-wide: every
  // decoder of the process calls it, on its own thread.
  using LongFrameHook = void (*)(size_t frame_bytes);
  static void on_long_frame(LongFrameHook hook) { long_frame_hook_.store(hook, std::memory_order_relaxed); }

 private:
  std::string buf_;
  size_t pos_ = 0;
  uint32_t max_;
  static inline std::atomic<LongFrameHook> long_frame_hook_{nullptr};
};

}  // namespace hq::net
