// Status and Result<T>: errors as values for every layer of hq.
// Pure value types; safe to use from any thread.
#pragma once
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "core/std_streams.hpp"

namespace hq {

enum class Code { kOk, kInvalid, kNotFound, kDenied, kUnavailable, kIo, kInternal };

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }
  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Prefix the message with context ("config.toml:3: ...").
  Status with_context(const std::string& ctx) const {
    return is_ok() ? *this : Status(code_, ctx + ": " + message_);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status invalid(std::string m) { return {Code::kInvalid, std::move(m)}; }
inline Status not_found(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status denied(std::string m) { return {Code::kDenied, std::move(m)}; }
inline Status unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status io_error(std::string m) { return {Code::kIo, std::move(m)}; }
inline Status internal(std::string m) { return {Code::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result() : v_(Status(Code::kInternal, "empty result")) {}  // for async completion slots
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}   // NOLINT: implicit by design
  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }  // std::move(*r) moves, it does not copy
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }
  Status status() const { return is_ok() ? Status::ok() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

// HQ_CHECK guards invariants that only a bug can break; never environment input.
#define HQ_CHECK(cond)                                                                \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      ::hq::cerr() << "HQ_CHECK failed: " #cond " at " << __FILE__ << ":" << __LINE__ \
                   << std::endl;                                                      \
      std::abort();                                                                   \
    }                                                                                 \
  } while (0)

}  // namespace hq
