// How srun reports the ends of a step's tasks, as Slurm 22.05 does: one line per group of
// tasks that ended the same way on one node ("n3: tasks 4-5: Exited with exit code 2",
// "n1: task 0: Killed"), and srun's own exit code for the step: a task killed by a signal
// beats any exit code, the highest signal or code wins, an OOM kill beats everything (and
// makes 1), a signal makes 128 + its number; and how slurmstepd's own lines in a step's or
// job's output begin. Pure.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hq {

// Tasks of one node that ended with the same wait status.
struct TaskEnd {
  std::string node;
  std::vector<uint32_t> tasks;
  int wait_status = 0;     // as waitpid gives it
  bool oom = false;        // killed by the OOM killer (its cgroup counted an OOM kill)
};

// The line srun prints after "srun: error: " for these tasks; empty for a clean exit (0).
std::string task_end_message(const TaskEnd& end);

// "StepId=12.3": how Slurm's messages name a step.
std::string step_name(uint64_t job, uint32_t step);

// The batch script's step id (Slurm's SLURM_BATCH_SCRIPT), shown as "J.batch".
inline constexpr uint32_t kBatchStepId = 0xfffffffb;
// "12.3" or "12.batch": how squeue -s and scontrol show step name a step.
std::string step_label(uint64_t job, uint32_t step);

// "slurmstepd-n1: error: ": how the lines slurmstepd writes into a job's or a step's output
// begin on node n1 (the cancel banners, a task's execve() error). Slurm's, not hq's, name:
// scripts and tests grep for it.
std::string stepd_error_prefix(const std::string& node);

// "0-1,3": task ids as ranges (ascending, duplicates once).
std::string task_ranges(std::vector<uint32_t> tasks);

// srun's exit code over every task end of a step.
class StepExitCode {
 public:
  void add(const TaskEnd& end);
  int code() const;

 private:
  bool oom_ = false;
  int signal_ = 0;  // the highest signal that killed a task
  int exit_ = 0;    // the highest exit code
};

}  // namespace hq
