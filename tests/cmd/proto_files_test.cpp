// libprotobuf's own files, registered on first need (cmd/proto_files.cpp): once
// register_protobuf_files() has run, the generated pool knows every well-known type and
// descriptor.proto, and JSON of them prints.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <doctest/doctest.h>

#include "cmd/proto_files.hpp"

TEST_CASE("protobuf's own files: registered on first need, every well-known type found by name, JSON prints") {
  hq::cmd::register_protobuf_files();
  hq::cmd::register_protobuf_files();  // once only, however often it is called
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  // The files hq links: struct (sacct/squeue --json), descriptor (hq's own --json), and
  // what protobuf's JSON code needs (any, type, wrappers, source_context).
  for (const char* name : {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.Any", "google.protobuf.Type",
                           "google.protobuf.Int64Value", "google.protobuf.SourceContext", "google.protobuf.FileDescriptorProto"}) {
    CAPTURE(std::string(name));
    CHECK(pool->FindMessageTypeByName(name) != nullptr);
  }
  google::protobuf::Struct s;
  (*s.mutable_fields())["a"].set_number_value(2);
  std::string out;
  REQUIRE(google::protobuf::util::MessageToJsonString(s, &out).ok());
  CHECK(out == "{\"a\":2}");
}
