// One getopt_long-like parser for the Slurm-style commands' option tables (sbatch's
// submit options, srun's step options): "--name=value", "--name value", "-xVALUE",
// "-x value" and flags. Each command keeps a table of CliOption<Target>. Pure.
#pragma once
#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

template <typename Target>
struct CliOption {
  std::string_view long_name;
  char short_name = 0;
  bool has_arg = false;
  std::function<Status(Target&, std::string_view)> set;
  bool optional_arg = false;  // a value only in the same word ("--x=1", "-x1"); else ""
  std::string_view doc = {};  // help text for docs/slurm-compat.md (core/option_doc.hpp's status prefixes)
};

// getopt's words for an option a command does not know, as Slurm's commands print them after
// "PROG: ": "unrecognized option '--x'" for a long one, "invalid option -- 'x'" for a short one.
inline std::string getopt_unknown(std::string_view word) {
  if (word.size() > 1 && word[1] == '-') return "unrecognized option '" + std::string(word) + "'";
  return "invalid option -- '" + std::string(word.substr(std::min<size_t>(1, word.size()), 1)) + "'";
}

// What failed when apply_cli_option() did: the option is not in the table, or its value
// was refused (`name`: its long name; `value` as given). A missing value is neither.
struct CliOptionError {
  bool unknown = false;
  std::string name, value;  // unknown: `name` is the word as typed
};

// The table's entry for the option word `a` ("--name", "--name=value", "-x", "-xvalue"),
// with the value given in the same word; nullptr when the table has none.
template <typename Target>
const CliOption<Target>* find_cli_option(const std::vector<CliOption<Target>>& table, const std::string& a,
                                         std::string_view& value, bool& inline_value) {
  const CliOption<Target>* def = nullptr;
  inline_value = false;
  if (a.rfind("--", 0) == 0) {
    std::string_view body = std::string_view(a).substr(2);
    size_t eq = body.find('=');
    for (const auto& d : table)
      if (d.long_name == body.substr(0, eq)) def = &d;
    if (eq != std::string_view::npos) value = body.substr(eq + 1), inline_value = true;
  } else {
    char c = a.size() > 1 ? a[1] : '\0';
    for (const auto& d : table)
      if (d.short_name != 0 && d.short_name == c) def = &d;
    if (a.size() > 2) value = std::string_view(a).substr(2), inline_value = true;
  }
  return def;
}

// Applies the option at args[i] to `target`; advances i past a separate value it consumes.
// Errors read like getopt's: "unrecognized option '--x'", "option '-n' requires an argument";
// `error` (optional) says which kind.
template <typename Target>
Status apply_cli_option(const std::vector<CliOption<Target>>& table, const std::vector<std::string>& args, size_t& i,
                        Target& target, CliOptionError* error = nullptr) {
  const std::string& a = args[i];
  std::string_view value;
  bool inline_value = false;
  const CliOption<Target>* def = find_cli_option(table, a, value, inline_value);
  if (!def) {
    if (error) *error = CliOptionError{true, a, ""};
    return invalid(a.rfind("--", 0) == 0 ? "unrecognized option '" + a + "'" : "invalid option -- '" + a.substr(1) + "'");
  }
  if (def->optional_arg) return def->set(target, inline_value ? value : std::string_view());
  if (!def->has_arg) {
    if (inline_value) return invalid("option '" + a + "' takes no argument");
    return def->set(target, "");
  }
  if (!inline_value) {
    if (i + 1 >= args.size()) return invalid("option '" + a + "' requires an argument");
    value = args[++i];
  }
  Status s = def->set(target, value);
  if (!s && error) *error = CliOptionError{false, std::string(def->long_name), std::string(value)};
  return s;
}

// getopt's bundled short options spelled out: "-nX" is "-n" "-X", and "-nuroot" is "-n"
// "-uroot" (an option that takes a value takes the rest of the word). Words that are the
// separate value of the option before them, "--long" words, and bundles with a letter the
// table does not know stay as they are. args[0] (the command) is kept.
template <typename Target>
std::vector<std::string> expand_short_bundles(const std::vector<CliOption<Target>>& table,
                                              const std::vector<std::string>& args) {
  auto find = [&](char c) -> const CliOption<Target>* {
    for (const auto& d : table)
      if (d.short_name == c) return &d;
    return nullptr;
  };
  std::vector<std::string> out;
  bool value_next = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool skip = i == 0 || value_next || a.size() < 2 || a[0] != '-' || a[1] == '-';
    value_next = false;
    if (skip) {
      out.push_back(a);
      if (i > 0 && a.rfind("--", 0) == 0 && a.find('=') == std::string::npos)
        for (const auto& d : table)
          if (d.has_arg && !d.optional_arg && a.substr(2) == d.long_name) value_next = true;
      continue;
    }
    std::vector<std::string> parts;
    bool known = true;
    for (size_t k = 1; k < a.size(); ++k) {
      const auto* d = find(a[k]);
      if (!d) {
        known = false;
        break;
      }
      if (d->has_arg && !d->optional_arg) {
        parts.push_back("-" + a.substr(k));
        value_next = k + 1 == a.size();
        break;
      }
      parts.push_back(std::string("-") + a[k]);
    }
    if (!known) {
      out.push_back(a);
      continue;
    }
    out.insert(out.end(), parts.begin(), parts.end());
  }
  return out;
}

// Slurm's --help (and -h), --usage and -V/--version, which getopt answers where it meets them.
enum class MetaOption { kNone, kHelp, kUsage, kVersion };

// The first of them in `args` before the first non-option word, walking the options with
// `table` as getopt would (a value given as the next word is skipped, not read as an
// option); kNone when the words end, or an option unknown to `table` comes, first.
template <typename Target>
MetaOption find_meta_option(const std::vector<CliOption<Target>>& table, const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || a == "--") return MetaOption::kNone;
    if (a == "--help" || a == "-h") return MetaOption::kHelp;
    if (a == "--usage") return MetaOption::kUsage;
    if (a == "--version" || a == "-V") return MetaOption::kVersion;
    std::string_view value;
    bool inline_value = false;
    const CliOption<Target>* def = find_cli_option(table, a, value, inline_value);
    if (!def) return MetaOption::kNone;
    if (def->has_arg && !def->optional_arg && !inline_value) ++i;
  }
  return MetaOption::kNone;
}

}  // namespace hq
