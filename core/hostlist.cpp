#include "core/hostlist.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <tuple>

namespace hq {
namespace {

struct Range {
  uint64_t lo = 0, hi = 0;
  int width = 0;
};

std::string pad(uint64_t n, int width) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*llu", width, static_cast<unsigned long long>(n));
  return buf;
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

Result<std::vector<Range>> parse_ranges(std::string_view body, std::string_view item) {
  std::vector<Range> out;
  auto bad = [&](std::string why) {
    return invalid("bad hostlist '" + std::string(item) + "': " + why);
  };
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = body.find(',', start);
    if (comma == std::string_view::npos) comma = body.size();
    std::string_view part = body.substr(start, comma - start);
    size_t dash = part.find('-');
    std::string_view lo_s = part.substr(0, dash);
    std::string_view hi_s = dash == std::string_view::npos ? lo_s : part.substr(dash + 1);
    if (!all_digits(lo_s) || !all_digits(hi_s) || lo_s.size() > 18 || hi_s.size() > 18)
      return bad("range '" + std::string(part) + "' is not N or N-M");
    Range r{std::stoull(std::string(lo_s)), std::stoull(std::string(hi_s)),
            static_cast<int>(lo_s.size())};
    if (r.lo > r.hi) return bad("range '" + std::string(part) + "' runs backwards");
    if (r.hi - r.lo + 1 > kMaxHostsPerRange)
      return bad("range '" + std::string(part) + "' holds more than 65536 hosts");
    out.push_back(r);
    start = comma + 1;
  }
  return out;
}

struct Bracket {
  std::string_view head, suffix;
  std::vector<Range> ranges;
};

// Splits "head[ranges]suffix" at the last bracket; nullopt-like empty ranges if none.
Result<Bracket> last_bracket(std::string_view item, std::string_view whole) {
  size_t lb = item.rfind('[');
  if (lb == std::string_view::npos) {
    if (item.find(']') != std::string_view::npos)
      return invalid("bad hostlist '" + std::string(whole) + "': ']' without '['");
    return Bracket{item, {}, {}};
  }
  size_t rb = item.find(']', lb);
  if (rb == std::string_view::npos) return invalid("bad hostlist '" + std::string(whole) + "': missing ']'");
  std::string_view suffix = item.substr(rb + 1);
  if (suffix.find_first_of("[]") != std::string_view::npos)
    return invalid("bad hostlist '" + std::string(whole) + "': misplaced bracket");
  auto ranges = parse_ranges(item.substr(lb + 1, rb - lb - 1), whole);
  if (!ranges) return ranges.status();
  return Bracket{item.substr(0, lb), suffix, std::move(ranges).value()};
}

// Brackets inside a prefix: the rightmost one varies slowest (Slurm's order).
Result<std::vector<std::string>> expand_prefix(std::string_view head, std::string_view whole) {
  auto b = last_bracket(head, whole);
  if (!b) return b.status();
  if (b->ranges.empty()) return std::vector<std::string>{std::string(head)};
  auto inner = expand_prefix(b->head, whole);
  if (!inner) return inner;
  std::vector<std::string> out;
  for (const Range& r : b->ranges) {
    for (uint64_t n = r.lo; n <= r.hi; ++n) {
      if (out.size() + inner->size() > 65536)
        return invalid("bad hostlist '" + std::string(whole) + "': more than 65536 prefixes");
      for (const auto& p : *inner) out.push_back(p + pad(n, r.width) + std::string(b->suffix));
    }
  }
  return out;
}

// The last bracket is the numeric range and varies fastest.
Result<std::vector<std::string>> expand_item(std::string_view item, std::string_view whole) {
  auto b = last_bracket(item, whole);
  if (!b) return b.status();
  if (b->ranges.empty()) return std::vector<std::string>{std::string(item)};
  auto heads = expand_prefix(b->head, whole);
  if (!heads) return heads.status();
  std::vector<std::string> out;
  for (const std::string& h : *heads) {
    for (const Range& r : b->ranges) {
      if (out.size() + (r.hi - r.lo + 1) > kMaxExpandedHosts)
        return invalid("bad hostlist '" + std::string(whole) + "': expands to too many hosts");
      for (uint64_t n = r.lo; n <= r.hi; ++n) out.push_back(h + pad(n, r.width) + std::string(b->suffix));
    }
  }
  return out;
}

// One stored range of the ranged form: prefix + [lo-hi] at width, or a single host.
struct HostRange {
  std::string prefix;
  uint64_t lo = 0, hi = 0;
  int width = 0;
  bool single = true;  // name without a numeric tail: printed as-is
};

HostRange parse_host(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  size_t digits = name.size() - i;
  if (digits == 0 || digits > 18) return HostRange{name, 0, 0, 0, true};
  uint64_t n = std::stoull(name.substr(i));
  return HostRange{name.substr(0, i), n, n, static_cast<int>(digits), false};
}

int zeros_padded(uint64_t n, int width) {
  int digits = static_cast<int>(std::to_string(n).size());
  return width > digits ? width - digits : 0;
}

// Slurm's _width_equiv: may two numbers print in one range without changing padding?
bool width_equiv(uint64_t n, int& wn, uint64_t m, int& wm) {
  if (wn == wm) return true;
  bool n_same = zeros_padded(n, wn) == zeros_padded(n, wm);
  bool m_same = zeros_padded(m, wm) == zeros_padded(m, wn);
  if (!n_same && !m_same) return false;
  if (!n_same) { wm = wn; return true; }
  wn = wm;
  return true;
}

void push_host(std::vector<HostRange>& ranges, const std::string& name) {
  HostRange h = parse_host(name);
  if (!ranges.empty() && !h.single) {
    HostRange& t = ranges.back();
    if (!t.single && t.prefix == h.prefix && t.hi + 1 == h.lo &&
        width_equiv(t.lo, t.width, h.lo, h.width)) {
      t.hi = h.lo;
      return;
    }
  }
  ranges.push_back(std::move(h));
}

std::string range_text(const HostRange& r) {
  return r.lo == r.hi ? pad(r.lo, r.width) : pad(r.lo, r.width) + "-" + pad(r.hi, r.width);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }  // std::isdigit's set, without its call

// From `from` on, digit runs compared by value (leading zeros aside), other bytes as bytes.
bool natural_less_from(std::string_view a, std::string_view b, size_t from) {
  size_t i = from, j = from;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && is_digit(a[ie])) ++ie;
      while (je < b.size() && is_digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

// Node names share long prefixes ("gpu-rack3-node17"), and node tables are maps compared
// this way on every lookup: the identical prefix is skipped as bytes, and the comparison
// proper starts at the digit run the first difference falls in, if any.
bool natural_less(std::string_view a, std::string_view b) {
  size_t shorter = std::min(a.size(), b.size()), k = 0;
  while (k < shorter && a[k] == b[k]) ++k;
  bool in_digits = (k > 0 && is_digit(a[k - 1])) || (k < a.size() && is_digit(a[k]) && k < b.size() && is_digit(b[k]));
  if (!in_digits) {
    if (k < shorter) return a[k] < b[k];
    return a.size() < b.size();
  }
  while (k > 0 && is_digit(a[k - 1])) --k;
  return natural_less_from(a, b, k);
}

Result<std::vector<std::string>> expand_hostlist(std::string_view expr) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < expr.size()) {
    while (i < expr.size() && (expr[i] == ',' || std::isspace(static_cast<unsigned char>(expr[i])))) ++i;
    size_t start = i;
    int depth = 0;
    while (i < expr.size()) {
      char c = expr[i];
      if (c == '[') ++depth;
      if (c == ']') --depth;
      if (depth == 0 && (c == ',' || std::isspace(static_cast<unsigned char>(c)))) break;
      ++i;
    }
    if (i == start) continue;
    auto hosts = expand_item(expr.substr(start, i - start), expr.substr(start, i - start));
    if (!hosts) return hosts.status();
    if (out.size() + hosts->size() > kMaxExpandedHosts)
      return invalid("hostlist expands to more than " + std::to_string(kMaxExpandedHosts) + " hosts");
    out.insert(out.end(), hosts->begin(), hosts->end());
  }
  return out;
}

std::string compress_hostlist(const std::vector<std::string>& names, HostlistOrder order) {
  std::vector<std::string> list = names;
  if (order != HostlistOrder::kAsGiven) {
    auto key = [](const std::string& n) {
      HostRange h = parse_host(n);
      return std::make_tuple(h.prefix, h.single ? 0 : 1, h.lo, h.width);
    };
    std::stable_sort(list.begin(), list.end(), [&](const std::string& a, const std::string& b) {
      auto ka = key(a), kb = key(b);
      if (std::get<0>(ka) != std::get<0>(kb)) return natural_less(std::get<0>(ka), std::get<0>(kb));
      return std::tie(std::get<1>(ka), std::get<2>(ka), std::get<3>(ka)) <
             std::tie(std::get<1>(kb), std::get<2>(kb), std::get<3>(kb));
    });
    if (order == HostlistOrder::kSortedUnique) list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  std::vector<HostRange> ranges;
  for (const auto& n : list) push_host(ranges, n);
  std::string out;
  for (size_t i = 0; i < ranges.size();) {
    if (!out.empty()) out += ',';
    const HostRange& first = ranges[i];
    if (first.single) { out += first.prefix; ++i; continue; }
    size_t j = i + 1;
    while (j < ranges.size() && !ranges[j].single && ranges[j].prefix == first.prefix) ++j;
    bool bracket = j - i > 1 || first.hi > first.lo;
    out += first.prefix;
    if (bracket) out += '[';
    for (size_t k = i; k < j; ++k) {
      if (k > i) out += ',';
      out += range_text(ranges[k]);
    }
    if (bracket) out += ']';
    i = j;
  }
  return out;
}

}  // namespace hq
