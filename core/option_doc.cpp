// Markdown option tables for docs/slurm-compat.md (see option_doc.hpp).
#include "core/option_doc.hpp"

namespace hq {
namespace {

struct Status3 {
  std::string_view status, text;
};

Status3 split_status(std::string_view help) {
  for (auto [prefix, status] : {std::pair<std::string_view, std::string_view>{"taken: ", "accepted, no effect"},
                                {"refused: ", "refused"}})
    if (help.starts_with(prefix)) return {status, help.substr(prefix.size())};
  return {"works", help};
}

std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

}  // namespace

std::string option_doc_names(char short_name, const std::vector<std::string_view>& long_names) {
  std::string out;
  if (short_name) out = "`-" + std::string(1, short_name) + "`";
  for (auto name : long_names) out += (out.empty() ? "`--" : ", `--") + std::string(name) + "`";
  return out;
}

std::string option_doc_table(const std::vector<OptionDocRow>& rows) {
  std::string out = "| Option | On hq | What it does |\n|---|---|---|\n";
  for (const auto& r : rows) {
    Status3 s = split_status(r.help);
    out += "| " + r.names + " | " + std::string(s.status) + " | " + cell(s.text) + " |\n";
  }
  return out;
}

}  // namespace hq
