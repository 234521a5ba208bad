// Parsing and formatting of Slurm time specs ("1-02:03:04", "90") and sizes ("4G").
// Pure functions; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "core/time.hpp"

namespace hq {

// Slurm --time forms: "M", "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S", plus
// "UNLIMITED"/"INFINITE" (-> kUnlimited) and unit forms "30s", "5m", "2h", "1d".
// Returns seconds. "0" means unlimited, as in Slurm.
Result<Duration> parse_duration(std::string_view text);

// A time limit from a user (sbatch/srun/salloc -t and --time-min, scontrol update
// TimeLimit=/TimeMin=, a partition's MaxTime/DefaultTime, a reservation's Duration) as
// Slurm 22.05 reads one (time_str2mins, src/common/parse_time.c): whole minutes, a seconds
// part rounding up to the next minute ("0:05" -> 60, "1:30" -> 120, "5" -> 300); "0", "0:0",
// "-1", "UNLIMITED" and "INFINITE" -> kUnlimited. hq's unit forms ("30s", "5m") are not
// Slurm's and keep their exact seconds. Returns seconds. Other durations (config values,
// timeouts) keep parse_duration's seconds.
Result<Duration> parse_time_limit(std::string_view text);

// "D-HH:MM:SS" with the day part only when non-zero, "HH:MM:SS" otherwise,
// or "UNLIMITED" (Slurm's time-limit column form).
std::string format_limit(Duration seconds);
// squeue's elapsed-time form: "M:SS", "H:MM:SS", "D-HH:MM:SS".
std::string format_elapsed(Duration seconds);

// Memory sizes in MiB: "512" (MiB), "512K", "64M", "4G", "1T" (case-insensitive).
Result<int64_t> parse_size_mib(std::string_view text);
// A size in MiB as Slurm prints memory: the largest unit that divides it exactly ("500M",
// "4G", "2T"); "0" for 0.
std::string format_size_mib(int64_t mib);

// Splits at every `sep`, keeping empty pieces ("a,,b" -> "a", "", "b"; "" -> "").
std::vector<std::string_view> split(std::string_view s, char sep);

// Without leading and trailing whitespace (spaces, tabs, CR, LF).
std::string_view trim(std::string_view s);

// ASCII lower case.
std::string to_lower(std::string_view s);
// Slurm's "(null)" for an empty value, the value otherwise.
inline std::string or_null(const std::string& s) { return s.empty() ? "(null)" : s; }
// The strings of `items` (any range of them: a vector, a protobuf repeated field) with
// commas between: "a,b,c".
template <typename Strings>
std::string comma_joined(const Strings& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}
// Equal but for ASCII case ("JobID" and "jobid").
bool iequals(std::string_view a, std::string_view b);
// The last part of a path ("/bin/true" -> "true").
std::string base_name(std::string_view path);

// "a,b,a," -> {"a", "b"}: distinct, non-empty, in order of first appearance.
std::vector<std::string> split_list(std::string_view s);

// Strict non-negative integer parse with range check.
Result<int64_t> parse_int(std::string_view text, int64_t min, int64_t max);

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d);
// "HH:MM[:SS]" as seconds after midnight.
Result<int64_t> clock_seconds(std::string_view t);
// ISO-8601 UTC "YYYY-MM-DDTHH:MM:SS" for display; pure arithmetic, no TZ lookup.
std::string format_timestamp(Time t);

}  // namespace hq
