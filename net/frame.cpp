#include "net/frame.hpp"

#include <algorithm>

namespace hq::net {

void append_frame_header(std::string& out, uint32_t n) {
  char hdr[4] = {static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                 static_cast<char>(n)};
  out.append(hdr, 4);
}

void append_frame(std::string& out, std::string_view payload) {
  append_frame_header(out, static_cast<uint32_t>(payload.size()));
  out.append(payload);
}

std::string encode_frame(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 4);
  append_frame(out, payload);
  return out;
}

namespace {
constexpr size_t kLongFrame = 65536;
}

void FrameDecoder::feed(const char* data, size_t n) {
  if (in_long_) {
    size_t take = std::min(n, long_size_ - long_have_);
    if (trusted_) long_.replace(long_have_, take, data, take);
    else long_.append(data, take);
    long_have_ += take;
    data += take;
    n -= take;
  }
  buf_.append(data, n);
}

std::pair<char*, size_t> FrameDecoder::direct_space() {
  if (!in_long_ || !trusted_ || long_have_ == long_size_) return {nullptr, 0};
  return {long_.data() + long_have_, long_size_ - long_have_};
}

void FrameDecoder::filled(size_t n) {
  HQ_CHECK(in_long_ && trusted_ && n <= long_size_ - long_have_);
  long_have_ += n;
}

// The frame of `n` bytes whose header is at pos_ moves into a buffer of its own with what
// has come of it (all that is buffered: the frame is not whole yet). A trusted length is
// sized at once (its bytes are then read into it); an untrusted one only reserved, so that
// memory is written, and so committed, only as bytes come.
void FrameDecoder::start_long_frame(uint32_t n) {
  if (LongFrameHook hook = long_frame_hook_.load(std::memory_order_relaxed)) hook(n);
  long_size_ = n;
  long_have_ = buf_.size() - pos_ - 4;
  if (trusted_) {
    long_.resize(n);
    buf_.copy(long_.data(), long_have_, pos_ + 4);
  } else {
    long_.reserve(n);
    long_.assign(buf_, pos_ + 4, long_have_);
  }
  buf_.clear();
  pos_ = 0;
  in_long_ = true;
}

Result<std::optional<std::string>> FrameDecoder::next() {
  if (in_long_) {
    if (long_have_ < long_size_) return std::optional<std::string>();
    in_long_ = false;
    long_have_ = long_size_ = 0;
    std::string payload = std::move(long_);
    long_ = std::string();
    return std::optional<std::string>(std::move(payload));
  }
  if (buf_.size() - pos_ < 4) return std::optional<std::string>();
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(buf_[pos_ + i])); };
  uint32_t n = b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
  if (n > max_)
    return invalid("frame of " + std::to_string(n) + " bytes exceeds the limit of " + std::to_string(max_));
  if (buf_.size() - pos_ - 4 < n) {
    if (n >= kLongFrame && (trusted_ || buf_.size() - pos_ >= kLongFrame)) start_long_frame(n);
    return std::optional<std::string>();
  }
  if (pos_ == 0 && buf_.size() == 4 + size_t{n}) {  // the whole buffer: handed over (its header cut off in place)
    std::string payload = std::move(buf_);
    buf_ = std::string();
    payload.erase(0, 4);
    return std::optional<std::string>(std::move(payload));
  }
  std::string payload = buf_.substr(pos_ + 4, n);
  pos_ += 4 + n;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ > 65536 && pos_ * 2 > buf_.size()) {  // compact now and then
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  return std::optional<std::string>(std::move(payload));
}

}  // namespace hq::net
