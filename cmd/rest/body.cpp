#include "cmd/rest/body.hpp"

#include <google/protobuf/util/json_util.h>

#include <cmath>

#include "core/units.hpp"

namespace hq::cmd::rest {

using google::protobuf::Struct;
using google::protobuf::Value;

RestError parse_error(std::string description) {
  return rest_error(400, slurm_errno::kRestFailParsing, "Failure during parsing", std::move(description));
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& x : items) out += (out.empty() ? "" : ",") + x;
  return out;
}

namespace {
constexpr std::pair<std::string_view, std::string_view> kMailNames[] = {  // slurmrestd, hq
    {"INVALID_DEPENDENCY", "INVALID_DEPEND"}, {"TIME=100%", "TIME_LIMIT"}, {"TIME=90%", "TIME_LIMIT_90"},
    {"TIME=80%", "TIME_LIMIT_80"}, {"TIME=50%", "TIME_LIMIT_50"}};
}  // namespace

std::string mail_type_to_hq(const std::string& rest_name) {
  for (const auto& [rest, hq] : kMailNames)
    if (rest_name == rest) return std::string(hq);
  return rest_name;
}

std::string mail_type_to_rest(const std::string& hq_name) {
  for (const auto& [rest, hq] : kMailNames)
    if (hq_name == hq) return std::string(rest);
  return hq_name;
}

bool parse_object(std::string_view body, Struct& out, RestError* error) {
  size_t first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || body[first] != '{') {
    *error = parse_error("the body is not a JSON object");
    return false;
  }
  google::protobuf::util::JsonParseOptions options;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(body), &out, options);
  if (!status.ok()) {
    *error = parse_error("malformed JSON: " + std::string(status.message()));
    return false;
  }
  return true;
}

bool Fields::has(std::string_view key) const {
  auto it = s_.fields().find(std::string(key));
  if (it == s_.fields().end() || it->second.kind_case() == Value::kNullValue) return false;
  if (it->second.kind_case() != Value::kStructValue) return true;
  const auto& f = it->second.struct_value().fields();  // {"set": false, ...}: not given
  auto set = f.find("set");
  return set == f.end() || set->second.bool_value() || (f.count("infinite") && f.at("infinite").bool_value());
}

const Value* Fields::find(std::string_view key) {
  auto it = s_.fields().find(std::string(key));
  if (it == s_.fields().end()) return nullptr;
  read_.insert(std::string(key));
  return it->second.kind_case() == Value::kNullValue ? nullptr : &it->second;
}

bool Fields::fail(std::string_view key, std::string_view what) {
  if (error_.empty()) error_ = where_ + "." + std::string(key) + ": " + std::string(what);
  return false;
}

bool Fields::str(std::string_view key, std::string& out) {
  const Value* v = find(key);
  if (!v) return true;
  if (v->kind_case() != Value::kStringValue) return fail(key, "expected a string");
  out = v->string_value();
  return true;
}

bool Fields::boolean(std::string_view key, bool& out) {
  const Value* v = find(key);
  if (!v) return true;
  if (v->kind_case() != Value::kBoolValue) return fail(key, "expected true or false");
  out = v->bool_value();
  return true;
}

bool Fields::integer(std::string_view key, int64_t& out, int64_t lo, int64_t hi, bool* infinite) {
  const Value* v = find(key);
  if (!v) return true;
  if (infinite) *infinite = false;
  double number = 0;
  if (v->kind_case() == Value::kNumberValue) {
    number = v->number_value();
  } else if (v->kind_case() == Value::kStructValue) {  // {"set", "infinite", "number"}
    const auto& f = v->struct_value().fields();
    auto flag = [&](const char* k) { auto it = f.find(k); return it != f.end() && it->second.bool_value(); };
    if (flag("infinite")) {
      if (!infinite) return fail(key, "may not be infinite");
      *infinite = true;
      return true;
    }
    auto n = f.find("number");
    if (f.count("set") && !flag("set")) return true;  // {"set": false}: as if absent
    if (n == f.end() || n->second.kind_case() != Value::kNumberValue)
      return fail(key, "expected a number or {\"set\", \"infinite\", \"number\"}");
    number = n->second.number_value();
  } else {
    return fail(key, "expected a number");
  }
  if (std::floor(number) != number || number < static_cast<double>(lo) || number > static_cast<double>(hi))
    return fail(key, "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  out = static_cast<int64_t>(number);
  return true;
}

bool Fields::strings(std::string_view key, std::vector<std::string>& out) {
  const Value* v = find(key);
  if (!v) return true;
  out.clear();
  if (v->kind_case() == Value::kStringValue) {
    const std::string& s = v->string_value();
    out = split_list(s);
    return true;
  }
  if (v->kind_case() != Value::kListValue) return fail(key, "expected a list of strings");
  for (const Value& item : v->list_value().values()) {
    if (item.kind_case() != Value::kStringValue) return fail(key, "expected a list of strings");
    out.push_back(item.string_value());
  }
  return true;
}

const Struct* Fields::object(std::string_view key) {
  const Value* v = find(key);
  if (!v) return nullptr;
  if (v->kind_case() != Value::kStructValue) {
    fail(key, "expected an object");
    return nullptr;
  }
  return &v->struct_value();
}

void Fields::add_unread(std::vector<std::string>& warnings) const {
  for (const auto& [key, value] : s_.fields())
    if (!read_.count(key)) warnings.push_back("Field " + where_ + "." + key + " is not supported by hq: ignored");
}

}  // namespace hq::cmd::rest
