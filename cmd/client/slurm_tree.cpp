#include "cmd/client/slurm_tree.hpp"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "cmd/client/output.hpp"
#include "cmd/commands.hpp"

namespace hq::cmd {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

KeyOrder::KeyOrder(std::initializer_list<std::pair<const std::string, std::vector<std::string>>> lists) {
  for (const auto& [under, keys] : lists) {
    Ranks& ranks = under_[under];
    for (size_t i = 0; i < keys.size(); ++i) ranks.emplace(keys[i], i);
  }
}

std::vector<std::pair<std::string_view, const Value*>> KeyOrder::fields(const Struct& s, std::string_view parent,
                                                                       std::string_view grandparent) const {
  std::vector<std::pair<std::string_view, const Value*>> out;
  out.reserve(s.fields().size());
  for (const auto& [k, v] : s.fields()) out.emplace_back(k, &v);
  auto listed = under_.end();
  if (!grandparent.empty()) listed = under_.find(std::string(grandparent) + "/" + std::string(parent));
  if (listed == under_.end()) listed = under_.find(parent);
  if (listed == under_.end()) {
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
  }
  const Ranks& ranks = listed->second;
  auto rank = [&ranks](std::string_view k) {
    auto at = ranks.find(k);
    return at == ranks.end() ? ranks.size() : at->second;
  };
  std::vector<std::pair<size_t, std::pair<std::string_view, const Value*>>> ranked;
  ranked.reserve(out.size());
  for (const auto& f : out) ranked.emplace_back(rank(f.first), f);
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second.first < b.second.first;
  });
  for (size_t i = 0; i < ranked.size(); ++i) out[i] = ranked[i].second;
  return out;
}

Obj& Obj::str(const std::string& k, const std::string& v) {
  return (*s_->mutable_fields())[k].set_string_value(utf8_or_replacement(v)), *this;
}
Obj& Obj::num(const std::string& k, double v) { return (*s_->mutable_fields())[k].set_number_value(v), *this; }
Obj& Obj::flag(const std::string& k, bool v) { return (*s_->mutable_fields())[k].set_bool_value(v), *this; }
Obj& Obj::null(const std::string& k) { return (*s_->mutable_fields())[k].set_null_value({}), *this; }
Obj Obj::obj(const std::string& k) { return Obj((*s_->mutable_fields())[k].mutable_struct_value()); }
google::protobuf::ListValue* Obj::list(const std::string& k) { return (*s_->mutable_fields())[k].mutable_list_value(); }
Obj Obj::item(google::protobuf::ListValue* l) { return Obj(l->add_values()->mutable_struct_value()); }

void slurm_meta(Obj root, const std::string& plugin_type, const std::string& plugin_name) {
  Obj m = root.obj("meta");
  m.obj("plugin").str("type", plugin_type).str("name", plugin_name);
  Obj slurm = m.obj("Slurm");
  slurm.obj("version").num("major", 22).num("micro", 8).num("minor", 5);
  slurm.str("release", "22.05.8");
  m.obj("hq").str("version", kHqVersion);
  root.list("errors");
}

// json-c's escaping: quotes, backslash, slash, the named controls, other controls as \u00XX;
// everything else (UTF-8 included) as it is.
void put_string(std::string& out, std::string_view s) {
  out += '"';
  size_t from = 0;  // the start of the run of characters that go as they are
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x20 && c != '"' && c != '\\' && c != '/') continue;
    out.append(s.data() + from, i - from);
    from = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '/': out += "\\/"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        out += buf;
      }
    }
  }
  out.append(s.data() + from, s.size() - from);
  out += '"';
}

namespace {

void put_number(std::string& out, double d, bool as_float) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[64];
  if (!as_float && d == std::floor(d) && std::fabs(d) < 9.2e18) {
    std::snprintf(buf, sizeof buf, "%" PRId64, static_cast<int64_t>(d));
    out += buf;
    return;
  }
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view text(buf, ec == std::errc() ? static_cast<size_t>(end - buf) : 0);
  out += text;
  if (text.find_first_of(".e") == std::string_view::npos) out += ".0";
}

class JsonWriter {
 public:
  JsonWriter(const KeyOrder& order, const std::set<std::string>& float_keys) : order_(order), float_keys_(float_keys) {}

  std::string take() { return std::move(out_); }

  // `key`: the value's key (a list item's: its list's); `parent`: the key of what holds it.
  void value(const Value& v, int indent, std::string_view key, std::string_view parent) {
    switch (v.kind_case()) {
      case Value::kStructValue: return object(v.struct_value(), indent, key, parent);
      case Value::kListValue: return array(v.list_value(), indent, key, parent);
      case Value::kStringValue: return put_string(out_, v.string_value());
      case Value::kNumberValue: return put_number(out_, v.number_value(), float_keys_.count(std::string(key)) > 0);
      case Value::kBoolValue:
        out_ += v.bool_value() ? "true" : "false";
        return;
      default: out_ += "null";
    }
  }

  void object(const Struct& s, int indent, std::string_view key, std::string_view parent) {
    out_ += '{';
    bool first = true;
    for (const auto& [k, v] : order_.fields(s, key, parent)) {
      out_ += first ? "\n" : ",\n";
      first = false;
      out_.append(static_cast<size_t>(indent + 2), ' ');
      put_string(out_, k);
      out_ += ": ";
      value(*v, indent + 2, k, key);
    }
    close('}', indent);
  }

  // A sequence's items sit under its key, for their keys' order.
  void array(const ListValue& l, int indent, std::string_view key, std::string_view parent) {
    out_ += '[';
    bool first = true;
    for (const Value& v : l.values()) {
      out_ += first ? "\n" : ",\n";
      first = false;
      out_.append(static_cast<size_t>(indent + 2), ' ');
      value(v, indent + 2, key, parent);
    }
    close(']', indent);
  }

 private:
  void close(char bracket, int indent) {
    out_ += '\n';
    out_.append(static_cast<size_t>(indent), ' ');
    out_ += bracket;
  }

  const KeyOrder& order_;
  const std::set<std::string>& float_keys_;
  std::string out_;
};

}  // namespace

std::string slurm_json_text(const Struct& root, const KeyOrder& order, const std::set<std::string>& float_keys) {
  JsonWriter w(order, float_keys);
  w.object(root, 0, "", "");
  return w.take();
}

}  // namespace hq::cmd
