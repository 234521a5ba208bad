// Small pieces of HTTP the controller's routes share (cmd/controller/http_api.cpp,
// rest_api.cpp, hq_api.cpp): JSON responses, a path split into decoded segments, a query's
// values. Pure; thread-safe.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "hq.pb.h"
#include "net/http_server.hpp"
#include "net/token.hpp"

namespace hq::cmd {

class Controller;

// Every page of a listing (REST has no paging): queue() asked again from the last id while
// it says there is more (defined in rest_api.cpp).
pb::QueueReply queue_all_pages(const Controller& c, pb::QueueRequest q, const net::Identity& who);

net::HttpResponse http_json(int status, std::string body);
// An error in slurmrestd's shape with `message` (401 carries Slurm's authentication errno).
net::HttpResponse http_error(int status, std::string_view message);
// "/slurm/v0.0.43/node/n%201/" -> {"slurm", "v0.0.43", "node", "n 1"} (a trailing '/' is
// allowed). False for a segment that is empty, "." or "..", holds a '/' or a NUL once
// decoded, or has a bad %-escape.
bool split_path(std::string_view path, std::vector<std::string>& out);
// A job id as a path gives it: "123", or an array task "123_4" (`task` then "123_4" with
// the numbers as they read: "0123_04" is "123_4"). False for anything else, or id 0.
bool parse_job_target(const std::string& text, uint64_t& id, std::string& task);
// The decoded value of `key` in "a=1&b=2" ("" when absent).
std::string query_value(std::string_view query, std::string_view key);

}  // namespace hq::cmd
