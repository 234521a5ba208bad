#include "cmd/controller/http_util.hpp"

#include <algorithm>

#include "cmd/rest/v0043.hpp"

namespace hq::cmd {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// %XX decoded ('+' as a space when `plus`); false on a bad escape.
bool decode(std::string_view in, std::string& out, bool plus) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = hex(in[i + 1]), lo = hex(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += plus && in[i] == '+' ? ' ' : in[i];
    }
  }
  return true;
}

bool all_digits(const std::string& s, size_t most) {
  return !s.empty() && s.size() <= most && std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool parse_job_target(const std::string& text, uint64_t& id, std::string& task) {
  size_t us = text.find('_');
  std::string head = text.substr(0, us);
  if (!all_digits(head, 19)) return false;
  id = std::stoull(head);
  if (us == std::string::npos) return id > 0;
  std::string tail = text.substr(us + 1);
  if (!all_digits(tail, 9)) return false;
  task = std::to_string(id) + "_" + std::to_string(std::stoul(tail));
  return id > 0;
}

net::HttpResponse http_json(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

net::HttpResponse http_error(int status, std::string_view message) {
  int number = status == 401 ? slurm_errno::kAuthFailure : 0;  // SLURM_PROTOCOL_AUTHENTICATION_ERROR
  return http_json(status, rest_error_json({rest_error(status, number, std::string(message), std::string(message))}, RestMeta{}));
}

bool split_path(std::string_view path, std::vector<std::string>& out) {
  out.clear();
  if (path.empty() || path.front() != '/') return false;
  path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  while (!path.empty()) {
    size_t slash = std::min(path.find('/'), path.size());
    std::string seg;
    if (!decode(path.substr(0, slash), seg, false)) return false;
    if (seg.empty() || seg == "." || seg == ".." || seg.find('/') != std::string::npos || seg.find('\0') != std::string::npos)
      return false;
    out.push_back(std::move(seg));
    path.remove_prefix(slash == path.size() ? slash : slash + 1);
  }
  return true;
}

std::string query_value(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    size_t amp = std::min(query.find('&'), query.size());
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    std::string name, value;
    if (decode(pair.substr(0, eq), name, true) && name == key) {
      if (eq == std::string_view::npos || !decode(pair.substr(eq + 1), value, true)) return "";
      return value;
    }
    query.remove_prefix(amp == query.size() ? amp : amp + 1);
  }
  return "";
}

}  // namespace hq::cmd
