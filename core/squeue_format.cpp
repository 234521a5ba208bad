#include "core/squeue_format.hpp"

#include <cctype>
#include <map>

namespace hq {

std::string_view squeue_header(char field) {
  static const std::map<char, std::string_view> kHeaders = {
      {'a', "ACCOUNT"},   {'A', "JOBID"},        {'B', "EXEC_HOST"},    {'c', "MIN_CPUS"},   {'C', "CPUS"},
      {'D', "NODES"},     {'e', "END_TIME"},     {'E', "DEPENDENCY"},   {'F', "ARRAY_JOB_ID"}, {'i', "JOBID"},
      {'j', "NAME"},      {'k', "COMMENT"},      {'K', "ARRAY_TASK_ID"}, {'l', "TIME_LIMIT"}, {'L', "TIME_LEFT"},
      {'m', "MIN_MEMORY"}, {'M', "TIME"},        {'n', "REQ_NODES"},    {'N', "NODELIST"},   {'o', "COMMAND"},
      {'P', "PARTITION"}, {'q', "QOS"},          {'Q', "PRIORITY"},     {'r', "REASON"},     {'R', "NODELIST(REASON)"},
      {'S', "START_TIME"}, {'t', "ST"},          {'T', "STATE"},        {'u', "USER"},       {'U', "UID"},
      {'V', "SUBMIT_TIME"}, {'x', "EXC_NODES"},  {'y', "NICE"},         {'Y', "SCHEDNODES"}, {'Z', "WORK_DIR"}};
  auto it = kHeaders.find(field);
  return it == kHeaders.end() ? std::string_view{} : it->second;
}

SqueueFormat parse_squeue_format(std::string_view text) {
  SqueueFormat out;
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
    if (i >= text.size() || squeue_header(text[i]).empty()) {  // kept as text, as squeue does
      out.errors.push_back("Invalid job format specification: " + std::string(i < text.size() ? 1 : 0, text[std::min(i, text.size() - 1)]));
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

std::string fit_cell(const std::string& value, const FormatItem& item) {
  if (item.width <= 0) return value;
  size_t w = static_cast<size_t>(item.width);
  std::string v = value.substr(0, w);
  std::string pad(w - v.size(), ' ');
  return item.right ? pad + v : v + pad;
}

}  // namespace hq
