#include "core/mail.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace hq {
namespace {

struct MailType {
  std::string_view name;
  uint32_t bits;
};
constexpr MailType kTypes[] = {
    {"BEGIN", kMailBegin},           {"END", kMailEnd},
    {"FAIL", kMailFail},             {"REQUEUE", kMailRequeue},
    {"INVALID_DEPEND", kMailInvalidDepend}, {"STAGE_OUT", kMailStageOut},
    {"TIME_LIMIT", kMailTime100},    {"TIME_LIMIT_90", kMailTime90},
    {"TIME_LIMIT_80", kMailTime80},  {"TIME_LIMIT_50", kMailTime50},
    {"ARRAY_TASKS", kMailArrayTasks},
};
constexpr uint32_t kMailAll = kMailBegin | kMailEnd | kMailFail | kMailRequeue | kMailInvalidDepend | kMailStageOut;

bool summarized(const Job& job) {
  return job.array_job_id != 0 && !(mail_bits(job.spec.extra->mail_type) & kMailArrayTasks);
}

bool is_end(JobState s) { return is_terminal(s); }

}  // namespace

Result<std::string> parse_mail_types(std::string_view text) {
  uint32_t bits = 0;
  bool none = false;
  for (std::string_view item : split(text, ',')) {
    std::string up = to_lower(trim(item));
    for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (up == "NONE") none = true;
    else if (up == "ALL") bits |= kMailAll;
    else {
      auto it = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const MailType& t) { return t.name == up; });
      if (it == std::end(kTypes)) return invalid("Invalid --mail-type specification");
      bits |= it->bits;
    }
  }
  if (none && bits == 0) return std::string();
  std::string out;
  for (const auto& t : kTypes)
    if (bits & t.bits) out += (out.empty() ? "" : ",") + std::string(t.name);
  return out;
}

uint32_t mail_bits(std::string_view canonical) {
  uint32_t bits = 0;
  for (std::string_view item : split(canonical, ','))
    for (const auto& t : kTypes)
      if (t.name == item) bits |= t.bits;
  return bits;
}

std::vector<MailEvent> mails_for_start(const Job& job, const std::vector<const Job*>& tasks) {
  if (!(mail_bits(job.spec.extra->mail_type) & kMailBegin)) return {};
  if (summarized(job))  // the array's first task to start
    for (const Job* t : tasks)
      if (t != &job && t->start_time > 0 && (t->start_time < job.start_time || t->id < job.id)) return {};
  return {MailEvent::kBegin};
}

std::vector<MailEvent> mails_for_end(const Job& job, const std::vector<const Job*>& tasks, bool requeued) {
  uint32_t bits = mail_bits(job.spec.extra->mail_type);
  if (bits == 0) return {};
  if (requeued) return bits & kMailRequeue ? std::vector<MailEvent>{MailEvent::kRequeued} : std::vector<MailEvent>{};
  if (summarized(job) && std::any_of(tasks.begin(), tasks.end(), [](const Job* t) { return !is_end(t->state); }))
    return {};  // the array's last task decides
  std::vector<MailEvent> out;
  if (job.state == JobState::kTimeout && (bits & kMailTime100)) out.push_back(MailEvent::kTimeLimit);
  if (job.reason == JobReason::kDependencyNeverSatisfied && (bits & kMailInvalidDepend))
    out.push_back(MailEvent::kInvalidDepend);
  bool ok = job.state == JobState::kCompleted || job.state == JobState::kCancelled;
  if (ok && (bits & kMailEnd)) out.push_back(MailEvent::kEnded);
  if (!ok && (bits & kMailFail)) out.push_back(MailEvent::kFailed);
  else if (!ok && (bits & kMailEnd)) out.push_back(MailEvent::kEnded);
  return out;
}

namespace {

std::string_view what(MailEvent e) {
  switch (e) {
    case MailEvent::kBegin: return "Began";
    case MailEvent::kEnded: return "Ended";
    case MailEvent::kFailed: return "Failed";
    case MailEvent::kRequeued: return "Requeued";
    case MailEvent::kInvalidDepend: return "Invalid dependency";
    case MailEvent::kTimeLimit: return "Reached time limit";
  }
  return "unknown";
}

std::string times(const Job& j, MailEvent e) {
  if (e == MailEvent::kBegin && j.start_time > 0 && j.submit_time > 0)
    return ", Queued time " + format_limit(j.start_time - j.submit_time);
  bool ends = e == MailEvent::kEnded || e == MailEvent::kFailed || e == MailEvent::kRequeued || e == MailEvent::kTimeLimit;
  if (ends && j.start_time > 0 && j.end_time > 0) return ", Run time " + format_limit(j.end_time - j.start_time);
  return "";
}

std::string term(const Job& j, const std::vector<const Job*>& tasks, MailEvent e, bool summary) {
  if (e != MailEvent::kEnded && e != MailEvent::kFailed) return "";
  std::string state(job_state_name(j.state));
  if (!summary) return ", " + state + ", ExitCode " + std::to_string(j.exit_code);
  int32_t lo = j.exit_code, hi = j.exit_code;
  for (const Job* t : tasks) lo = std::min(lo, t->exit_code), hi = std::max(hi, t->exit_code);
  return ", " + (lo == 0 && hi > 0 ? std::string("Mixed") : state) + ", ExitCode [" + std::to_string(lo) + "-" +
         std::to_string(hi) + "]";
}

}  // namespace

std::string mail_subject(const Job& j, const std::vector<const Job*>& tasks, MailEvent e) {
  if (summarized(j))
    return "Slurm Array Summary Job_id=" + std::to_string(j.array_job_id) + "_* (" + std::to_string(j.array_job_id) +
           ") Name=" + j.spec.name + " " + std::string(what(e)) + term(j, tasks, e, true);
  if (j.array_job_id != 0)
    return "Slurm Array Task Job_id=" + std::to_string(j.array_job_id) + "_" + std::to_string(j.array_task_id) + " (" +
           std::to_string(j.id.value) + ") Name=" + j.spec.name + " " + std::string(what(e)) + times(j, e) +
           term(j, tasks, e, false);
  return "Slurm Job_id=" + std::to_string(j.id.value) + " Name=" + j.spec.name + " " + std::string(what(e)) +
         times(j, e) + term(j, tasks, e, false);
}

}  // namespace hq
