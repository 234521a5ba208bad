// How srun reports the ends of a step's tasks, as Slurm 22.05 does: one line per group of
// tasks that ended the same way on one node ("n3: tasks 4-5: Exited with exit code 2",
// "n1: task 0: Killed"), and srun's own exit code for the step: a task killed by a signal
// beats any exit code, the highest signal or code wins, an OOM kill beats everything (and
// makes 1), a signal makes 128 + its number. Pure.
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

// "0-1,3": task ids as ranges (ascending, duplicates once).
std::string task_ranges(std::vector<uint32_t> tasks);

// srun's exit code over every task end of a step. An MPI rank's abort (PMIx_Abort, MPI_Abort)
// decides it: the step's other tasks are killed for it, but srun exits with the abort's status.
class StepExitCode {
 public:
  void add(const TaskEnd& end);
  void aborted(int status);  // the first abort counts
  int code() const;

 private:
  int abort_ = -1;
  bool oom_ = false;
  int signal_ = 0;  // the highest signal that killed a task
  int exit_ = 0;    // the highest exit code
};

}  // namespace hq
