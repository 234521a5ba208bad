#include "cmd/client/json_stream.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "cmd/client/slurm_tree.hpp"

namespace hq::cmd {

std::string json_real(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string text(buf);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

void JsonStream::start(std::string_view key) {
  if (!open_.empty()) {
    if (compact_) {
      if (open_.back().has_member) out_ += ',';
    } else {
      out_ += open_.back().has_member ? ",\n" : "\n";
      out_.append(open_.size() * 2, ' ');
    }
    open_.back().has_member = true;
  }
  if (!key.empty()) {
    put_string(out_, key);
    out_ += compact_ ? ":" : ": ";
  }
}

JsonStream& JsonStream::open(std::string_view key, char opener, char closer) {
  start(key);
  out_ += opener;
  open_.push_back({closer});
  return *this;
}

JsonStream& JsonStream::object(std::string_view key) { return open(key, '{', '}'); }
JsonStream& JsonStream::array(std::string_view key) { return open(key, '[', ']'); }

JsonStream& JsonStream::end() {
  if (open_.empty()) return *this;
  char closer = open_.back().closer;
  open_.pop_back();
  if (!compact_) {
    out_ += '\n';
    out_.append(open_.size() * 2, ' ');
  }
  out_ += closer;
  return *this;
}

JsonStream& JsonStream::str(std::string_view key, std::string_view v) {
  start(key);
  put_string(out_, v);
  return *this;
}

JsonStream& JsonStream::integer(std::string_view key, int64_t v) {
  start(key);
  out_ += std::to_string(v);
  return *this;
}

JsonStream& JsonStream::real(std::string_view key, double v) {
  start(key);
  out_ += json_real(v);
  return *this;
}

JsonStream& JsonStream::boolean(std::string_view key, bool v) {
  start(key);
  out_ += v ? "true" : "false";
  return *this;
}

}  // namespace hq::cmd
