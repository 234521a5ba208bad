#include "cmd/client/slurm_yaml.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace hq::cmd {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr int kBestWidth = 80;  // libyaml's default line width
constexpr int kIndentStep = 2;  // and its indent

enum class Style { kPlain, kSingle, kDouble };

bool ascii_printable(unsigned char c) { return c == '\n' || (c >= 0x20 && c <= 0x7e); }
bool blank_or_end(std::string_view s, size_t i) { return i >= s.size() || s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'; }
bool is_space(char c) { return c == ' '; }
bool is_break(char c) { return c == '\n' || c == '\r'; }

// Which styles libyaml's yaml_emitter_analyze_scalar allows for `s` as a block-context
// value (Slurm's emitter is not in unicode mode: any non-ASCII character is "special").
Style choose_style(std::string_view s) {
  if (s.empty()) return Style::kPlain;  // written as nothing after the tag
  bool flow_ind = false, block_ind = false, special = false, line_breaks = false;
  bool leading_space = false, leading_break = false, trailing_space = false, trailing_break = false;
  bool break_space = false, space_break = false, prev_space = false, prev_break = false;
  if (s.size() >= 3 && (s.substr(0, 3) == "---" || s.substr(0, 3) == "...")) flow_ind = block_ind = true;
  bool preceded_by_ws = true;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool followed_by_ws = blank_or_end(s, i + 1);
    bool first = i == 0, last = i + 1 == s.size();
    if (first) {
      if (std::string_view("#,[]{}&*!|>'\"%@`").find(c) != std::string_view::npos) flow_ind = block_ind = true;
      if (c == '?' || c == ':') {
        flow_ind = true;
        if (followed_by_ws) block_ind = true;
      }
      if (c == '-' && followed_by_ws) flow_ind = block_ind = true;
    } else {
      if (std::string_view(",?[]{}").find(c) != std::string_view::npos) flow_ind = true;
      if (c == ':') {
        flow_ind = true;
        if (followed_by_ws) block_ind = true;
      }
      if (c == '#' && preceded_by_ws) flow_ind = block_ind = true;
    }
    if (!ascii_printable(static_cast<unsigned char>(c))) special = true;
    if (is_break(c)) line_breaks = true;
    if (is_space(c)) {
      if (first) leading_space = true;
      if (last) trailing_space = true;
      if (prev_break) break_space = true;
      prev_space = true;
      prev_break = false;
    } else if (is_break(c)) {
      if (first) leading_break = true;
      if (last) trailing_break = true;
      if (prev_space) space_break = true;
      prev_break = true;
      prev_space = false;
    } else {
      prev_space = prev_break = false;
    }
    preceded_by_ws = blank_or_end(s, i);
  }
  (void)flow_ind;  // block context: only the block rules decide
  bool plain = true, single = true;
  if (leading_space || leading_break || trailing_space || trailing_break) plain = false;
  if (break_space) plain = single = false;
  if (space_break || special) plain = single = false;
  if (line_breaks) plain = false;
  if (block_ind) plain = false;
  if (plain) return Style::kPlain;
  return single ? Style::kSingle : Style::kDouble;
}

// The next code point of valid UTF-8 `s` at `i` (advanced past it).
uint32_t next_code_point(std::string_view s, size_t& i) {
  unsigned char c = static_cast<unsigned char>(s[i++]);
  int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
  uint32_t cp = more == 3 ? c & 0x07u : more == 2 ? c & 0x0fu : more == 1 ? c & 0x1fu : c;
  for (; more > 0 && i < s.size(); --more) cp = (cp << 6) | (static_cast<unsigned char>(s[i++]) & 0x3fu);
  return cp;
}

class Emitter {
 public:
  std::string take() { return std::move(out_); }

  void document(const Struct& root, const std::set<std::string>& float_keys, const KeyOrder& order) {
    float_keys_ = &float_keys;
    order_ = &order;
    put("%YAML 1.1");
    newline();
    put("--- !!map");
    if (root.fields().empty()) put(" {}");
    else mapping_body(root, 0, "", "");
    newline();
    put("...");
    newline();
  }

 private:
  void put(std::string_view s) {
    out_ += s;
    column_ += static_cast<int>(s.size());
  }
  void newline() {
    out_ += '\n';
    column_ = 0;
  }
  // Goes on at `indent`: on a new line when the column is past it (libyaml's write_indent).
  void indent_to(int indent) {
    if (column_ > indent) newline();
    while (column_ < indent) put(" ");
  }

  // A mapping's keys in the order `order_` gives for mappings under `parent` (itself
  // under `grandparent`).
  void mapping_body(const Struct& s, int indent, std::string_view parent, std::string_view grandparent) {
    for (const auto& [k, v] : order_->fields(s, parent, grandparent)) {
      newline();
      for (int i = 0; i < indent; ++i) put(" ");
      put("!!str ");
      scalar_text(k, indent + kIndentStep, false);
      put(":");
      node(*v, indent, true, k, parent);
    }
  }

  // The items of the sequence under `key` (mappings among them sit under it too).
  void sequence_items(const ListValue& l, int indent, std::string_view key, std::string_view parent) {
    for (const Value& v : l.values()) {
      newline();
      for (int i = 0; i < indent; ++i) put(" ");
      put("-");
      node(v, indent + kIndentStep, false, key, parent);
    }
  }

  // A node after "key:" (`in_mapping`, whose keys sit at `indent`) or after "-" (whose
  // contents sit at `indent`).
  void node(const Value& v, int indent, bool in_mapping, std::string_view key, std::string_view parent) {
    switch (v.kind_case()) {
      case Value::kStructValue:
        if (v.struct_value().fields().empty()) return put(" !!map {}");
        put(" !!map");
        return mapping_body(v.struct_value(), in_mapping ? indent + kIndentStep : indent, key, parent);
      case Value::kListValue:
        if (v.list_value().values().empty()) return put(" !!seq []");
        put(" !!seq");
        return sequence_items(v.list_value(), indent, key, parent);  // in a mapping: at its keys' indent, as libyaml
      case Value::kStringValue:
        put(" !!str");
        if (!v.string_value().empty()) {
          put(" ");
          scalar_text(v.string_value(), in_mapping ? indent + kIndentStep : indent, true);
        }
        return;
      case Value::kNumberValue: return number(v.number_value(), key);
      case Value::kBoolValue: return put(v.bool_value() ? " !!bool true" : " !!bool false");
      default: return put(" !!null null");
    }
  }

  void number(double d, std::string_view key) {
    char buf[64];
    if (float_keys_->count(std::string(key)) || !std::isfinite(d) || std::fabs(d) >= 9.2e18 || d != std::floor(d)) {
      std::snprintf(buf, sizeof buf, " !!float %f", d);
    } else {
      std::snprintf(buf, sizeof buf, " !!int %" PRId64, static_cast<int64_t>(d));
    }
    put(buf);
  }

  // A scalar's text in its style; `indent`: where folded lines go on; `allow_breaks`:
  // false for keys (simple keys never fold).
  void scalar_text(std::string_view s, int indent, bool allow_breaks) {
    switch (choose_style(s)) {
      case Style::kPlain: return plain(s, indent, allow_breaks);
      case Style::kSingle: return single_quoted(s, indent, allow_breaks);
      case Style::kDouble: return double_quoted(s, indent, allow_breaks);
    }
  }

  void plain(std::string_view s, int indent, bool allow_breaks) {
    bool spaces = false;
    for (size_t i = 0; i < s.size(); ++i) {
      if (is_space(s[i])) {
        if (allow_breaks && !spaces && column_ > kBestWidth && !(i + 1 < s.size() && is_space(s[i + 1]))) indent_to(indent);
        else put(" ");
        spaces = true;
      } else {
        out_ += s[i];
        ++column_;
        spaces = false;
      }
    }
  }

  void single_quoted(std::string_view s, int indent, bool allow_breaks) {
    put("'");
    bool spaces = false, breaks = false;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (is_space(c)) {
        if (allow_breaks && !spaces && column_ > kBestWidth && i != 0 && i + 1 != s.size() && !is_space(s[i + 1]))
          indent_to(indent);
        else put(" ");
        spaces = true;
      } else if (is_break(c)) {
        if (!breaks && c == '\n') newline();  // one line break reads back as a space: write two
        newline();
        breaks = true;
      } else {
        if (breaks) indent_to(indent);
        if (c == '\'') put("'");
        out_ += c;
        ++column_;
        spaces = breaks = false;
      }
    }
    if (breaks) indent_to(indent);
    put("'");
  }

  void double_quoted(std::string_view s, int indent, bool allow_breaks) {
    put("\"");
    bool spaces = false;
    for (size_t i = 0; i < s.size();) {
      size_t at = i;
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == ' ') {
        ++i;
        if (allow_breaks && !spaces && column_ > kBestWidth && at != 0 && i != s.size()) {
          indent_to(indent);
          if (i < s.size() && s[i] == ' ') put("\\");
        } else {
          put(" ");
        }
        spaces = true;
        continue;
      }
      uint32_t cp = next_code_point(s, i);
      spaces = false;
      if (cp >= 0x20 && cp <= 0x7e && cp != '"' && cp != '\\') {
        out_ += static_cast<char>(cp);
        ++column_;
        continue;
      }
      put(escape(cp));
    }
    put("\"");
  }

  static std::string escape(uint32_t cp) {
    switch (cp) {
      case 0x00: return "\\0";
      case 0x07: return "\\a";
      case 0x08: return "\\b";
      case 0x09: return "\\t";
      case 0x0a: return "\\n";
      case 0x0b: return "\\v";
      case 0x0c: return "\\f";
      case 0x0d: return "\\r";
      case 0x1b: return "\\e";
      case 0x22: return "\\\"";
      case 0x5c: return "\\\\";
      case 0x85: return "\\N";
      case 0xa0: return "\\_";
      case 0x2028: return "\\L";
      case 0x2029: return "\\P";
      default: break;
    }
    char buf[16];
    if (cp <= 0xff) std::snprintf(buf, sizeof buf, "\\x%02X", cp);
    else if (cp <= 0xffff) std::snprintf(buf, sizeof buf, "\\u%04X", cp);
    else std::snprintf(buf, sizeof buf, "\\U%08X", cp);
    return buf;
  }

  std::string out_;
  int column_ = 0;
  const std::set<std::string>* float_keys_ = nullptr;
  const KeyOrder* order_ = nullptr;
};

}  // namespace

std::string slurm_yaml(const Struct& root, const std::set<std::string>& float_keys, const KeyOrder& order) {
  Emitter e;
  e.document(root, float_keys, order);
  return e.take();
}

}  // namespace hq::cmd
