// The rows of docs/slurm-compat.md's option tables, made from the commands' own option
// tables (CliOption lists, CLI11 apps), so that the page says what the code does. An
// option's help text says its status: "taken: WHY" (accepted, changes nothing on hq),
// "refused: WHY", anything else "works". Pure.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hq {

struct OptionDocRow {
  std::string names;  // "`-j`, `--jobs`"
  std::string help;   // the option's help text, status prefix and all
};

// One markdown table: | Option | On hq | What it does |, a row per option, in the order given.
std::string option_doc_table(const std::vector<OptionDocRow>& rows);

// The names of an option as the table shows them: short first, then the long ones.
std::string option_doc_names(char short_name, const std::vector<std::string_view>& long_names);

}  // namespace hq
