// Text: an owned string in 8 bytes, for the records kept per job, whose many text fields are
// mostly empty or short (a std::string is 32 bytes even then): empty, nothing more; up to 6
// bytes, in place; longer, one heap block. Reads go through std::string_view; a value, copied
// deeply like std::string, and like std::string's short form a view of a short Text lasts only
// while the Text stays where it is. Not thread-safe beyond what a value is.
#pragma once
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace hq {

class Text {
 public:
  Text() = default;
  Text(std::string_view s) { assign(s); }
  Text(const std::string& s) { assign(s); }
  Text(const char* s) { assign(std::string_view(s)); }
  Text(const Text& o) { assign(o.view()); }
  Text(Text&& o) noexcept { take(o); }
  ~Text() { release(); }
  Text& operator=(const Text& o);
  Text& operator=(Text&& o) noexcept;
  Text& operator=(std::string_view s);
  Text& operator=(const std::string& s) { return *this = std::string_view(s); }
  Text& operator=(const char* s) { return *this = std::string_view(s); }

  bool empty() const { return word() == 0; }
  // Equality with another Text, its 8 bytes compared first: a short text is all in them,
  // and equal bytes are an equal text.
  bool equals(const Text& o) const { return word() == o.word() || view() == o.view(); }
  size_t size() const { return is_inline() ? raw_[0] >> 1 : heap_size(); }
  const char* data() const {
    if (is_inline()) return reinterpret_cast<const char*>(raw_ + 1);
    return empty() ? "" : block() + sizeof(Header);
  }
  const char* c_str() const { return data(); }  // NUL-terminated
  std::string_view view() const { return {data(), size()}; }
  std::string str() const { return std::string(view()); }
  operator std::string_view() const { return view(); }
  operator std::string() const { return str(); }
  void clear() { release(); }
  size_t find(std::string_view s, size_t pos = 0) const { return view().find(s, pos); }
  size_t find(char c, size_t pos = 0) const { return view().find(c, pos); }
  size_t find_first_of(std::string_view s, size_t pos = 0) const { return view().find_first_of(s, pos); }
  bool starts_with(std::string_view s) const { return view().starts_with(s); }
  bool ends_with(std::string_view s) const { return view().ends_with(s); }
  std::string substr(size_t pos, size_t n = std::string::npos) const { return str().substr(pos, n); }
  char operator[](size_t i) const { return data()[i]; }

  friend bool operator==(const Text& a, std::string_view b) { return a.view() == b; }
  friend std::strong_ordering operator<=>(const Text& a, std::string_view b) { return a.view().compare(b) <=> 0; }
  friend std::ostream& operator<<(std::ostream& os, const Text& t);
  friend std::string operator+(std::string a, const Text& b) { return a.append(b.view()); }
  friend std::string operator+(const Text& a, std::string_view b) { return a.str().append(b); }
  friend std::string operator+(const Text& a, const std::string& b) { return a.str().append(b); }
  friend std::string operator+(const Text& a, const char* b) { return a.str().append(b); }
  friend std::string operator+(const char* a, const Text& b) { return std::string(a).append(b.view()); }

 private:
  static_assert(std::endian::native == std::endian::little && sizeof(char*) == 8);
  using Header = uint32_t;  // a heap block's size
  static constexpr size_t kInline = 6;  // the longest text kept in place (a NUL after it)
  // All zero: empty. raw_[0] odd: in place, raw_[0] = 2 x size + 1, the bytes from raw_[1],
  // then a NUL. Else the address of a heap block (its Header, the bytes, a NUL): malloc's
  // alignment leaves its lowest bit, raw_[0]'s, zero.
  alignas(8) unsigned char raw_[8] = {};
  uint64_t word() const { uint64_t w; std::memcpy(&w, raw_, sizeof w); return w; }
  bool is_inline() const { return raw_[0] & 1; }
  char* block() const { return reinterpret_cast<char*>(static_cast<uintptr_t>(word())); }
  size_t heap_size() const;
  void take(Text& o) {
    std::memcpy(raw_, o.raw_, sizeof raw_);
    std::memset(o.raw_, 0, sizeof o.raw_);
  }
  void assign(std::string_view s);
  void release();
};

}  // namespace hq

template <>
struct std::hash<hq::Text> {
  size_t operator()(const hq::Text& t) const { return std::hash<std::string_view>{}(t.view()); }
};
