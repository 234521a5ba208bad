#include "cmd/agent/node_tasks.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <algorithm>
#include <array>
#include <csignal>
#include <sys/wait.h>

#include "cmd/agent/cgroup.hpp"

namespace hq::cmd {

using Descriptor = asio::posix::stream_descriptor;

NodeTasks::NodeTasks(asio::io_context& io, Ids ids, Send send) : io_(io), ids_(std::move(ids)), send_(std::move(send)) {}

NodeTasks::~NodeTasks() = default;

Result<std::shared_ptr<NodeTasks>> NodeTasks::launch(asio::io_context& io, Ids ids, const std::vector<TaskPlan>& plans,
                                                     const std::vector<uint32_t>& task_ids, Send send) {
  std::shared_ptr<NodeTasks> self(new NodeTasks(io, std::move(ids), std::move(send)));
  if (!plans.empty() && !plans.front().cgroup_procs.empty()) {  // before any task runs
    self->oom_procs_ = plans.front().cgroup_procs.front();
    self->oom_seen_ = oom_kills_of(self->oom_procs_);
  }
  self->tasks_.resize(plans.size());
  for (size_t i = 0; i < plans.size(); ++i) {
    auto launched = launch_task(plans[i]);
    if (!launched) {
      self->signal(SIGKILL);
      return launched.status().with_context("task " + std::to_string(task_ids.at(i)));
    }
    Task& t = self->tasks_[i];
    t.id = task_ids.at(i);
    t.pid = launched->pid;
    t.out = std::make_unique<Descriptor>(io, launched->stdout_fd);
    t.err = std::make_unique<Descriptor>(io, launched->stderr_fd);
    t.in = std::make_unique<Descriptor>(io, launched->stdin_fd);
  }
  self->left_ = plans.size();
  self->start_relays();
  return self;
}

std::vector<NodeTasks::TaskPid> NodeTasks::running() const {
  std::vector<TaskPid> out;
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (tasks_[i].pid > 0 && !tasks_[i].exited) out.push_back({tasks_[i].id, static_cast<uint32_t>(i), tasks_[i].pid});
  return out;
}

std::vector<pid_t> NodeTasks::pids() const {
  std::vector<pid_t> out;
  for (const Task& t : tasks_)
    if (t.pid > 0) out.push_back(t.pid);
  return out;
}

void NodeTasks::start_relays() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    asio::co_spawn(io_, relay(shared_from_this(), i, 1), asio::detached);
    asio::co_spawn(io_, relay(shared_from_this(), i, 2), asio::detached);
  }
}

asio::awaitable<void> NodeTasks::relay(std::shared_ptr<NodeTasks> self, size_t task, int stream) {
  Task& t = tasks_[task];
  Descriptor& from = stream == 1 ? *t.out : *t.err;
  std::array<char, 65536> buf;
  while (true) {
    asio::error_code ec;
    while (output_paused_) co_await resume_->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    size_t n = co_await from.async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec || n == 0) break;
    pb::Envelope env;
    auto* io = env.mutable_task_io();
    io->set_job_id(ids_.job_id);
    io->set_step_id(ids_.step_id);
    io->set_task(t.id);
    io->set_stream(static_cast<uint32_t>(stream));
    io->set_data(buf.data(), n);
    send_(env);
  }
  asio::error_code ignored;
  from.close(ignored);
  --t.open_streams;
  progress(task);
}

// stdin goes to every task (or the one), in order, without blocking the agent.
void NodeTasks::feed_stdin(const std::string& data, bool eof, std::optional<uint32_t> only, bool per_task) {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    Task& t = tasks_[i];
    if (!t.in || !t.in->is_open()) continue;
    bool other = only && t.id != *only;
    if (other && per_task) continue;
    if (!data.empty() && !other) {
      t.in_queue.push_back(data);
      stdin_queued_ += data.size();
    }
    if (eof || other) t.in_eof = true;
    if (!t.in_writing) asio::co_spawn(io_, pump_stdin(shared_from_this(), i), asio::detached);
  }
  stdin_changed();
}

pb::Envelope step_io_pause(uint64_t job, uint32_t step, bool pause, const std::string& node) {
  pb::Envelope env;
  auto* p = env.mutable_step_io_pause();
  p->set_job_id(job);
  p->set_step_id(step);
  p->set_pause(pause);
  p->set_node(node);
  return env;
}

// Past the high-water mark of stdin the tasks here have not taken, srun is asked (through
// the step's manager) to stop reading its own; below the low-water mark, to go on.
void NodeTasks::stdin_changed() {
  bool full = stdin_queued_ > (stdin_full_ ? kIoLowWater : kIoHighWater);
  if (full == stdin_full_) return;
  stdin_full_ = full;
  send_(step_io_pause(ids_.job_id, ids_.step_id, full, ids_.node));
}

void NodeTasks::drop_stdin(Task& t) {
  for (const auto& left : t.in_queue) stdin_queued_ -= left.size();
  t.in_queue.clear();
  stdin_changed();
}

// Writes a task's queued stdin; holds the tasks, so tasks that end meanwhile stay alive
// until the writes have given up.
asio::awaitable<void> NodeTasks::pump_stdin(std::shared_ptr<NodeTasks> self, size_t task) {
  Task& t = tasks_[task];
  t.in_writing = true;
  while (!t.in_queue.empty() && t.in && t.in->is_open()) {
    std::string chunk = std::move(t.in_queue.front());
    t.in_queue.pop_front();
    asio::error_code ec;
    co_await asio::async_write(*t.in, asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    stdin_queued_ -= chunk.size();
    if (ec) drop_stdin(t);
    stdin_changed();
  }
  if (!t.in_queue.empty()) drop_stdin(t);  // its stdin was closed: nobody takes the rest
  t.in_writing = false;
  asio::error_code ignored;
  if (t.in_eof && t.in) t.in->close(ignored);
}

void NodeTasks::when_done(JobCgroup group, std::function<void()> done) {
  group_ = std::move(group);
  on_done_ = std::move(done);
  if (left_ == 0) finish();
}

void NodeTasks::finish() {
  if (group_.active()) {
    if (!emptied_) emptied_ = group_.kill_all();  // emptied when the last task exited, normally
    group_.release(emptied_, oom_seen_);  // v1: kept for the job's next step where it can be
    group_ = JobCgroup{};
  }
  if (auto done = std::move(on_done_)) {
    on_done_ = nullptr;
    done();
  }
}

void NodeTasks::signal(int sig) {
  if (sig == SIGKILL) {
    pause_output(false);
    killing_ = true;
  }
  for (const Task& t : tasks_)
    if (t.pid > 0 && !t.exited) ::kill(-t.pid, sig);
}

void NodeTasks::pause_output(bool pause) {
  if (pause == output_paused_ || (pause && killing_)) return;
  output_paused_ = pause;
  if (!resume_) resume_ = std::make_unique<asio::steady_timer>(io_);
  if (pause) resume_->expires_at(asio::steady_timer::time_point::max());  // before any relay waits on it
  else resume_->cancel();
}

void NodeTasks::terminate() {
  pause_output(false);
  killing_ = true;
  if (kill_timer_) return;
  signal(SIGCONT);
  signal(SIGTERM);
  kill_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(std::max<int64_t>(0, ids_.kill_wait)));
  kill_timer_->async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec && !self->done()) self->signal(SIGKILL);
  });
}

void NodeTasks::reaped(pid_t pid, int status) {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    Task& t = tasks_[i];
    if (t.pid != pid || t.exited) continue;
    t.exited = true;
    t.status = status;
    ::kill(-t.pid, SIGKILL);  // what the task left in its process group
    // Every task exited: what they left in the step's group dies now, so none of it can
    // hold their output open (the step would never end).
    if (++exited_ == tasks_.size() && group_.active()) emptied_ = group_.kill_all(200);
    progress(i);
    return;
  }
}

// A task is over once it exited and its output is drained. Its end goes out with the ends
// of other tasks that end the same way within 10 ms, at once when it is the last.
void NodeTasks::progress(size_t task) {
  Task& t = tasks_[task];
  if (!t.exited || t.open_streams > 0 || t.reported) return;
  t.reported = true;
  asio::error_code ignored;
  if (t.in) t.in->close(ignored);
  unsent_.push_back(task);
  if (--left_ == 0) {
    if (flush_timer_) flush_timer_->cancel();
    if (kill_timer_) kill_timer_->cancel();
    flush_ends();
    return finish();
  }
  if (flush_timer_) return;  // a flush is due
  flush_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(10));
  flush_timer_->async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (!ec) self->flush_ends();
  });
}

// How many OOM kills the job's cgroup counted that no task was blamed for yet; they are
// blamed now. Read only when a task failed.
int64_t NodeTasks::new_oom_kills() {
  if (oom_procs_.empty()) return 0;
  int64_t n = oom_kills_of(oom_procs_);
  if (n <= oom_seen_) return 0;
  int64_t fresh = n - oom_seen_;
  oom_seen_ = n;
  return fresh;
}

// With the node's last tasks: what the step's cgroup here used (sacct's MaxRSS, TotalCPU).
void NodeTasks::add_usage(pb::TaskExited& e) const {
  CgroupUsage used = group_.usage();
  if (used.peak_mem_bytes >= 0) e.set_peak_mem_bytes(used.peak_mem_bytes);
  if (used.cpu_time_usec >= 0) e.set_cpu_time_usec(used.cpu_time_usec);
}

void NodeTasks::flush_ends() {
  flush_timer_.reset();
  // The group's OOM count is read when a task failed, and once more at the end: a kill of
  // a process the tasks survived (a child of theirs) still makes the step OUT_OF_MEMORY,
  // blamed on the last tasks, as Slurm's step end check does.
  bool any_failed = std::any_of(unsent_.begin(), unsent_.end(), [&](size_t i) { return tasks_[i].status != 0; });
  int64_t oom_kills = any_failed || left_ == 0 ? new_oom_kills() : 0;
  bool oom = oom_kills > 0;
  std::vector<pb::Envelope> groups;
  for (size_t task : unsent_) {
    const Task& t = tasks_[task];
    bool t_oom = oom && (t.status != 0 || !any_failed);
    auto same = std::find_if(groups.begin(), groups.end(), [&](const pb::Envelope& g) {
      return g.task_exited().wait_status() == t.status && g.task_exited().oom() == t_oom;
    });
    if (same == groups.end()) {
      same = groups.emplace(groups.end());
      auto* e = same->mutable_task_exited();
      e->set_job_id(ids_.job_id);
      e->set_step_id(ids_.step_id);
      e->set_node(ids_.node);
      e->set_wait_status(t.status);
      e->set_oom(t_oom);
      if (t_oom) e->set_oom_kills(static_cast<int32_t>(std::min<int64_t>(oom_kills, INT32_MAX)));
    }
    same->mutable_task_exited()->add_tasks(t.id);
  }
  unsent_.clear();
  if (left_ == 0 && !groups.empty()) add_usage(*groups.front().mutable_task_exited());
  for (const auto& g : groups) send_(g);
}

}  // namespace hq::cmd
