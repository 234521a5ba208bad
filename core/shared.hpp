// Shared<T>: an immutable value that copies share (a job's script and environment, which
// array tasks and repeated submissions have in common); SharedPool: equal values made one.
// Values never change once made. Not thread-safe beyond std::shared_ptr's own counting.
#pragma once
#include <concepts>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hq {

template <typename T>
class Shared {
 public:
  Shared() = default;
  Shared(T value) : p_(std::make_shared<const T>(std::move(value))) {}
  template <typename U>
    requires(std::constructible_from<T, U &&> && !std::same_as<std::remove_cvref_t<U>, Shared> &&
             !std::same_as<std::remove_cvref_t<U>, T>)
  Shared(U&& u) : Shared(T(std::forward<U>(u))) {}
  template <typename V = T>  // a list of elements: {"A=1", "B=2"}
  Shared(std::initializer_list<typename V::value_type> list) : Shared(T(list)) {}

  const T& operator*() const { return p_ ? *p_ : blank(); }
  const T* operator->() const { return &**this; }
  bool operator==(const Shared& o) const { return p_ == o.p_ || **this == *o; }
  bool same_copy(const Shared& o) const { return p_ == o.p_; }
  const void* identity() const { return p_.get(); }  // equal for copies of one value

 private:
  template <typename, typename>
  friend class SharedPool;
  explicit Shared(std::shared_ptr<const T> p) : p_(std::move(p)) {}
  static const T& blank() {
    static const T e{};
    return e;
  }
  std::shared_ptr<const T> p_;
};

struct TextHash {
  size_t operator()(const std::string& s) const { return std::hash<std::string_view>{}(s); }
  size_t operator()(const std::vector<std::string>& v) const {
    size_t h = v.size();
    for (const auto& s : v) h = h * 1000003u ^ std::hash<std::string_view>{}(s);
    return h;
  }
};

template <typename T, typename Hash = TextHash>
class SharedPool {
 public:
  // The pool's copy of `value`'s content (it becomes the pool's copy if there is none).
  Shared<T> intern(const Shared<T>& value) {
    // The copy returned last time, again (array tasks, a restored snapshot's jobs): no
    // hashing. Sharing its owner, `value` keeps it alive, so it is still the pool's.
    if (!value.p_ || (!last_.owner_before(value.p_) && !value.p_.owner_before(last_))) return value;
    size_t hash = Hash{}(*value);
    auto [first, end] = entries_.equal_range(hash);
    for (auto it = first; it != end; ++it)
      if (auto held = it->second.lock(); held && (held == value.p_ || *held == *value)) return remember(std::move(held));
    entries_.emplace(hash, value.p_);
    return remember(value.p_);
  }
  // Drops the entries of values no job holds any more.
  void sweep() {
    std::erase_if(entries_, [](const auto& e) { return e.second.expired(); });
  }
  size_t size() const { return entries_.size(); }
  void reserve(size_t values) { entries_.reserve(values); }

 private:
  Shared<T> remember(std::shared_ptr<const T> held) {
    last_ = held;
    return Shared<T>(std::move(held));
  }
  std::unordered_multimap<size_t, std::weak_ptr<const T>> entries_;
  std::weak_ptr<const T> last_;
};

}  // namespace hq
