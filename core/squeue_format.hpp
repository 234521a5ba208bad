// squeue's -o/--format and -O/--Format (core/column_format): the field letters and names
// squeue knows, as Slurm 22.05 spells them, and each field's column title. Fields that
// Slurm names but has no letter for get a digit as their code. Pure; thread-safe.
#pragma once
#include <string>
#include <string_view>

#include "core/column_format.hpp"

namespace hq {

// squeue's default: "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R".
constexpr std::string_view kSqueueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
// squeue -l: the long layout.
// --start's (pending jobs with their expected start, sorted by it).
constexpr std::string_view kSqueueStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";
constexpr std::string_view kSqueueLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";

// Codes of the -O fields Slurm has no letter for.
inline constexpr char kSqNumTasks = '1', kSqExitCode = '2', kSqStdOut = '3', kSqStdErr = '4', kSqStdIn = '5',
                      kSqTimeMin = '6', kSqDeadline = '7', kSqCpusPerTask = '8', kSqRestarts = '9',
                      kSqReqSwitch = '0', kSqWait4Switch = '\x01';

ColumnFormat parse_squeue_format(std::string_view text);  // -o
ColumnFormat parse_squeue_fields(std::string_view text);  // -O

// The column title of a field code ("" for one squeue does not know).
std::string_view squeue_header(char field);

// The -O name of a field ("JobID" in any case) to its code; 0 for none.
char squeue_field_code(std::string_view name);

}  // namespace hq
