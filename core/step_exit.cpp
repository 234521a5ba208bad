#include "core/step_exit.hpp"

#include <algorithm>
#include <cstring>
#include <sys/wait.h>

namespace hq {

std::string task_ranges(std::vector<uint32_t> tasks) {
  std::sort(tasks.begin(), tasks.end());
  tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
  std::string out;
  for (size_t i = 0; i < tasks.size();) {
    size_t j = i;
    while (j + 1 < tasks.size() && tasks[j + 1] == tasks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(tasks[i]);
    if (j > i) out += '-' + std::to_string(tasks[j]);
    i = j + 1;
  }
  return out;
}

std::string task_end_message(const TaskEnd& end) {
  std::string head = end.node + ": " + (end.tasks.size() == 1 ? "task " : "tasks ") + task_ranges(end.tasks) + ": ";
  if (end.oom) return head + "Out Of Memory";
  int s = end.wait_status;
  if (WIFEXITED(s)) return WEXITSTATUS(s) == 0 ? "" : head + "Exited with exit code " + std::to_string(WEXITSTATUS(s));
  if (!WIFSIGNALED(s)) return "";
  const char* name = strsignal(WTERMSIG(s));
  return head + (name ? name : "Signal " + std::to_string(WTERMSIG(s))) + (WCOREDUMP(s) ? " (core dumped)" : "");
}

void StepExitCode::add(const TaskEnd& end) {
  if (end.oom) oom_ = true;
  if (WIFSIGNALED(end.wait_status)) signal_ = std::max(signal_, WTERMSIG(end.wait_status));
  else if (WIFEXITED(end.wait_status)) exit_ = std::max(exit_, WEXITSTATUS(end.wait_status));
}

int StepExitCode::code() const {
  if (oom_) return 1;
  if (signal_ > 0) return 128 + signal_;
  return exit_;
}

std::string stepd_error_prefix(const std::string& node) { return "slurmstepd-" + node + ": error: "; }

std::string step_label(uint64_t job, uint32_t step) {
  return std::to_string(job) + "." + (step == kBatchStepId ? std::string("batch") : std::to_string(step));
}

std::string step_name(uint64_t job, uint32_t step) {
  std::string out = "StepId=" + std::to_string(job);
  out += '.';
  out += std::to_string(step);
  return out;
}

}  // namespace hq
