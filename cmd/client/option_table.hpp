// Building a persona's option table (core/cli_options' CliOption) from the fields of its
// arguments struct, and the --help lines and docs rows made from that table (squeue's and
// sinfo's). `Args` has a `MetaOption meta` member, set by --help/--usage/-V. Header-only,
// no CLI11: a command built on it builds neither CLI11's apps nor the C++ locale. One thread.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/cli_options.hpp"
#include "core/option_doc.hpp"

namespace hq::cmd {

// An option that sets `field` to its value: a repeated one's last value counts, as with getopt.
template <typename Args>
CliOption<Args> text_option(std::string_view name, char letter, std::string Args::*field, std::string_view doc) {
  return {name, letter, true, [field](Args& a, std::string_view v) { return a.*field = std::string(v), Status::ok(); },
          false, doc};
}

template <typename Args>
CliOption<Args> flag_option(std::string_view name, char letter, bool Args::*field, std::string_view doc) {
  return {name, letter, false, [field](Args& a, std::string_view) { return a.*field = true, Status::ok(); }, false, doc};
}

// An option answered where getopt meets it (--help, --usage, -V): parsing stops there.
template <typename Args>
CliOption<Args> meta_option(std::string_view name, char letter, MetaOption meta, std::string_view doc) {
  return {name, letter, false, [meta](Args& a, std::string_view) { return a.meta = meta, Status::ok(); }, false, doc};
}

// An option that --help and the docs show on the line of the option before it in the table
// (no text of its own), doing what that one does.
template <typename Args>
CliOption<Args> on_line_of(const CliOption<Args>& option, std::string_view name) {
  CliOption<Args> other = option;
  other.long_name = name;
  other.short_name = 0;
  other.doc = {};
  return other;
}

// Another long name of the same option, as Slurm's getopt table has it: an abbreviation of
// both ("--jo") is not ambiguous.
template <typename Args>
CliOption<Args> alias_of(const CliOption<Args>& option, std::string_view name) {
  CliOption<Args> alias = on_line_of(option, name);
  alias.alias_for = option.alias_for.empty() ? option.long_name : option.alias_for;
  return alias;
}

// Each option of a table once, with the names on its line: --help's lines and the docs' rows.
struct OptionLine {
  char letter = 0;
  std::vector<std::string_view> names;
  bool value = false;  // takes one as the next word
  std::string_view doc;
};

template <typename Args>
std::vector<OptionLine> option_lines(const std::vector<CliOption<Args>>& table) {
  std::vector<OptionLine> lines;
  for (const CliOption<Args>& o : table) {
    if (!o.set) continue;  // --help/--usage/--version added by rank_as_slurm: not an option line
    if (o.doc.empty() && !lines.empty()) lines.back().names.push_back(o.long_name);
    else lines.push_back({o.short_name, {o.long_name}, o.has_arg && !o.optional_arg, o.doc});
  }
  return lines;
}

// "`usage`\n" then a line per option: "  -o, --format=VALUE          its text".
inline std::string option_help(std::string_view usage, const std::vector<OptionLine>& lines) {
  std::string text = std::string(usage) + "\n";
  for (const OptionLine& l : lines) {
    std::string names = l.letter ? std::string("-") + l.letter + ", " : "    ";
    for (size_t k = 0; k < l.names.size(); ++k) names += (k ? ", --" : "--") + std::string(l.names[k]);
    if (l.value) names += "=VALUE";
    text += "  " + names + std::string(names.size() < 30 ? 30 - names.size() : 1, ' ') + std::string(l.doc) + "\n";
  }
  return text;
}

inline std::vector<OptionDocRow> option_doc_rows(const std::vector<OptionLine>& lines) {
  std::vector<OptionDocRow> rows;
  for (const OptionLine& l : lines) rows.push_back({option_doc_names(l.letter, l.names), std::string(l.doc)});
  return rows;
}

}  // namespace hq::cmd
