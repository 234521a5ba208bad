// Shared output helpers for client commands: Slurm-style fixed-width fields, JSON
// (the proto3 JSON mapping) and uniform error lines. Single-threaded CLI use.
#pragma once
#include <google/protobuf/message_lite.h>
#include <string>

#include "core/status.hpp"

namespace hq::cmd {

// A field like Slurm's "%.8j": truncated to `width`, right-aligned when `right`.
std::string field(const std::string& value, int width, bool right = true);
// Prints `msg` in the proto3 JSON mapping; false (with a line on stderr) when it cannot.
[[nodiscard]] bool print_json(const google::protobuf::MessageLite& msg);
// Prints "<prog>: error: <message>" to stderr and returns 1.
int fail(const std::string& prog, const Status& status);
std::string prog_name(const std::string& argv0);
// Local wall-clock time "YYYY-MM-DDTHH:MM:SS" (Slurm prints local times), and the local
// offset from UTC in seconds at `now`.
std::string local_time(int64_t t);
int64_t local_utc_offset(int64_t now);

}  // namespace hq::cmd
