#include "core/column_format.hpp"

#include <cctype>

namespace hq {

ColumnFormat parse_percent_format(std::string_view text, const std::function<bool(char)>& known,
                                  std::string_view unknown_prefix) {
  ColumnFormat out;
  std::string literal;
  auto flush = [&] {
    if (!literal.empty()) out.items.push_back({literal, 0, 0, false});
    literal.clear();
  };
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '%') {
      literal += text[i++];
      continue;
    }
    size_t start = i++;
    if (i < text.size() && text[i] == '%') {
      literal += '%';
      ++i;
      continue;
    }
    FormatItem item;
    if (i < text.size() && text[i] == '.') {
      item.right = true;
      ++i;
    }
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && item.width < 10000)
      item.width = item.width * 10 + (text[i++] - '0');
    if (i >= text.size() || !std::isalpha(static_cast<unsigned char>(text[i])) || !known(text[i])) {
      out.errors.push_back(std::string(unknown_prefix) + (i < text.size() ? std::string(1, text[i]) : ""));
      literal += std::string(text.substr(start, std::min(i + 1, text.size()) - start));
      i = std::min(i + 1, text.size());
      continue;
    }
    item.field = text[i++];
    flush();
    out.items.push_back(item);
  }
  flush();
  return out;
}

ColumnFormat parse_named_format(std::string_view text, const std::function<char(std::string_view)>& code_of,
                                std::string_view unknown_prefix) {
  ColumnFormat out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string_view token = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (token.empty()) continue;
    FormatItem item{"", 0, 20, false};
    std::string suffix;
    std::string_view name = token;
    if (size_t colon = token.find(':'); colon != std::string_view::npos) {
      name = token.substr(0, colon);
      size_t i = colon + 1;
      if (i < token.size() && token[i] == '.') {
        item.right = true;
        ++i;
      }
      item.width = 0;
      while (i < token.size() && std::isdigit(static_cast<unsigned char>(token[i])) && item.width < 10000)
        item.width = item.width * 10 + (token[i++] - '0');
      suffix = std::string(token.substr(i));
    }
    item.field = code_of(name);
    if (item.field) out.items.push_back(item);
    else out.errors.push_back(std::string(unknown_prefix) + std::string(name));
    if (!suffix.empty()) out.items.push_back({suffix, 0, 0, false});
  }
  return out;
}

std::string fit_cell(const std::string& value, const FormatItem& item) {
  std::string out;
  append_cell(out, value, item);
  return out;
}

void append_cell(std::string& out, std::string_view value, const FormatItem& item) {
  if (item.width <= 0) {
    out.append(value);
    return;
  }
  size_t w = static_cast<size_t>(item.width);
  std::string_view v = value.substr(0, w);
  if (item.right) out.append(w - v.size(), ' ');
  out.append(v);
  if (!item.right) out.append(w - v.size(), ' ');
}

void append_line(std::string& out, const ColumnFormat& format, const std::function<std::string(char)>& cell) {
  for (const FormatItem& it : format.items) {
    if (it.field) append_cell(out, cell(it.field), it);
    else out += it.literal;
  }
}

std::string format_line(const ColumnFormat& format, const std::function<std::string(char)>& cell) {
  std::string out;
  append_line(out, format, cell);
  return out;
}

}  // namespace hq
