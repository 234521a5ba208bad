// Where srun puts its tasks' stdout or stderr (-o/-e), as Slurm 22.05 does: srun's own
// stream (no option); one file for every task (a name without %t, %n or %N); a file per
// task (a name with them, expanded per task: %j %J %s %t %n %N %u %x %%); only task N's
// output (-o N), the others' dropped; or nowhere (-o none). Labels (-l) go to srun's stream
// and to a shared file, never to per-task files. Files are created or truncated when the
// step starts; srun writes them (on a shared filesystem that is where Slurm's nodes write).
// One thread (srun's).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/io_label.hpp"
#include "core/pattern.hpp"
#include "core/status.hpp"

namespace hq::cmd {

// All of `data` to `fd` (retrying short writes and EINTR); false if it cannot.
bool write_all(int fd, std::string_view data);

// Files open for one srun: a name opened once even when stdout and stderr (or two tasks)
// share it.
class OutputFiles {
 public:
  ~OutputFiles();
  Result<int> open(const std::string& path);

 private:
  std::map<std::string, int> fds_;
};

class TaskOutput {
 public:
  struct Step {
    PatternContext base;                 // job, step, user, job name
    std::vector<std::string> nodes;      // the step's nodes, SLURM_NODEID order
    std::vector<uint32_t> task_node;     // per task: its node's index
    bool label = false;
    bool unbuffered = false;             // -u: bytes go out as they come, not by lines
  };
  // `spec` is -o or -e as given ("" = srun's own `own_fd`).
  static Result<std::unique_ptr<TaskOutput>> make(const std::string& spec, int own_fd, const Step& step,
                                                  OutputFiles& files);
  // Task `t`'s names for patterns (%t, %n, %N): the step's, with the task's own.
  static PatternContext task_context(const Step& step, uint32_t t);
  void write(uint32_t task, const std::string& data);
  void finish(uint32_t task);  // the task's stream ended: a labelled partial line goes out

 private:
  int fd_for(uint32_t task) const;
  int shared_fd_ = -1;                // own stream or one file; -1: per task (or none)
  std::map<uint32_t, int> per_task_;  // task -> fd
  int only_task_ = -1;                // -o N
  std::unique_ptr<LabelledOutput> label_;
};

}  // namespace hq::cmd
