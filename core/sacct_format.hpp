// sacct's columns and lines as Slurm 22.05 prints them: the field table (names and widths of
// src/sacct/sacct.c), -o/--format parsing (case-insensitive name prefixes, "%N" widths, a
// negative N justifying to the left, "ALL"), and Slurm's print_fields rules: fixed width with
// a '+' marking a cut value and a space after every field, or -p ("value|") and -P ('|'
// between fields only), a header unless -n, a line of dashes in fixed width. Also the time
// window sacct picks when -S/-E are not given, and its value forms (exit codes, elapsed
// times, CPU times). Pure; thread-safe.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.hpp"
#include "core/time.hpp"

namespace hq {

struct SacctColumn {
  std::string_view name;  // as the table spells it ("JobID")
  int width = 0;          // negative: left-justified
};

// Slurm's formats: the default, -b and -l.
constexpr std::string_view kSacctDefaultFormat = "jobid,jobname,partition,account,alloccpus,state,exitcode";
constexpr std::string_view kSacctBriefFormat = "jobid,state,exitcode";
constexpr std::string_view kSacctLongFormat =
    "jobid,jobidraw,jobname,partition,maxvmsize,maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,"
    "maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,mincpu,mincpunode,mincputask,avecpu,ntasks,"
    "alloccpus,elapsed,state,exitcode,avecpufreq,reqcpufreqmin,reqcpufreqmax,reqcpufreqgov,reqmem,"
    "consumedenergy,maxdiskread,maxdiskreadnode,maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,"
    "maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,tresusageinmax,tresusageinmaxn,"
    "tresusageinmaxt,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,"
    "tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,tresusageouttot";

// Every field sacct knows, in Slurm's (alphabetical) table order.
const std::vector<SacctColumn>& sacct_fields();

// "jobid,jobname%30,state%-12": each name is the first table field it is a prefix of (any
// case); "ALL" (or a prefix of it) is every field. Errors in sacct's words:
// `Invalid field requested: "x"`, and for AllocGRES/ReqGRES that they were removed.
Result<std::vector<SacctColumn>> parse_sacct_format(std::string_view list);

enum class SacctPrint { kFixed, kParsable, kParsable2 };  // default, -p, -P

struct SacctStyle {
  SacctPrint mode = SacctPrint::kFixed;
  std::string delimiter = "|";  // --delimiter (parsable modes)
};

// The header line, and in fixed width the dashes line, each ending in '\n'.
std::string sacct_header(const std::vector<SacctColumn>& cols, const SacctStyle& style);
// One record's line ending in '\n'; `value(name)` gives a field's text by its table name.
std::string sacct_line(const std::vector<SacctColumn>& cols, const SacctStyle& style,
                       const std::function<std::string(std::string_view)>& value);

// The window sacct reads (Slurm's slurmdb_job_cond_def_start_end; 0 is "not set"): with
// states, -S defaults to now unless job ids are given, and -E to -S; without states and
// without job ids, -S defaults to today's `midnight` (in the caller's zone). -E stays unset
// otherwise: with job ids alone there is no window at all.
struct SacctWindow {
  Time start = 0, end = 0;
};
SacctWindow sacct_default_window(bool have_jobs, bool have_states, Time now, Time midnight, Time start_given,
                                 Time end_given);

// -s/--state: long names or Slurm's short codes (BF CA CD DL F NF OOM PD PR R RQ RS RV S TO),
// any case, comma-separated; the long names back. Error: `Invalid state: X`.
Result<std::vector<std::string>> parse_sacct_states(std::string_view list);

// "exit:signal" ("0:0", "3:0", "0:9"). ExitCode prints a code of 128+N as N, as Slurm's
// sacct does (137 is "9:0"); `derived` (DerivedExitCode) prints it as it is.
std::string sacct_exit_code(int32_t exit_code, int32_t signal, bool derived = false);
// Elapsed, Timelimit and the like: "[D-]HH:MM:SS"; "INVALID" below zero.
std::string sacct_duration(Duration seconds);
// TotalCPU and the other CPU times: "D-HH:MM:SS" from a day, "HH:MM:SS" from an hour,
// "MM:SS.mmm" below that.
std::string sacct_cpu_time(int64_t usec);
// MaxRSS and other byte counts as sacct converts them (CONVERT_NUM_UNIT_EXACT): divided by
// 1024 while that loses nothing (halves still count), with K/M/G/T/P, two decimals when not
// whole ("2104K", "1.50G"; "0" for 0).
std::string sacct_bytes(int64_t bytes);

}  // namespace hq
