#include "core/squeue_format.hpp"

#include <map>

#include "core/units.hpp"

namespace hq {
namespace {

struct SqueueField {
  std::string_view name;  // -O's
  char code;
  std::string_view header;
};

// The fields hq fills, Slurm 22.05's names and titles (src/squeue/opts.c and print.c).
constexpr SqueueField kFields[] = {
    {"Account", 'a', "ACCOUNT"},          {"ArrayJobId", 'F', "ARRAY_JOB_ID"},   {"ArrayTaskId", 'K', "ARRAY_TASK_ID"},
    {"BatchHost", 'B', "EXEC_HOST"},      {"Command", 'o', "COMMAND"},           {"Comment", 'k', "COMMENT"},
    {"Dependency", 'E', "DEPENDENCY"},    {"EndTime", 'e', "END_TIME"},          {"ExcNodes", 'x', "EXC_NODES"},
    {"Feature", 'f', "FEATURES"},         {"GroupId", 'G', "GROUP"},             {"GroupName", 'g', "GROUP"},
    {"JobArrayId", 'i', "JOBID"},         {"JobId", 'A', "JOBID"},               {"MinCPUs", 'c', "MIN_CPUS"},
    {"MinMemory", 'm', "MIN_MEMORY"},     {"Name", 'j', "NAME"},                 {"Nice", 'y', "NICE"},
    {"NodeList", 'N', "NODELIST"},        {"NumCPUs", 'C', "CPUS"},              {"NumNodes", 'D', "NODES"},
    {"Partition", 'P', "PARTITION"},      {"PriorityLong", 'Q', "PRIORITY"},     {"QOS", 'q', "QOS"},
    {"Reason", 'r', "REASON"},            {"ReasonList", 'R', "NODELIST(REASON)"}, {"ReqNodes", 'n', "REQ_NODES"},
    {"Reservation", 'v', "RESERVATION"},
    {"SchedNodes", 'Y', "SCHEDNODES"},    {"StartTime", 'S', "START_TIME"},      {"State", 'T', "STATE"},
    {"StateCompact", 't', "ST"},          {"SubmitTime", 'V', "SUBMIT_TIME"},    {"TimeLeft", 'L', "TIME_LEFT"},
    {"TimeLimit", 'l', "TIME_LIMIT"},     {"TimeUsed", 'M', "TIME"},             {"UserId", 'U', "UID"},
    {"UserName", 'u', "USER"},            {"WCKey", 'w', "WCKEY"},               {"WorkDir", 'Z', "WORK_DIR"},
    {"NumTasks", kSqNumTasks, "TASKS"},   {"exit_code", kSqExitCode, "EXIT_CODE"}, {"StdOut", kSqStdOut, "STDOUT"},
    {"StdErr", kSqStdErr, "STDERR"},      {"StdIn", kSqStdIn, "STDIN"},          {"MinTime", kSqTimeMin, "TIME_MIN"},
    {"Deadline", kSqDeadline, "DEADLINE"}, {"CPUsPerTask", kSqCpusPerTask, "CPUS_PER_TASK"},
    {"cpus-per-task", kSqCpusPerTask, "CPUS_PER_TASK"}, {"RestartCnt", kSqRestarts, "RESTART_COUNT"},
    {"ReqSwitch", kSqReqSwitch, "REQ_SWITCH"}, {"Wait4Switch", kSqWait4Switch, "WAIT4SWITCH"},
};

}  // namespace

std::string_view squeue_header(char field) {
  for (const auto& f : kFields)
    if (f.code == field) return f.header;
  return {};
}

char squeue_field_code(std::string_view name) {
  for (const auto& f : kFields)
    if (iequals(f.name, name)) return f.code;
  return 0;
}

ColumnFormat parse_squeue_format(std::string_view text) {
  return parse_percent_format(text, [](char c) { return !squeue_header(c).empty(); },
                              "Invalid job format specification: ");
}

ColumnFormat parse_squeue_fields(std::string_view text) {
  return parse_named_format(text, squeue_field_code, "Invalid job format specification: ");
}

}  // namespace hq
