// One getopt_long-like parser for the Slurm-style commands' option tables (sbatch's
// submit options, srun's step options): "--name=value", "--name value", "-xVALUE",
// "-x value" and flags. Each command keeps a table of CliOption<Target>. Pure.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"

namespace hq {

// Slurm's --help (and -h), --usage and -V/--version, which getopt answers where it meets them.
enum class MetaOption { kNone, kHelp, kUsage, kVersion };

template <typename Target>
struct CliOption {
  std::string_view long_name;
  char short_name = 0;
  bool has_arg = false;
  std::function<Status(Target&, std::string_view)> set;
  bool optional_arg = false;  // a value only in the same word ("--x=1", "-x1"); else ""
  std::string_view doc = {};  // help text for docs/slurm-compat.md (core/option_doc.hpp's status prefixes)
  std::string_view alias_for = {};  // the long name of the option this entry is another name of
  // Set by rank_as_slurm(): where Slurm's getopt table has this name (1, 2, ...; 0: unranked),
  // and whether only the whole name is taken (an option of hq's that Slurm's table lacks, which
  // must not make a Slurm abbreviation ambiguous or mean something else).
  int getopt_rank = 0;
  bool exact_only = false;
  MetaOption meta = MetaOption::kNone;  // an entry that is --help/--usage/--version (no `set`)
};

// getopt's words (glibc 2.36) for what it refuses, as Slurm's commands print them after
// "PROG: ". `word` is the option as typed, `name` an option's full long name.
inline std::string getopt_unknown(std::string_view word) {
  if (word.size() > 1 && word[1] == '-') return "unrecognized option '" + std::string(word) + "'";
  return "invalid option -- '" + std::string(word.substr(std::min<size_t>(1, word.size()), 1)) + "'";
}
inline std::string getopt_ambiguous(std::string_view word, const std::vector<std::string_view>& names) {
  std::string text = "option '" + std::string(word) + "' is ambiguous; possibilities:";
  for (std::string_view n : names) text += " '--" + std::string(n) + "'";
  return text;
}
inline std::string getopt_missing_value(char letter, std::string_view name) {
  if (letter) return std::string("option requires an argument -- '") + letter + "'";
  return "option '--" + std::string(name) + "' requires an argument";
}
inline std::string getopt_value_not_allowed(std::string_view name) {
  return "option '--" + std::string(name) + "' doesn't allow an argument";
}
// Whether `message` is one of getopt's refusals above (which commands follow with their
// "Try ... --help" line), not a value an option refused.
inline bool is_getopt_message(std::string_view message) {
  auto starts = [&](std::string_view p) { return message.substr(0, p.size()) == p; };
  auto ends = [&](std::string_view p) { return message.size() >= p.size() && message.substr(message.size() - p.size()) == p; };
  if (starts("unrecognized option '") || starts("invalid option -- '") || starts("option requires an argument -- '"))
    return true;
  return starts("option '--") &&
         (ends("' requires an argument") || ends("' doesn't allow an argument") || message.find("' is ambiguous; possibilities:") != std::string_view::npos);
}

// What failed when apply_cli_option() did: getopt's refusals (an option it does not know,
// an abbreviation of several, a missing value, a value to an option that takes none), or
// a value the option's own setter refused (`name`: its long name; `value` as given).
enum class CliFault { kNone, kUnknown, kAmbiguous, kMissingValue, kValueNotAllowed, kBadValue };
struct CliOptionError {
  CliFault fault = CliFault::kNone;
  std::string name, value;  // kUnknown, kAmbiguous: `name` is the word as typed
  std::string message;      // getopt's words, for its refusals
  bool getopt() const { return fault != CliFault::kNone && fault != CliFault::kBadValue; }
};

// getopt_long's reading of an option word ("--name", "--name=value", "-x", "-xvalue"): the
// table's entry, or one of --help/--usage/--version where the table has none for them. A long
// name may be abbreviated to a prefix that only one option begins with; an exact name always
// wins, and an entry whose alias_for names another is that option again, not a second one.
// Several are listed as glibc lists them: the first match, then each later one that is not
// that same option, in Slurm's table order where the table is ranked (rank_as_slurm).
template <typename Target>
struct CliMatch {
  const CliOption<Target>* def = nullptr;
  MetaOption meta = MetaOption::kNone;
  std::vector<std::string_view> ambiguous;  // the options an abbreviation begins, when several
  std::string_view value;                   // the value given in the same word
  bool inline_value = false;
};

namespace cli_detail {
struct MetaName {
  std::string_view name;
  MetaOption meta;
};
inline constexpr MetaName kMetaNames[] = {{"help", MetaOption::kHelp}, {"usage", MetaOption::kUsage}, {"version", MetaOption::kVersion}};

inline std::string_view meta_name(MetaOption meta) {
  for (const auto& mn : kMetaNames)
    if (mn.meta == meta) return mn.name;
  return {};
}

template <typename Target>
bool has_long_name(const std::vector<CliOption<Target>>& table, std::string_view name) {
  return std::any_of(table.begin(), table.end(), [&](const auto& d) { return d.long_name == name; });
}
template <typename Target>
std::string_view option_identity(const CliOption<Target>& d) {
  return d.alias_for.empty() ? d.long_name : d.alias_for;
}
}  // namespace cli_detail

template <typename Target>
CliMatch<Target> match_long_option(const std::vector<CliOption<Target>>& table, std::string_view word) {
  CliMatch<Target> m;
  if (word.size() < 2) return m;
  std::string_view body = word.substr(2);
  size_t eq = body.find('=');
  if (eq != std::string_view::npos) m.value = body.substr(eq + 1), m.inline_value = true;
  std::string_view name = body.substr(0, eq);
  for (const auto& d : table)
    if (d.long_name == name) {
      if (d.meta != MetaOption::kNone) return m.meta = d.meta, m;
      return m.def = &d, m;
    }
  for (const auto& mn : cli_detail::kMetaNames)
    if (mn.name == name && !cli_detail::has_long_name(table, mn.name)) return m.meta = mn.meta, m;
  if (name.empty()) return m;
  // The options the prefix begins, in Slurm's table order where the table is ranked
  // (rank_as_slurm), else in the table's; --help/--usage/--version the table lacks last.
  struct Candidate {
    std::string_view name, identity;
    const CliOption<Target>* def;
    MetaOption meta;
    int rank;
  };
  std::vector<Candidate> found;
  for (const auto& d : table)
    if (!d.exact_only && d.long_name.substr(0, name.size()) == name)
      found.push_back({d.long_name, cli_detail::option_identity(d), &d, MetaOption::kNone,
                       d.getopt_rank ? d.getopt_rank : INT32_MAX});
  for (const auto& mn : cli_detail::kMetaNames)
    if (mn.name.substr(0, name.size()) == name && !cli_detail::has_long_name(table, mn.name))
      found.push_back({mn.name, mn.name, nullptr, mn.meta, INT32_MAX});
  std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
  if (found.empty()) return m;
  // glibc's rule: the first option the prefix begins is the match; each later one that is not
  // that same option makes it ambiguous, and is listed after it.
  m.def = found[0].def, m.meta = found[0].meta;
  m.ambiguous.push_back(found[0].name);
  for (size_t k = 1; k < found.size(); ++k)
    if (found[k].identity != found[0].identity) m.ambiguous.push_back(found[k].name);
  if (m.ambiguous.size() > 1) return m.def = nullptr, m.meta = MetaOption::kNone, m;
  m.ambiguous.clear();
  if (m.def && m.def->meta != MetaOption::kNone) m.meta = m.def->meta, m.def = nullptr;
  return m;
}

// Adds `name` as another name of the table's option `of` (Slurm's getopt tables have several
// such: squeue's --user and --users): the same setter, and an abbreviation of both is not
// ambiguous (alias_for).
template <typename Target>
void add_alias(std::vector<CliOption<Target>>& table, std::string_view name, std::string_view of) {
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i].long_name == of) {
      CliOption<Target> alias = table[i];  // before rank_as_slurm, which ranks it as its own name
      alias.long_name = name, alias.short_name = 0, alias.doc = {};
      alias.getopt_rank = 0, alias.exact_only = false;
      alias.alias_for = table[i].alias_for.empty() ? of : table[i].alias_for;
      table.push_back(std::move(alias));
      return;
    }
}

// Ranks `table` as Slurm's getopt table for the command orders its long names
// (`slurm_names`, in that order), which is how getopt lists an ambiguous abbreviation's
// possibilities. An entry whose name Slurm's table lacks is one of hq's own: it is taken
// only by its whole name, so that every abbreviation means what it means to Slurm's command.
// --help, --usage and --version that `slurm_names` has and the table lacks are added, at their
// place, as entries that answer them.
template <typename Target>
void rank_as_slurm(std::vector<CliOption<Target>>& table, const std::vector<std::string_view>& slurm_names) {
  auto rank_of = [&](std::string_view name) {
    auto it = std::find(slurm_names.begin(), slurm_names.end(), name);
    return it == slurm_names.end() ? 0 : static_cast<int>(it - slurm_names.begin()) + 1;
  };
  for (auto& d : table) {
    d.getopt_rank = rank_of(d.long_name);
    d.exact_only = d.getopt_rank == 0;
  }
  for (const auto& mn : cli_detail::kMetaNames)
    if (int rank = rank_of(mn.name); rank && !cli_detail::has_long_name(table, mn.name)) {
      CliOption<Target> entry{mn.name, 0, false, nullptr};
      entry.getopt_rank = rank;
      entry.meta = mn.meta;
      table.push_back(std::move(entry));
    }
}

// What getopt_long says of "--PREFIX" alone (and, for an option that takes no value, of
// "--PREFIX="), in the words of tests/fixtures/slurm/getopt/prefixes.sh: its refusal, or
// "(taken)" for an option that may go without a value.
template <typename Target>
std::string getopt_prefix_answer(const std::vector<CliOption<Target>>& table, std::string_view prefix) {
  std::string word = "--" + std::string(prefix);
  CliMatch<Target> m = match_long_option(table, word);
  if (!m.ambiguous.empty()) return getopt_ambiguous(word, m.ambiguous);
  if (m.meta != MetaOption::kNone) return getopt_value_not_allowed(cli_detail::meta_name(m.meta));
  if (!m.def) return getopt_unknown(word);
  if (m.def->optional_arg) return "(taken)";
  if (m.def->has_arg) return getopt_missing_value(0, m.def->long_name);
  return getopt_value_not_allowed(m.def->long_name);
}

template <typename Target>
CliMatch<Target> match_cli_option(const std::vector<CliOption<Target>>& table, std::string_view word) {
  if (word.substr(0, 2) == "--") return match_long_option(table, word);
  CliMatch<Target> m;
  char c = word.size() > 1 ? word[1] : '\0';
  for (const auto& d : table)
    if (d.short_name != 0 && d.short_name == c) m.def = &d;
  if (!m.def && word.size() == 2 && (c == 'h' || c == 'V')) m.meta = c == 'h' ? MetaOption::kHelp : MetaOption::kVersion;
  if (word.size() > 2) m.value = word.substr(2), m.inline_value = true;
  return m;
}

// Applies the option at args[i] to `target`; advances i past a separate value it consumes.
// Errors read like getopt's (above); `error` (optional) says which kind.
template <typename Target>
Status apply_cli_option(const std::vector<CliOption<Target>>& table, const std::vector<std::string>& args, size_t& i,
                        Target& target, CliOptionError* error = nullptr) {
  const std::string& a = args[i];
  CliMatch<Target> m = match_cli_option(table, a);
  const bool is_long = a.rfind("--", 0) == 0;
  auto refuse = [&](CliFault fault, std::string name, std::string message) {
    if (error) *error = CliOptionError{fault, std::move(name), "", message};
    return invalid(std::move(message));
  };
  if (!m.ambiguous.empty()) return refuse(CliFault::kAmbiguous, a, getopt_ambiguous(a, m.ambiguous));
  const CliOption<Target>* def = m.def;
  if (!def && m.meta != MetaOption::kNone && m.inline_value) {  // "--version=1"
    std::string_view name = cli_detail::meta_name(m.meta);
    return refuse(CliFault::kValueNotAllowed, std::string(name), getopt_value_not_allowed(name));
  }
  if (!def) return refuse(CliFault::kUnknown, a, getopt_unknown(a));  // a meta option here is one a caller let by
  std::string_view value = m.value;
  if (def->optional_arg) return def->set(target, m.inline_value ? value : std::string_view());
  if (!def->has_arg) {
    if (!m.inline_value) return def->set(target, "");
    if (is_long) return refuse(CliFault::kValueNotAllowed, std::string(def->long_name), getopt_value_not_allowed(def->long_name));
    size_t k = 2;  // "-Hx": a bundle with a letter the table does not know (known ones were spelled out)
    while (k < a.size() && match_cli_option(table, std::string("-") + a[k]).def) ++k;
    return refuse(CliFault::kUnknown, a, "invalid option -- '" + a.substr(std::min(k, a.size() - 1), 1) + "'");
  }
  if (!m.inline_value) {
    if (i + 1 >= args.size())
      return refuse(CliFault::kMissingValue, std::string(def->long_name), getopt_missing_value(is_long ? 0 : a[1], def->long_name));
    value = args[++i];
  }
  Status s = def->set(target, value);
  if (!s && error) *error = CliOptionError{CliFault::kBadValue, std::string(def->long_name), std::string(value), ""};
  return s;
}

// Whether the option word ("-o", "--form") takes the next word as its value.
template <typename Target>
bool takes_next_word(const std::vector<CliOption<Target>>& table, std::string_view word) {
  CliMatch<Target> m = match_cli_option(table, word);
  return m.def && m.def->has_arg && !m.def->optional_arg && !m.inline_value;
}

// The option's full long name for a word ("--form=x" -> "format"); "" when none or several.
template <typename Target>
std::string_view long_option_name(const std::vector<CliOption<Target>>& table, std::string_view word) {
  CliMatch<Target> m = match_long_option(table, word);
  return m.def ? m.def->long_name : std::string_view();
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
    static const CliOption<Target> kMetaLetter{"", 0, false, nullptr};  // -h, -V where the table lacks them
    return c == 'h' || c == 'V' ? &kMetaLetter : nullptr;
  };
  std::vector<std::string> out;
  bool value_next = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool skip = i == 0 || value_next || a.size() < 2 || a[0] != '-' || a[1] == '-';
    value_next = false;
    if (skip) {
      out.push_back(a);
      if (i > 0 && a.rfind("--", 0) == 0) value_next = takes_next_word(table, a);
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

// The first --help, --usage or --version (or -h, -V, or an abbreviation, where the table has
// no option of that name or letter) in `args` before the first non-option word, walking the options with
// `table` as getopt would (a value given as the next word is skipped, not read as an
// option); kNone when the words end, or an option unknown to `table` comes, first.
template <typename Target>
MetaOption find_meta_option(const std::vector<CliOption<Target>>& table, const std::vector<std::string>& words) {
  std::vector<std::string> args = {""};  // bundles spelled out ("-HV" is "-H" "-V"); [0] stands for the command
  args.insert(args.end(), words.begin(), words.end());
  args = expand_short_bundles(table, args);
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || a == "--") return MetaOption::kNone;
    CliMatch<Target> m = match_cli_option(table, a);
    if (m.meta != MetaOption::kNone) return m.inline_value ? MetaOption::kNone : m.meta;  // "--version=1": refused later
    if (!m.def) return MetaOption::kNone;
    if (m.def->has_arg && !m.def->optional_arg && !m.inline_value) ++i;
  }
  return MetaOption::kNone;
}

}  // namespace hq
