#include <ctime>
#include "cmd/client/output.hpp"

#include <google/protobuf/util/json_util.h>
#include <iostream>

namespace hq::cmd {

std::string field(const std::string& value, int width, bool right) {
  std::string v = value.size() > static_cast<size_t>(width) ? value.substr(0, static_cast<size_t>(width)) : value;
  std::string pad(static_cast<size_t>(width) - v.size(), ' ');
  return right ? pad + v : v + pad;
}

void print_json(const google::protobuf::Message& msg) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  auto st = google::protobuf::util::MessageToJsonString(msg, &out, opts);
  if (!st.ok()) {
    std::cerr << "error: cannot render JSON: " << st.ToString() << "\n";
    return;
  }
  std::cout << out;
}

int fail(const std::string& prog, const Status& status) {
  std::cerr << prog << ": error: " << status.message() << "\n";
  return 1;
}

std::string prog_name(const std::string& argv0) {
  return argv0 == "sbatch" || argv0 == "squeue" || argv0 == "scancel" || argv0 == "sinfo" || argv0 == "scontrol"
             ? argv0
             : "hq " + argv0;
}

}  // namespace hq::cmd

namespace hq::cmd {

int64_t local_utc_offset(int64_t now) {
  time_t t = static_cast<time_t>(now);
  struct tm tm {};
  localtime_r(&t, &tm);
  return tm.tm_gmtoff;
}

std::string local_time(int64_t t) {
  time_t tt = static_cast<time_t>(t);
  struct tm tm {};
  localtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace hq::cmd
