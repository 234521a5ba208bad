// sreport's printing as Slurm 22.05's print_fields.c and sreport/common.c do it: headers
// (right-justified names cut to the width, a line of dashes; -p/-P: '|'), string cells (a
// cut value ends in '+', a missing one is blank), time cells (cut without '+', glibc's %.0f
// rounding, percentages of a total), the title block and the usage column width.
// Pure; thread-safe.
#include <cstdio>
#include <cstdlib>

#include "core/sreport_internal.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

std::string printf_str(const char* fmt, double a, double b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

// "%*.*s " (right) or "%-*.*s " (left): cut to the width, padded, then a space.
std::string pad(std::string_view s, int len) {
  size_t w = static_cast<size_t>(std::abs(len));
  std::string v(s.substr(0, w));
  std::string fill(w - v.size(), ' ');
  return (len >= 0 ? fill + v : v + fill) + ' ';
}

}  // namespace

std::string time_text(SreportTime t, uint64_t value, uint64_t total) {
  if (!total) total = 1;
  double v = static_cast<double>(value), pct = v / static_cast<double>(total) * 100;
  switch (t) {
    case SreportTime::kSeconds: return std::to_string(value);
    case SreportTime::kMinutes: return printf_str("%.0f", v / 60);
    case SreportTime::kHours: return printf_str("%.0f", v / 3600);
    case SreportTime::kPercent: return printf_str("%.2f%%", pct);
    case SreportTime::kSecPer: return std::to_string(value) + printf_str("(%.2f%%)", pct);
    case SreportTime::kMinPer: return printf_str("%.0f(%.2f%%)", v / 60, pct);
    case SreportTime::kHourPer: return printf_str("%.0f(%.2f%%)", v / 3600, pct);
  }
  return "";
}

int usage_width(uint64_t number, SreportTime t) {
  int len = 8;
  for (uint64_t order = 100000000ULL; number >= order; order *= 10) {
    ++len;
    if (order > UINT64_MAX / 10) break;
  }
  if (t == SreportTime::kSecPer || t == SreportTime::kMinPer || t == SreportTime::kHourPer) len += 9;
  return len;
}

std::string time_format_string(SreportTime t) {
  switch (t) {
    case SreportTime::kSeconds: return "Seconds";
    case SreportTime::kMinutes: return "Minutes";
    case SreportTime::kHours: return "Hours";
    case SreportTime::kPercent: return "Percentage of Total";
    case SreportTime::kSecPer: return "Seconds/Percentage of Total";
    case SreportTime::kMinPer: return "Minutes/Percentage of Total";
    case SreportTime::kHourPer: return "Hours/Percentage of Total";
  }
  return "";
}

std::string title_block(const SreportCmd& cmd, const std::string& title_lines) {
  if (!cmd.header) return "";
  const std::string dashes(80, '-');
  return dashes + "\n" + title_lines + dashes + "\n";
}

std::string window_text(const SreportCmd& cmd) {
  return format_timestamp(cmd.start + cmd.utc_offset) + " - " + format_timestamp(cmd.end - 1 + cmd.utc_offset);
}

void FieldPrinter::header(const std::vector<PrintField>& fields) {
  if (!cmd_.header) return;
  for (size_t i = 0; i < fields.size(); ++i) {
    bool last = i + 1 == fields.size();
    if (cmd_.parsable) out_ += fields[i].name + (cmd_.parsable == 2 && last ? "" : "|");
    else out_ += pad(fields[i].name, fields[i].len);
  }
  out_ += "\n";
  if (cmd_.parsable) return;
  for (const PrintField& f : fields) out_ += std::string(static_cast<size_t>(std::abs(f.len)), '-') + ' ';
  out_ += "\n";
}

void FieldPrinter::cell(const PrintField& f, const Cell& c, bool last) {
  std::string text;
  if (!c.null) {
    if (f.kind == FieldKind::kTime) text = time_text(cmd_.time, c.value, c.total);
    else if (f.kind == FieldKind::kUint) text = std::to_string(c.value);
    else text = c.str;
  }
  if (cmd_.parsable) {
    out_ += text + (cmd_.parsable == 2 && last ? "" : "|");
    return;
  }
  size_t w = static_cast<size_t>(std::abs(f.len));
  if (f.kind == FieldKind::kStr && text.size() > w && w > 0) text = text.substr(0, w - 1) + "+";
  if (c.null) text = "";
  out_ += pad(text, c.null ? -std::abs(f.len) : f.len);
}

void FieldPrinter::row(const std::vector<PrintField>& fields, const std::vector<Cell>& cells) {
  for (size_t i = 0; i < fields.size(); ++i) cell(fields[i], i < cells.size() ? cells[i] : Cell{"", true}, i + 1 == fields.size());
  out_ += "\n";
}

}  // namespace hq
