// Test helper: a JSON text (a REST reply, a --json listing) as a google.protobuf.Struct,
// for checks of its shape; the test fails at once when the text is not JSON.
#pragma once
#include <doctest/doctest.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <string>

namespace hq::test {

inline google::protobuf::Struct parsed_json(const std::string& json) {
  google::protobuf::Struct s;
  INFO(json);
  REQUIRE(google::protobuf::util::JsonStringToMessage(json, &s).ok());
  return s;
}

}  // namespace hq::test
