// A small client's view of slurmrestd v0.0.43 replies: each field of a JSON document
// checked against the shapes of Slurm's published OpenAPI spec
// (tests/fixtures/slurmrestd/slurmrestd_v0043_shapes.txt, generated from it): a field the
// schema does not have, a value of another type (a generated client fails to decode it), a
// value outside an enum, a required field missing, or a key given twice in one object are
// each one error.
#pragma once
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fixture_file.hpp"

namespace hq::test {

struct ShapeField {
  std::string type;  // string, integer, number, boolean, object, array
  bool required = false;
  std::set<std::string> enums;  // empty: any
};
using Shape = std::map<std::string, ShapeField>;  // by path ("jobs[].job_state[]")

// The shape of `schema` ("openapi_job_info_resp"); empty when the fixture lacks it.
inline Shape load_shape(const std::string& schema) {
  std::istringstream in(slurp_file(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurmrestd/slurmrestd_v0043_shapes.txt"));
  Shape out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string name, path, type, extra;
    words >> name >> path >> type;
    if (name != schema) continue;
    ShapeField f{type};
    while (words >> extra) {
      if (extra == "required") f.required = true;
      else if (extra.rfind("enum:", 0) == 0) {
        std::istringstream items(extra.substr(5));
        for (std::string item; std::getline(items, item, ',');) f.enums.insert(item);
      }
    }
    out[path] = f;
  }
  return out;
}

namespace detail {

inline std::string kind_of(const google::protobuf::Value& v) {
  using V = google::protobuf::Value;
  switch (v.kind_case()) {
    case V::kStringValue: return "string";
    case V::kBoolValue: return "boolean";
    case V::kNumberValue: return std::floor(v.number_value()) == v.number_value() ? "integer" : "number";
    case V::kStructValue: return "object";
    case V::kListValue: return "array";
    default: return "null";
  }
}

inline void check(const Shape& shape, const std::string& path, const google::protobuf::Value& v,
                  std::vector<std::string>& errors) {
  std::string kind = kind_of(v);
  ShapeField f{"object"};  // the document itself
  if (!path.empty()) {
    auto it = shape.find(path);
    if (it == shape.end()) return errors.push_back(path + ": not in the v0.0.43 schema");
    f = it->second;
  }
  bool ok = kind == f.type || (f.type == "number" && kind == "integer");
  if (!ok) return errors.push_back(path + ": " + kind + " where the schema has " + f.type);
  if (!f.enums.empty() && kind == "string" && !f.enums.count(v.string_value()))
    errors.push_back(path + ": \"" + v.string_value() + "\" is not one of the schema's values");
  if (kind == "array")
    for (const auto& item : v.list_value().values()) check(shape, path + "[]", item, errors);
  if (kind != "object") return;
  const auto& fields = v.struct_value().fields();
  for (const auto& [key, child] : fields) check(shape, path.empty() ? key : path + "." + key, child, errors);
  std::string prefix = path.empty() ? "" : path + ".";
  for (const auto& [p, field] : shape)
    if (field.required && p.rfind(prefix, 0) == 0 && p.find_first_of(".[", prefix.size()) == std::string::npos &&
        !fields.count(p.substr(prefix.size())))
      errors.push_back(p + ": required, missing");
}

// Keys given twice in one object of `json` (a map-based parser keeps one and hides them).
inline std::vector<std::string> duplicate_keys(const std::string& json) {
  struct Level {
    bool object;
    std::set<std::string> keys;
  };
  std::vector<Level> stack;
  std::vector<std::string> out;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '{' || c == '[') stack.push_back({c == '{', {}});
    else if ((c == '}' || c == ']') && !stack.empty()) stack.pop_back();
    else if (c == '"') {
      size_t start = ++i;
      while (i < json.size() && json[i] != '"') i += json[i] == '\\' ? 2 : 1;
      std::string text = json.substr(start, i - start);
      size_t next = json.find_first_not_of(" \t\r\n", i + 1);
      bool key = next != std::string::npos && json[next] == ':';
      if (key && !stack.empty() && stack.back().object && !stack.back().keys.insert(text).second) out.push_back(text);
    }
  }
  return out;
}

}  // namespace detail

// What is wrong with `json` as a `schema` document; empty when a client would take it.
inline std::vector<std::string> shape_errors(const std::string& schema, const std::string& json) {
  Shape shape = load_shape(schema);
  if (shape.empty()) return {"no shape for " + schema + " in the fixture"};
  google::protobuf::Value doc;
  if (!google::protobuf::util::JsonStringToMessage(json, &doc).ok()) return {"not JSON: " + json.substr(0, 200)};
  std::vector<std::string> errors;
  detail::check(shape, "", doc, errors);
  for (const auto& key : detail::duplicate_keys(json)) errors.push_back(key + ": given twice in one object");
  return errors;
}

}  // namespace hq::test
