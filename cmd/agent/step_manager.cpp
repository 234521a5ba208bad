#include "cmd/agent/step_manager.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <algorithm>
#include <csignal>
#include <sys/wait.h>
#include <ctime>
#include <deque>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/agent/task_launch.hpp"
#include "cmd/local_listener.hpp"
#include "core/hostlist.hpp"
#include "core/step_env.hpp"
#include "core/step_exit.hpp"
#include "core/step_layout.hpp"
#include "net/log.hpp"
#include "net/unix_stream.hpp"

namespace hq::cmd {

using Descriptor = asio::posix::stream_descriptor;

struct StepManager::Step {
  struct Task {
    uint32_t id = 0;
    pid_t pid = 0;
    bool exited = false, reported = false;
    int status = 0;
    int open_streams = 2;  // stdout, stderr
    std::unique_ptr<Descriptor> out, err, in;
    std::deque<std::string> in_queue;
    bool in_writing = false, in_eof = false;
  };
  uint64_t job_id = 0;
  uint32_t step_id = 0;
  std::shared_ptr<net::Connection> srun;
  std::vector<Task> tasks;        // never resized once launched
  int32_t cpus = 0;               // the step's CPUs on this node
  bool overlap = false;
  bool kill_on_bad_exit = false;
  bool terminating = false;
  std::unique_ptr<asio::steady_timer> kill_timer;
  std::vector<size_t> unsent;     // tasks over whose TaskExited waits a moment for others like it
  std::unique_ptr<asio::steady_timer> flush_timer;
  size_t left = 0;                // tasks not yet reported
  StepExitCode code;
  bool done = false;
};

namespace {

StepRequest request_of(const pb::StepCreate& m) {
  StepRequest r;
  r.ntasks = m.ntasks();
  r.nodes_min = m.nodes_min();
  r.nodes_max = m.nodes_max();
  r.ntasks_per_node = m.ntasks_per_node();
  r.cpus_per_task = m.cpus_per_task() > 0 ? m.cpus_per_task() : 1;
  r.cpus_per_task_set = m.cpus_per_task_set();
  int d = m.distribution();
  r.distribution = d >= 0 && d <= static_cast<int>(TaskDistribution::kPlane) ? static_cast<TaskDistribution>(d)
                                                                           : TaskDistribution::kDefault;
  r.plane_size = m.plane_size();
  r.nodelist.assign(m.nodelist().begin(), m.nodelist().end());
  r.exclude.assign(m.exclude().begin(), m.exclude().end());
  r.exact = m.exact();
  r.overlap = m.overlap();
  r.overcommit = m.overcommit();
  return r;
}

void send_error(const std::shared_ptr<net::Connection>& conn, const Status& s) { conn->send(net::error_reply(0, s)); }

std::string step_name(uint64_t job, uint32_t step) { return "StepId=" + std::to_string(job) + "." + std::to_string(step); }

}  // namespace

StepManager::StepManager(asio::io_context& io, std::string node, std::string socket_path, FindJob find_job,
                         KillWait kill_wait)
    : io_(io),
      node_(std::move(node)),
      path_(std::move(socket_path)),
      find_job_(std::move(find_job)),
      kill_wait_(std::move(kill_wait)),
      acceptor_(io) {}

StepManager::~StepManager() = default;

Status StepManager::start() {
  // Writes to a task's stdin after it exited fail with EPIPE instead of killing the agent.
  // Blocked, not ignored: every child the agent starts resets its mask before exec.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  sigprocmask(SIG_BLOCK, &pipe, nullptr);
  if (Status s = listen_local(acceptor_, path_, "step socket"); !s) return s;  // the kernel says who connects
  accept_next();
  return Status::ok();
}

void StepManager::stop() {
  asio::error_code ec;
  acceptor_.close(ec);
  ::unlink(path_.c_str());
  for (auto& [job, step] : steps_) signal_step(*step, SIGKILL);
}

void StepManager::accept_next() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::local::stream_protocol::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) asio::co_spawn(io_, session(std::move(socket)), asio::detached);
    accept_next();
  });
}

asio::awaitable<void> StepManager::session(asio::local::stream_protocol::socket socket) {
  auto cred = net::peer_credentials(socket.native_handle());
  auto conn = std::make_shared<net::Connection>(io_.get_executor(), net::make_unix_stream(std::move(socket)));
  auto first = co_await conn->recv();
  if (!cred || !first || !first->has_step_create()) {
    conn->close("not a step request");
    co_return;
  }
  std::shared_ptr<Step> step = co_await create(conn, first->step_create(), cred->uid);
  if (!step) co_return;
  while (true) {
    auto msg = co_await conn->recv();
    if (!msg) break;
    if (msg->has_task_io()) feed_stdin(step, msg->task_io());
    else if (msg->has_step_signal()) signal_step(*step, msg->step_signal().signal());
  }
  if (!step->done) {  // srun is gone: so is its step
    log::info(step_name(step->job_id, step->step_id) + ": srun went away; killing the step");
    signal_step(*step, SIGKILL);
  }
}

asio::awaitable<std::shared_ptr<StepManager::Step>> StepManager::create(const std::shared_ptr<net::Connection>& conn,
                                                                        const pb::StepCreate& req, uid_t peer_uid) {
  uint64_t job_id = req.job_id();
  std::string head = "Unable to create step for job " + std::to_string(job_id) + ": ";
  auto job = find_job_(job_id);
  if (!job) {
    send_error(conn, not_found(head + "Invalid job id specified"));
    co_return nullptr;
  }
  if (peer_uid != 0 && peer_uid != job->job->spec.uid) {
    send_error(conn, denied(head + "Access/permission denied"));
    co_return nullptr;
  }
  StepRequest want = request_of(req);
  Result<StepLayout> layout = invalid("");
  for (bool told = false;;) {
    layout = plan_step(job->job->alloc, want.overlap ? std::map<std::string, int32_t>{} : busy_cpus(job_id), want, job_id);
    if (layout || layout.status().code() != Code::kUnavailable || req.immediate()) break;
    if (!told) {
      pb::Envelope pending;
      pending.mutable_step_pending()->set_reason(layout.status().message());
      conn->send(pending);
      told = true;
    }
    asio::steady_timer wake(io_, std::chrono::hours(24));
    auto it = waiters_.emplace(job_id, &wake);
    asio::error_code ec;
    co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    waiters_.erase(it);
    job = find_job_(job_id);
    if (!conn->is_open()) co_return nullptr;
    if (!job) {
      send_error(conn, not_found(head + "Job/step already completing or completed"));
      co_return nullptr;
    }
  }
  if (!layout) {
    send_error(conn, layout.status());
    co_return nullptr;
  }
  for (const StepNode& n : layout->nodes)
    if (n.name != node_) {
      send_error(conn, invalid(head + "steps on other nodes than the job's first (" + node_ +
                               ") are not supported yet; this step needs " + n.name));
      co_return nullptr;
    }
  auto step = std::make_shared<Step>();
  step->job_id = job_id;
  step->step_id = next_step_[job_id]++;
  step->srun = conn;
  step->overlap = want.overlap;
  step->kill_on_bad_exit = req.kill_on_bad_exit();
  step->cpus = layout->nodes.front().cpus;
  pb::Envelope created;
  auto* c = created.mutable_step_created();
  c->set_job_id(job_id);
  c->set_step_id(step->step_id);
  c->set_nodelist(node_);
  c->set_ntasks(layout->ntasks);
  for (const auto& w : layout->warnings) c->add_warnings(w);
  conn->send(created);
  if (Status s = launch_tasks(*step, *job, req, *layout); !s) {
    signal_step(*step, SIGKILL);
    send_error(conn, s);
    co_return nullptr;
  }
  steps_.emplace(job_id, step);
  for (size_t i = 0; i < step->tasks.size(); ++i) {
    tasks_by_pid_[step->tasks[i].pid] = {step, i};
    asio::co_spawn(io_, relay(step, i, 1), asio::detached);
    asio::co_spawn(io_, relay(step, i, 2), asio::detached);
  }
  co_return step;
}

Status StepManager::launch_tasks(Step& step, const JobView& job, const pb::StepCreate& req, const StepLayout& layout) {
  StepEnvContext ctx{step.job_id, step.step_id, req.launch_host(), req.label(), req.cpu_bind()};
  std::vector<std::string> env = step_environment({req.env().begin(), req.env().end()}, layout, ctx);
  const StepNode& here = layout.nodes.front();
  step.tasks.resize(here.tasks.size());
  step.left = here.tasks.size();
  for (size_t local = 0; local < here.tasks.size(); ++local) {
    TaskPlan plan;
    plan.argv.assign(req.argv().begin(), req.argv().end());
    plan.env = task_environment(env, layout, 0, local);
    plan.cwd = req.cwd();
    plan.node = node_;
    plan.switch_user = geteuid() == 0;
    plan.uid = job.job->spec.uid;
    plan.gid = job.job->spec.gid;
    plan.groups.assign(job.job->spec.groups.begin(), job.job->spec.groups.end());
    plan.cgroup_procs = job.cgroup_procs;
    auto launched = launch_task(plan);
    if (!launched) return launched.status().with_context("task " + std::to_string(here.tasks[local]));
    Step::Task& t = step.tasks[local];
    t.id = here.tasks[local];
    t.pid = launched->pid;
    t.out = std::make_unique<Descriptor>(io_, launched->stdout_fd);
    t.err = std::make_unique<Descriptor>(io_, launched->stderr_fd);
    t.in = std::make_unique<Descriptor>(io_, launched->stdin_fd);
  }
  return Status::ok();
}

asio::awaitable<void> StepManager::relay(std::shared_ptr<Step> step, size_t task, int stream) {
  Step::Task& t = step->tasks[task];
  Descriptor& from = stream == 1 ? *t.out : *t.err;
  std::array<char, 65536> buf;
  while (true) {
    asio::error_code ec;
    size_t n = co_await from.async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec || n == 0) break;
    pb::Envelope env;
    auto* io = env.mutable_task_io();
    io->set_task(t.id);
    io->set_stream(static_cast<uint32_t>(stream));
    io->set_data(buf.data(), n);
    step->srun->send(env);
  }
  asio::error_code ignored;
  from.close(ignored);
  --t.open_streams;
  task_progress(step, task);
}

// srun's stdin goes to every task (Slurm's default), in order, without blocking the agent.
void StepManager::feed_stdin(const std::shared_ptr<Step>& step, const pb::TaskIO& io) {
  for (size_t i = 0; i < step->tasks.size(); ++i) {
    Step::Task& t = step->tasks[i];
    if (!t.in || !t.in->is_open()) continue;
    if (!io.data().empty()) t.in_queue.push_back(io.data());
    if (io.eof()) t.in_eof = true;
    if (!t.in_writing) asio::co_spawn(io_, pump_stdin(step, i), asio::detached);
  }
}

// Writes a task's queued stdin; holds the step, so a step that ends meanwhile stays alive
// until its writes have given up.
asio::awaitable<void> StepManager::pump_stdin(std::shared_ptr<Step> step, size_t task) {
  Step::Task& t = step->tasks[task];
  t.in_writing = true;
  while (!t.in_queue.empty() && t.in && t.in->is_open()) {
    std::string chunk = std::move(t.in_queue.front());
    t.in_queue.pop_front();
    asio::error_code ec;
    co_await asio::async_write(*t.in, asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) t.in_queue.clear();
  }
  t.in_writing = false;
  asio::error_code ignored;
  if (t.in_eof && t.in) t.in->close(ignored);
}

void StepManager::signal_step(Step& step, int sig) {
  for (const Step::Task& t : step.tasks)
    if (t.pid > 0 && !t.exited) ::kill(-t.pid, sig);
}

bool StepManager::reaped(pid_t pid, int status) {
  auto it = tasks_by_pid_.find(pid);
  if (it == tasks_by_pid_.end()) return false;
  auto [step, task] = it->second;
  tasks_by_pid_.erase(it);
  Step::Task& t = step->tasks[task];
  t.exited = true;
  t.status = status;
  ::kill(-t.pid, SIGKILL);  // what the task left in its process group
  task_progress(step, task);
  return true;
}

// -K: SIGCONT and SIGTERM to every task, SIGKILL after the job's kill wait (Slurm's SIG_TERM_KILL).
void StepManager::terminate_step(const std::shared_ptr<Step>& step) {
  if (step->terminating) return;
  step->terminating = true;
  // Slurm's line on the step's stderr, from its node: "*** STEP J.S ON NODE CANCELLED AT TIME ***".
  char when[32] = "";
  time_t now = time(nullptr);
  struct tm local {};
  if (localtime_r(&now, &local)) strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &local);
  pb::Envelope line;
  line.mutable_task_io()->set_task(step->tasks.front().id);
  line.mutable_task_io()->set_stream(2);
  line.mutable_task_io()->set_data("hq-node-" + node_ + ": error: *** STEP " + std::to_string(step->job_id) + "." +
                                   std::to_string(step->step_id) + " ON " + node_ + " CANCELLED AT " + when + " ***\n");
  step->srun->send(line);
  signal_step(*step, SIGCONT);
  signal_step(*step, SIGTERM);
  step->kill_timer = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(std::max<int64_t>(0, kill_wait_())));
  step->kill_timer->async_wait([this, step](const asio::error_code& ec) {
    if (!ec && !step->done) signal_step(*step, SIGKILL);
  });
}

// A task is over once it exited and its output is drained. Its end goes to srun with the
// ends of other tasks that end the same way within 10 ms (as Slurm's "tasks 0-1: Exited
// with exit code 2"), at once when it is the last; the step's end after the last.
void StepManager::task_progress(const std::shared_ptr<Step>& step, size_t task) {
  Step::Task& t = step->tasks[task];
  if (!t.exited || t.open_streams > 0 || t.reported) return;
  t.reported = true;
  asio::error_code ignored;
  if (t.in) t.in->close(ignored);
  step->code.add({node_, {t.id}, t.status});
  step->unsent.push_back(task);
  if (--step->left == 0) {
    if (step->flush_timer) step->flush_timer->cancel();
    return flush_ends(step);
  }
  if (step->flush_timer) return;  // a flush is due
  step->flush_timer = std::make_unique<asio::steady_timer>(io_, std::chrono::milliseconds(10));
  step->flush_timer->async_wait([this, step](const asio::error_code& ec) {
    if (!ec) flush_ends(step);
  });
}

void StepManager::flush_ends(const std::shared_ptr<Step>& step) {
  step->flush_timer.reset();
  std::vector<pb::Envelope> groups;
  bool failed = false;
  for (size_t task : step->unsent) {
    const Step::Task& t = step->tasks[task];
    auto same = std::find_if(groups.begin(), groups.end(),
                             [&](const pb::Envelope& g) { return g.task_exited().wait_status() == t.status; });
    if (same == groups.end()) {
      same = groups.emplace(groups.end());
      same->mutable_task_exited()->set_node(node_);
      same->mutable_task_exited()->set_wait_status(t.status);
    }
    same->mutable_task_exited()->add_tasks(t.id);
    failed |= !WIFEXITED(t.status) || WEXITSTATUS(t.status) != 0;
  }
  step->unsent.clear();
  for (const auto& g : groups) step->srun->send(g);
  if (failed && step->kill_on_bad_exit && step->left > 0) terminate_step(step);
  if (step->left > 0 || step->done) return;
  step->done = true;
  pb::Envelope ended;
  ended.mutable_step_ended()->set_exit_code(step->code.code());
  step->srun->send(ended);
  for (auto it = steps_.lower_bound(step->job_id); it != steps_.end() && it->first == step->job_id; ++it)
    if (it->second == step) {
      steps_.erase(it);
      break;
    }
  wake_waiters(step->job_id);
}

std::map<std::string, int32_t> StepManager::busy_cpus(uint64_t job_id) const {
  std::map<std::string, int32_t> busy;
  for (auto it = steps_.lower_bound(job_id); it != steps_.end() && it->first == job_id; ++it)
    if (!it->second->overlap) busy[node_] += it->second->cpus;
  return busy;
}

void StepManager::wake_waiters(uint64_t job_id) {
  for (auto it = waiters_.lower_bound(job_id); it != waiters_.end() && it->first == job_id; ++it) it->second->cancel();
}

void StepManager::job_ended(uint64_t job_id) {
  for (auto it = steps_.lower_bound(job_id); it != steps_.end() && it->first == job_id; ++it)
    signal_step(*it->second, SIGKILL);
  wake_waiters(job_id);
}

}  // namespace hq::cmd
