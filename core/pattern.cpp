#include "core/pattern.hpp"

#include <cctype>
#include <cstdio>

namespace hq {
namespace {

std::string padded(uint64_t v, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llu", width, static_cast<unsigned long long>(v));
  return buf;
}

// Expands one %-code; returns false when the code is unknown (kept literally).
bool expand_code(char c, int width, const PatternContext& x, std::string& out) {
  uint64_t array_job = x.array_job_id ? x.array_job_id : x.job_id;
  uint64_t task = x.array_task >= 0 ? static_cast<uint64_t>(x.array_task) : 4294967294ULL;
  switch (c) {
    case 'j': out += padded(x.job_id, width); return true;
    case 'A': out += padded(array_job, width); return true;
    case 'a': out += padded(task, width); return true;
    case 'b': out += padded(x.array_task >= 0 ? task % 10 : 0, width); return true;
    case 'J': out += padded(x.job_id, width) + "." + x.step; return true;
    case 'n': out += padded(static_cast<uint64_t>(x.node_index), width); return true;
    case 't': out += padded(static_cast<uint64_t>(x.task), width); return true;
    case 'r': out += padded(static_cast<uint64_t>(x.restart_count), width); return true;
    case 's': out += x.step; return true;
    case 'N': out += x.node; return true;
    case 'u': out += x.user; return true;
    case 'x': out += x.job_name; return true;
    default: return false;
  }
}

}  // namespace

std::string expand_pattern(std::string_view pattern, const PatternContext& ctx) {
  if (pattern.find("\\\\") != std::string_view::npos || pattern.find('\\') != std::string_view::npos) {
    std::string raw;  // a backslash disables substitution; backslashes are dropped
    for (char c : pattern)
      if (c != '\\') raw += c;
    return raw;
  }
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) { out += pattern[i]; continue; }
    size_t j = i + 1;
    if (pattern[j] == '%') { out += '%'; i = j; continue; }
    int width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = width * 10 + (pattern[j] - '0');
      ++j;
    }
    if (width > 10) width = 10;
    if (j < pattern.size() && expand_code(pattern[j], width, ctx, out)) {
      i = j;
    } else {
      out += pattern.substr(i, j - i + (j < pattern.size() ? 1 : 0));
      i = j;
    }
  }
  return out;
}

bool names_a_task(std::string_view pattern) {
  if (pattern.find('\\') != std::string_view::npos) return false;  // no substitution at all
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    size_t j = i + 1;
    if (pattern[j] == '%') {
      i = j;
      continue;
    }
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) ++j;
    if (j < pattern.size() && (pattern[j] == 't' || pattern[j] == 'n' || pattern[j] == 'N')) return true;
    i = j - 1;
  }
  return false;
}

}  // namespace hq
