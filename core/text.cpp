// Text's storage: in place up to 6 bytes, else one heap block of the size, the bytes and a NUL.
#include "core/text.hpp"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <ostream>

namespace hq {

void Text::assign(std::string_view s) {
  std::memset(raw_, 0, sizeof raw_);
  if (s.empty()) return;
  if (s.size() <= kInline) {
    raw_[0] = static_cast<unsigned char>(s.size() * 2 + 1);
    std::memcpy(raw_ + 1, s.data(), s.size());
    return;
  }
  if (s.size() > std::numeric_limits<Header>::max() - sizeof(Header) - 1) throw std::bad_alloc();
  auto* p = static_cast<char*>(std::malloc(sizeof(Header) + s.size() + 1));
  if (!p) throw std::bad_alloc();
  Header size = static_cast<Header>(s.size());
  std::memcpy(p, &size, sizeof size);
  std::memcpy(p + sizeof(Header), s.data(), s.size());
  p[sizeof(Header) + s.size()] = '\0';
  auto address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  std::memcpy(raw_, &address, sizeof address);
}

size_t Text::heap_size() const {
  Header size = 0;
  if (!empty()) std::memcpy(&size, block(), sizeof size);
  return size;
}

void Text::release() {
  if (!is_inline()) std::free(block());
  std::memset(raw_, 0, sizeof raw_);
}

Text& Text::operator=(const Text& o) {
  if (this != &o) *this = o.view();
  return *this;
}

Text& Text::operator=(Text&& o) noexcept {
  if (this != &o) {
    release();
    take(o);
  }
  return *this;
}

Text& Text::operator=(std::string_view s) {
  Text made(s);  // made before the old value goes: s may be a view of it
  release();
  take(made);
  return *this;
}

std::ostream& operator<<(std::ostream& os, const Text& t) { return os << t.view(); }

}  // namespace hq
