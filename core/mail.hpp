// Job mail as Slurm sends it (--mail-type, --mail-user): the types sbatch takes, which
// changes of a job send which mail, and Slurm's subject line for each ("Slurm Job_id=12
// Name=train Ended, Run time 00:01:02, COMPLETED, ExitCode 0"). An array without
// ARRAY_TASKS mails once for the whole array: when its first task starts and when its last
// task ends (with the tasks' exit code range). Pure; thread-safe.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.hpp"
#include "core/status.hpp"

namespace hq {

enum MailBits : uint32_t {
  kMailBegin = 1, kMailEnd = 2, kMailFail = 4, kMailRequeue = 8, kMailInvalidDepend = 16, kMailStageOut = 32,
  kMailTime100 = 64, kMailTime90 = 128, kMailTime80 = 256, kMailTime50 = 512, kMailArrayTasks = 1024,
};

// --mail-type: a comma list of NONE, BEGIN, END, FAIL, REQUEUE, ALL, INVALID_DEPEND,
// STAGE_OUT, TIME_LIMIT, TIME_LIMIT_90, TIME_LIMIT_80, TIME_LIMIT_50, ARRAY_TASKS in any
// case; the canonical upper-case list ("" for NONE). Unknown: Slurm's
// "Invalid --mail-type specification".
Result<std::string> parse_mail_types(std::string_view text);
uint32_t mail_bits(std::string_view canonical);

enum class MailEvent { kBegin, kEnded, kFailed, kRequeued, kInvalidDepend, kTimeLimit };

// The mail a job's change sends, given the job after it (`tasks`: every task of its array,
// itself included, for an array; else empty). `started`: it just started; else it just
// ended (`requeued`: and is queued again).
std::vector<MailEvent> mails_for_start(const Job& job, const std::vector<const Job*>& tasks);
std::vector<MailEvent> mails_for_end(const Job& job, const std::vector<const Job*>& tasks, bool requeued);

// Slurm's subject (src/slurmctld/agent.c mail_job_info).
std::string mail_subject(const Job& job, const std::vector<const Job*>& tasks, MailEvent e);

}  // namespace hq
