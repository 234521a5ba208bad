// Registering libprotobuf's own .proto files on first need (see proto_files.cpp).
// Threads: any.
#pragma once

namespace hq::cmd {

// Registers, once, every libprotobuf file whose start-up registration was deferred. Call it
// before anything that looks descriptors up by name or prints JSON (protobuf's json_util).
void register_protobuf_files();

}  // namespace hq::cmd
