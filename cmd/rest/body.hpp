// Reading a v0.0.43 request body (cmd/rest/submit.cpp, node_update.cpp): the JSON parsed by
// protobuf's parser into a Struct, and its fields read with their types checked (a number
// may come plain or as Slurm's {"set", "infinite", "number"}), each key read noted so that
// the ones left over become warnings. The first error stops the reading. One thread.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/struct.pb.h>

#include "cmd/rest/v0043.hpp"

namespace hq::cmd::rest {

// `body` as a JSON object; false with `error` (400, "Failure during parsing") when it is not.
bool parse_object(std::string_view body, google::protobuf::Struct& out, RestError* error);

// A bad body's error: 400 with Slurm's ESLURM_REST_FAIL_PARSING and `description`.
RestError parse_error(std::string description);

// "a,b" from {"a", "b"}.
std::string joined(const std::vector<std::string>& items);

// --mail-type names between slurmrestd's enum (INVALID_DEPENDENCY, TIME=90%) and hq's
// (INVALID_DEPEND, TIME_LIMIT_90; core/mail.hpp).
std::string mail_type_to_hq(const std::string& rest_name);
std::string mail_type_to_rest(const std::string& hq_name);

class Fields {
 public:
  // `where`: the object's name in messages ("job").
  Fields(const google::protobuf::Struct& s, std::string where) : s_(s), where_(std::move(where)) {}

  // Whether the key is given: present, not null, not {"set": false}.
  bool has(std::string_view key) const;
  // Each reads the key when present (false only on a wrong type or value: error() says why).
  bool str(std::string_view key, std::string& out);
  bool boolean(std::string_view key, bool& out);
  // A whole number within [lo, hi], plain or as {"set", "infinite", "number"}; `infinite`
  // (when given) is set for {"infinite": true}, which is an error otherwise.
  bool integer(std::string_view key, int64_t& out, int64_t lo, int64_t hi, bool* infinite = nullptr);
  // A list of strings, or one string of comma-separated items.
  bool strings(std::string_view key, std::vector<std::string>& out);
  // An object (nullptr when absent; an error when not an object).
  const google::protobuf::Struct* object(std::string_view key);
  // An error for `key` found by the caller (false).
  bool fail_with(std::string_view key, std::string_view what) { return fail(key, what); }
  // A key read by other means.
  void note(std::string_view key) { read_.insert(std::string(key)); }

  const std::string& error() const { return error_; }
  // "Field job.x is not supported by hq: ignored" for each key not read.
  void add_unread(std::vector<std::string>& warnings) const;

 private:
  const google::protobuf::Value* find(std::string_view key);
  bool fail(std::string_view key, std::string_view what);
  const google::protobuf::Struct& s_;
  std::string where_;
  std::set<std::string, std::less<>> read_;
  std::string error_;
};

}  // namespace hq::cmd::rest
