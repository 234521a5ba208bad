// squeue's -o/--format: "%[.][width]letter" items between literal text, as Slurm 22.05
// reads them. A width is a minimum and a maximum (longer values are cut); "." justifies to
// the right; "%%" is a percent sign. An unknown letter is kept as literal text and named
// in `errors` ("Invalid job format specification: X", squeue's words). The header of each
// field is Slurm's. Pure; thread-safe.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hq {

struct FormatItem {
  std::string literal;  // text printed as it is (field 0)
  char field = 0;       // the letter, e.g. 'i'
  int width = 0;        // 0: as wide as the value
  bool right = false;   // "%.8j"
};

struct SqueueFormat {
  std::vector<FormatItem> items;
  std::vector<std::string> errors;
};

// squeue's default: "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R".
constexpr std::string_view kSqueueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";

SqueueFormat parse_squeue_format(std::string_view text);

// The column title of a field letter ("" for one squeue does not know).
std::string_view squeue_header(char field);

// `value` fitted to the item: cut to its width, padded on the left (".") or the right.
std::string fit_cell(const std::string& value, const FormatItem& item);

}  // namespace hq
