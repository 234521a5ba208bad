#include "core/units.hpp"


#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <vector>

namespace hq {
namespace {


Result<int64_t> field(std::string_view text, std::string_view whole) {
  auto r = parse_int(text, 0, 100000000);
  if (!r) return invalid("bad time '" + std::string(whole) + "': expected digits in each field");
  return r;
}

Result<Duration> parse_unit_form(std::string_view t) {
  char unit = t.back();
  int64_t mult = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 86400;
  auto n = parse_int(t.substr(0, t.size() - 1), 0, 100000000);
  if (!n) return invalid("bad time '" + std::string(t) + "'");
  return *n * mult;
}

// hq's own "30s", "5m", "2h", "1d" (lower case).
bool unit_form(std::string_view t) {
  if (t.size() < 2 || !std::isdigit(static_cast<unsigned char>(t[0]))) return false;
  char last = t.back();
  return last == 's' || last == 'm' || last == 'h' || last == 'd';
}

// "H:M:S" style clock part into seconds; `minutes_first` for the no-day forms
// where one field is minutes and two are minutes:seconds.
Result<Duration> parse_clock(std::string_view clock, bool has_days, std::string_view whole) {
  auto parts = split(clock, ':');
  if (parts.size() > 3) return invalid("bad time '" + std::string(whole) + "': too many ':'");
  std::array<int64_t, 3> v{};
  for (size_t i = 0; i < parts.size(); ++i) {
    auto r = field(parts[i], whole);
    if (!r) return r.status();
    v[i] = *r;
  }
  if (has_days) {  // D-H, D-H:M, D-H:M:S
    return v[0] * 3600 + v[1] * 60 + v[2];
  }
  switch (parts.size()) {
    case 1: return v[0] * 60;                           // M
    case 2: return v[0] * 60 + v[1];                    // M:S
    default: return v[0] * 3600 + v[1] * 60 + v[2];     // H:M:S
  }
}

}  // namespace

Result<int64_t> parse_int(std::string_view text, int64_t min, int64_t max) {
  int64_t v = 0;
  if (text.empty()) return invalid("expected a number, got nothing");
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size())
    return invalid("expected a number, got '" + std::string(text) + "'");
  if (v < min || v > max)
    return invalid("number " + std::string(text) + " out of range [" + std::to_string(min) +
                   ", " + std::to_string(max) + "]");
  return v;
}

Result<Duration> parse_duration(std::string_view text) {
  std::string t = to_lower(text);
  if (t.empty()) return invalid("empty time value");
  if (t == "unlimited" || t == "infinite") return kUnlimited;
  if (unit_form(t)) return parse_unit_form(t);
  Duration total = 0;
  std::string_view clock = t;
  bool has_days = false;
  if (auto dash = t.find('-'); dash != std::string::npos) {
    auto days = field(std::string_view(t).substr(0, dash), text);
    if (!days) return days.status();
    total = *days * 86400;
    clock = std::string_view(t).substr(dash + 1);
    has_days = true;
  }
  auto c = parse_clock(clock, has_days, text);
  if (!c) return c.status();
  total += *c;
  return total == 0 ? kUnlimited : total;
}

Result<Duration> parse_time_limit(std::string_view text) {
  std::string t = to_lower(trim(text));
  if (t == "-1") return kUnlimited;
  auto d = parse_duration(t);
  if (!d || *d == kUnlimited || unit_form(t)) return d;
  return (*d + 59) / 60 * 60;  // time_str2mins: whole minutes, a seconds part rounds up
}

std::string format_limit(Duration s) {
  if (s < 0) return "UNLIMITED";
  char buf[96];
  int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  if (d > 0)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h,
                  (long long)m, (long long)sec);
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:%02lld", (long long)h, (long long)m,
                  (long long)sec);
  return buf;
}

std::string format_elapsed(Duration s) {
  if (s <= 0) return "0:00";  // every pending job of a long queue
  char buf[96];
  int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  if (d > 0)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h,
                  (long long)m, (long long)sec);
  else if (h > 0)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", (long long)h, (long long)m,
                  (long long)sec);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", (long long)m, (long long)sec);
  return buf;
}

std::string format_size_mib(int64_t mib) {
  if (mib == 0) return "0";
  const char* units = "MGTP";
  int u = 0;
  while (u < 3 && mib % 1024 == 0) {
    mib /= 1024;
    ++u;
  }
  return std::to_string(mib) + units[u];
}

Result<int64_t> parse_size_mib(std::string_view text) {
  if (text.empty()) return invalid("empty size value");
  std::string t = to_lower(text);
  int64_t num_per_mib = 1, mib_per_num = 1;
  char last = t.back();
  if (std::isalpha(static_cast<unsigned char>(last))) {
    t.pop_back();
    if (!t.empty() && last == 'b' ) { last = t.back(); t.pop_back(); }  // "4GB"
    switch (last) {
      case 'k': num_per_mib = 1024; break;
      case 'm': break;
      case 'g': mib_per_num = 1024; break;
      case 't': mib_per_num = 1024 * 1024; break;
      default: return invalid("bad size '" + std::string(text) + "': unit must be K, M, G or T");
    }
  }
  auto n = parse_int(t, 0, int64_t{1} << 40);
  if (!n) return invalid("bad size '" + std::string(text) + "': " + n.status().message());
  return (*n * mib_per_num + num_per_mib - 1) / num_per_mib;
}

int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Result<int64_t> clock_seconds(std::string_view t) {  // HH:MM[:SS]
  auto h = parse_int(t.substr(0, 2), 0, 23);
  auto m = t.size() >= 5 && t[2] == ':' ? parse_int(t.substr(3, 2), 0, 59) : Result<int64_t>(invalid(""));
  Result<int64_t> s = int64_t{0};
  if (t.size() == 8 && t[5] == ':') s = parse_int(t.substr(6, 2), 0, 59);
  else if (t.size() != 5) s = invalid("");
  if (!h || !m || !s) return invalid("bad time of day '" + std::string(t) + "'");
  return *h * 3600 + *m * 60 + *s;
}


std::string format_timestamp(Time t) {
  // Civil-from-days (Howard Hinnant), UTC.
  int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t secs = t - days * 86400;
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  int64_t doe = days - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400, doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  if (m <= 2) ++y;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld", (long long)y,
                (long long)m, (long long)d, (long long)(secs / 3600),
                (long long)(secs / 60 % 60), (long long)(secs % 60));
  return buf;
}

std::string base_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  for (std::string_view part : split(s, ','))
    if (!part.empty() && std::find(out.begin(), out.end(), part) == out.end()) out.emplace_back(part);
  return out;
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

}  // namespace hq
