// The column formats of Slurm's listing commands, as Slurm 22.05 reads them: squeue's and
// sinfo's -o/--format ("%[.][width]letter" items between literal text) and -O/--Format
// ("name[:[.]width][suffix]" items, comma-separated, 20 wide by default). A width is a
// minimum and a maximum (longer values are cut); "." justifies to the right. Each command
// says which letters and names it knows (core/squeue_format, core/sinfo_format). Pure;
// thread-safe.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hq {

struct FormatItem {
  std::string literal;  // text printed as it is (field 0)
  char field = 0;       // the field's code: its letter, or a digit for fields without one
  int width = 0;        // 0: as wide as the value
  bool right = false;   // "%.8j"
};

struct ColumnFormat {
  std::vector<FormatItem> items;
  std::vector<std::string> errors;  // one line each, in the command's words
};

// -o: `known` says whether a letter is a field. An unknown one is kept as literal text
// and named in an error, "<unknown_prefix>X" ("Invalid job format specification: ").
// "%%" is a percent sign.
ColumnFormat parse_percent_format(std::string_view text, const std::function<bool(char)>& known,
                                  std::string_view unknown_prefix);

// -O: `code_of` gives a name's code (names in any case), 0 for an unknown name, which is
// named in an error ("<unknown_prefix>NAME") and leaves only its suffix.
ColumnFormat parse_named_format(std::string_view text, const std::function<char(std::string_view)>& code_of,
                                std::string_view unknown_prefix);

// `value` fitted to the item: cut to its width, padded on the left (".") or the right.
std::string fit_cell(const std::string& value, const FormatItem& item);

// The same appended to `out`, without a copy of the value.
void append_cell(std::string& out, std::string_view value, const FormatItem& item);

// One line: each field's cell (from `cell(code)`) fitted, literals as they are.
std::string format_line(const ColumnFormat& format, const std::function<std::string(char)>& cell);
// The same appended to `out` (a listing builds all its lines in one buffer).
void append_line(std::string& out, const ColumnFormat& format, const std::function<std::string(char)>& cell);

}  // namespace hq
