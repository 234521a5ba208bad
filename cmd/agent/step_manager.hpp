// Job steps on the node of a job's batch script (Slurm's stepmgr on the job's own node):
// srun inside the job connects to this agent's local step socket and sends StepCreate;
// the manager lays the step out in the job's allocation (core/step_layout), queues it while
// other steps hold its CPUs, starts its tasks (task_launch), relays their output to srun and
// srun's stdin and signals to them, and reports each task's end and the step's. srun
// gone means the step is killed. The kernel says who connects: only the job's user (or root)
// may start steps in it. Steps whose tasks would run on other nodes are refused for now.
// Runs on the agent's event-loop thread.
#pragma once
#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/job.hpp"
#include "core/status.hpp"
#include "core/step_layout.hpp"
#include "net/connection.hpp"

namespace hq::cmd {

class StepManager {
 public:
  // A job running here, as the manager needs it. `job` is the agent's own record: valid
  // until the agent's loop runs again, so it is looked up anew after every wait.
  struct JobView {
    const Job* job = nullptr;
    std::vector<std::string> cgroup_procs;  // tasks join the job's cgroup
  };
  using FindJob = std::function<std::optional<JobView>(uint64_t job_id)>;
  using KillWait = std::function<int64_t()>;  // seconds between SIGTERM and SIGKILL

  StepManager(asio::io_context& io, std::string node, std::string socket_path, FindJob find_job, KillWait kill_wait);
  ~StepManager();
  Status start();
  void stop();
  // From the agent's SIGCHLD loop: true if `pid` was a step's task.
  bool reaped(pid_t pid, int status);
  // The job ended: its steps' tasks are killed.
  void job_ended(uint64_t job_id);
  const std::string& socket_path() const { return path_; }

 private:
  struct Step;
  void accept_next();
  asio::awaitable<void> session(asio::local::stream_protocol::socket socket);
  asio::awaitable<std::shared_ptr<Step>> create(const std::shared_ptr<net::Connection>& conn, const pb::StepCreate& req,
                                                uid_t peer_uid);
  Status launch_tasks(Step& step, const JobView& job, const pb::StepCreate& req, const StepLayout& layout);
  asio::awaitable<void> relay(std::shared_ptr<Step> step, size_t task, int stream);
  void feed_stdin(const std::shared_ptr<Step>& step, const pb::TaskIO& io);
  asio::awaitable<void> pump_stdin(std::shared_ptr<Step> step, size_t task);
  void signal_step(Step& step, int sig);
  void terminate_step(const std::shared_ptr<Step>& step);
  void task_progress(const std::shared_ptr<Step>& step, size_t task);
  void flush_ends(const std::shared_ptr<Step>& step);
  std::map<std::string, int32_t> busy_cpus(uint64_t job_id) const;
  void wake_waiters(uint64_t job_id);

  asio::io_context& io_;
  std::string node_, path_;
  FindJob find_job_;
  KillWait kill_wait_;
  asio::local::stream_protocol::acceptor acceptor_;
  std::map<uint64_t, uint32_t> next_step_;                 // per job
  std::multimap<uint64_t, std::shared_ptr<Step>> steps_;   // running, per job
  std::map<pid_t, std::pair<std::shared_ptr<Step>, size_t>> tasks_by_pid_;
  std::multimap<uint64_t, asio::steady_timer*> waiters_;   // steps waiting for CPUs, per job
};

}  // namespace hq::cmd
