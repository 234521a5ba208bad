// The tasks of one job step on this node, wherever the step is managed: started from plans
// (task_launch), their stdout and stderr read into TaskIO messages, their ends grouped into
// TaskExited messages (tasks that end the same way within 10 ms go together, as Slurm's
// "tasks 0-1: Exited with exit code 2"), stdin written to every task, signals to their
// process groups. Tasks that fail while their cgroup (the step's, or the job's where the
// step has none) counts new OOM kills are reported as OOM-killed (TaskExited.oom), and so
// are the last tasks when the group counted kills they survived. Once all
// are over, what is left in the step's group (daemonized processes) is killed, the group
// removed and the owner told (its CPUs are free). Every message goes to
// `send`, tagged with the job and step: the step
// manager's own step (tasks on the job's first node) or a peer link to it (another node).
// Runs on the agent's event-loop thread; the agent's reaper hands it its tasks' ends.
#pragma once
#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/steady_timer.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cmd/agent/cgroup.hpp"
#include "cmd/agent/task_launch.hpp"
#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// A step's I/O flow control: past the high-water mark of bytes waiting (for srun, or for
// tasks to read their stdin) the sender is paused, and goes on below the low-water mark.
constexpr size_t kIoHighWater = 4 << 20, kIoLowWater = 1 << 20;
// StepIoPause for step `step` of `job`: `node` names the node whose stdin is full (a node
// to its step manager; "" the other way).
pb::Envelope step_io_pause(uint64_t job, uint32_t step, bool pause, const std::string& node = "");

class NodeTasks : public std::enable_shared_from_this<NodeTasks> {
 public:
  using Send = std::function<void(const pb::Envelope&)>;
  struct Ids {
    uint64_t job_id = 0;
    uint32_t step_id = 0;
    std::string node;       // this node, for TaskExited
    int64_t kill_wait = 0;  // seconds between SIGTERM and SIGKILL (terminate)
  };

  // Starts one task per plan (task ids `ids`, same order). On an error the tasks already
  // started are killed; their ends still come through reaped().
  static Result<std::shared_ptr<NodeTasks>> launch(asio::io_context& io, Ids ids, const std::vector<TaskPlan>& plans,
                                                   const std::vector<uint32_t>& task_ids, Send send);
  ~NodeTasks();

  std::vector<pid_t> pids() const;
  // Each task still running here: its global task id and pid, in local-id order.
  struct TaskPid {
    uint32_t task = 0;
    uint32_t local_id = 0;
    pid_t pid = 0;
  };
  std::vector<TaskPid> running() const;
  // A task of ours was reaped (from the agent's SIGCHLD loop).
  void reaped(pid_t pid, int status);
  // stdin for every task, or (`only` set: srun -i N) for task `only` alone, when every
  // other task's stdin is closed, unless `per_task` (srun -i with %t: a file per task)
  // leaves the others' as it is.
  void feed_stdin(const std::string& data, bool eof, std::optional<uint32_t> only = std::nullopt, bool per_task = false);
  void signal(int sig);
  // srun reads slower than the tasks write (pause), or caught up again: stop or go on
  // reading the tasks' stdout and stderr; meanwhile they wait on their full pipes. A kill
  // (terminate, SIGKILL) goes on reading, so that their ends come through.
  void pause_output(bool pause);
  // Bytes of stdin queued here that tasks have not read yet (a copy per task).
  size_t stdin_backlog() const { return stdin_queued_; }
  // Slurm's SIG_TERM_KILL: SIGCONT and SIGTERM now, SIGKILL after the kill wait.
  void terminate();
  // Every task ended and its output was drained.
  bool done() const { return left_ == 0; }
  // Once done: `group`'s leftovers are killed and it is removed, then `done` is called.
  void when_done(JobCgroup group, std::function<void()> done);
  const Ids& ids() const { return ids_; }

 private:
  struct Task {
    uint32_t id = 0;
    pid_t pid = 0;
    bool exited = false, reported = false;
    int status = 0;
    int open_streams = 2;  // stdout, stderr
    std::unique_ptr<asio::posix::stream_descriptor> out, err, in;
    std::deque<std::string> in_queue;
    bool in_writing = false, in_eof = false;
  };
  NodeTasks(asio::io_context& io, Ids ids, Send send);
  void start_relays();
  asio::awaitable<void> relay(std::shared_ptr<NodeTasks> self, size_t task, int stream);
  asio::awaitable<void> pump_stdin(std::shared_ptr<NodeTasks> self, size_t task);
  void progress(size_t task);
  void flush_ends();
  void add_usage(pb::TaskExited& e) const;
  void finish();
  int64_t new_oom_kills();

  asio::io_context& io_;
  Ids ids_;
  Send send_;
  std::vector<Task> tasks_;  // never resized once launched
  size_t left_ = 0;          // tasks not yet reported
  std::vector<size_t> unsent_;
  std::unique_ptr<asio::steady_timer> flush_timer_, kill_timer_;
  std::string oom_procs_;    // the tasks' cgroup procs file, to read its OOM kills; "" without one
  JobCgroup group_;          // the step's group here (inactive: none)
  size_t exited_ = 0;        // tasks reaped
  bool emptied_ = false;     // the group was found empty once they all were
  std::function<void()> on_done_;
  int64_t oom_seen_ = 0;     // OOM kills counted there that tasks were already blamed for
  bool output_paused_ = false;
  bool killing_ = false;     // terminated or SIGKILLed: their output is read to the end, never paused again
  size_t stdin_queued_ = 0;  // bytes in the tasks' in_queues
  bool stdin_full_ = false;  // told: past the high-water mark (StepIoPause through send_)
  std::unique_ptr<asio::steady_timer> resume_;  // paused relays wait on it; cancelled to go on
  void stdin_changed();
  void drop_stdin(Task& t);  // what is queued for a task that will not read it
};

}  // namespace hq::cmd
