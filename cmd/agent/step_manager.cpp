#include "cmd/agent/step_manager.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <algorithm>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/agent/launcher.hpp"
#include "cmd/agent/node_tasks.hpp"
#include "cmd/agent/peer_net.hpp"
#include "cmd/agent/step_exchange.hpp"
#include "cmd/agent/step_node.hpp"
#include "cmd/agent/step_parts.hpp"
#include "cmd/agent/step_pmix.hpp"
#include "cmd/agent/step_views.hpp"
#include "cmd/agent/task_launch.hpp"
#include "cmd/local_listener.hpp"
#include "core/cpu_bind.hpp"
#include "core/hostlist.hpp"
#include "core/pmi_mapping.hpp"
#include "core/step_env.hpp"
#include "core/step_exit.hpp"
#include "core/step_gpus.hpp"
#include "net/log.hpp"
#include "net/unix_stream.hpp"

namespace hq::cmd {

namespace {

std::string head_of(uint64_t job_id) { return "Unable to create step for job " + std::to_string(job_id) + ": "; }

StepGpuRequest gpu_request(const pb::StepCreate& m) { return {m.gpus(), m.gpus_per_node(), m.gpus_per_task()}; }

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

void send_error(const StepManager::ConnPtr& conn, const Status& s) { conn->send(net::error_reply(0, s)); }

bool failed(int wait_status) { return !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0; }

// With --mpi=pmix every node of the step learns the whole layout (its PMIx namespace has every rank).
void add_layout(pb::StepLaunch& launch, const std::vector<StepNode>& layout) {
  for (const StepNode& n : layout) {
    auto* node = launch.add_layout();
    node->set_node(n.name);
    for (uint32_t t : n.tasks) node->add_tasks(t);
  }
}

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
  close_local(acceptor_, path_);
  for (auto& [pid, tasks] : by_pid_) tasks->signal(SIGKILL);
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
  if (!cred) {
    conn->close("no peer credentials");
    co_return;
  }
  co_await serve(conn, cred->uid);
}

void StepManager::user_session(const ConnPtr& conn, uint32_t uid) {
  asio::co_spawn(io_, serve(conn, static_cast<uid_t>(uid)), asio::detached);
}

// One srun: its StepCreate, then its stdin and signals until the step ends or srun goes.
asio::awaitable<void> StepManager::serve(ConnPtr conn, uid_t uid) {
  auto first = co_await conn->recv();
  if (first && first->has_node_local_query()) {
    pb::Envelope out;
    *out.mutable_node_local_reply() = local_view(first->node_local_query().what(), uid);
    conn->send(out);
    co_return;
  }
  if (!first || !first->has_step_create()) {
    conn->close("not a step request");
    co_return;
  }
  std::shared_ptr<Step> step = co_await create(conn, first->step_create(), uid);
  if (!step) co_return;
  uint64_t job_id = step->job_id;
  ++sessions_[job_id];  // until srun has read its step's end and gone
  struct Leave {
    std::map<uint64_t, int>& sessions;
    uint64_t job;
    ~Leave() {
      if (auto it = sessions.find(job); it != sessions.end() && --it->second <= 0) sessions.erase(it);
    }
  } leave{sessions_, job_id};
  while (true) {
    auto msg = co_await conn->recv();
    if (!msg) break;
    if (msg->has_task_io()) feed_stdin(step, msg->task_io());
    else if (msg->has_step_signal()) {
      if (msg->step_signal().signal() == SIGKILL && step->end_state.empty()) step->end_state = "CANCELLED";
      signal_step(step, msg->step_signal().signal());
    }
  }
  if (!step->done) {  // srun is gone: so is its step
    if (step->end_state.empty()) step->end_state = "CANCELLED";
    log::info(step_name(step->job_id, step->step_id) + ": srun went away; killing the step");
    signal_step(step, SIGKILL);
  }
}

// The step's layout, once the CPUs it needs are free (srun is told it waits) or at once
// with `immediate`. An error is srun's to print.
asio::awaitable<Result<StepLayout>> StepManager::plan(const ConnPtr& conn, const pb::StepCreate& req) {
  uint64_t job_id = req.job_id();
  StepRequest want = request_of(req);
  for (bool told = false;;) {
    auto job = find_job_(job_id);
    if (!job) co_return not_found(head_of(job_id) + "Job/step already completing or completed");
    auto layout =
        plan_step(job->job->alloc, want.overlap ? std::map<std::string, int32_t>{} : busy_cpus(job_id), want, job_id);
    if (layout) {
      Status got =
          assign_step_gpus(job->job->alloc, gpu_request(req), want.overlap ? BusyGpus{} : busy_gpus(job_id), layout.value());
      if (!got) layout = got.code() == Code::kInvalid ? invalid(head_of(job_id) + got.message()) : Result<StepLayout>(got);
    }
    if (layout) {
      std::map<std::string, int64_t> mem_busy = want.overlap ? std::map<std::string, int64_t>{} : busy_mem(job_id);
      if (Status got = assign_step_memory(job->job->alloc, req.mem_mib(), mem_busy, layout.value(), job_id); !got)
        layout = got;
    }
    if (layout || layout.status().code() != Code::kUnavailable || req.immediate()) co_return layout;
    if (!told) {
      pb::Envelope pending;
      pending.mutable_step_pending()->set_reason(layout.status().message());
      conn->send(pending);
      told = true;
    }
    co_await wait_on(waiters_, job_id, std::chrono::hours(24));
    if (!conn->is_open()) co_return unavailable("srun went away");
  }
}

asio::awaitable<std::shared_ptr<StepManager::Step>> StepManager::create(const ConnPtr& conn, const pb::StepCreate& req,
                                                                        uid_t peer_uid) {
  uint64_t job_id = req.job_id();
  std::string head = head_of(job_id);
  auto job = find_job_(job_id);
  // srun outside a job comes as soon as the controller says the job started: its LaunchJob
  // to this node may still be on its way (a short wait).
  if (!job && req.wait_for_job()) job = co_await await_job(job_id, conn);
  if (!job) {
    send_error(conn, not_found(head + "Invalid job id specified"));
    co_return nullptr;
  }
  if (peer_uid != 0 && peer_uid != job->job->spec.uid) {
    send_error(conn, denied(head + "Access/permission denied"));
    co_return nullptr;
  }
  if (req.ntasks() < 0 || static_cast<size_t>(req.ntasks()) > kMaxTasksPerNode * job->job->alloc.size() ||
      req.ntasks_per_node() < 0 || static_cast<size_t>(req.ntasks_per_node()) > kMaxTasksPerNode) {
    send_error(conn, invalid(head + "More than " + std::to_string(kMaxTasksPerNode) + " tasks per node requested"));
    co_return nullptr;
  }
  auto layout = co_await plan(conn, req);
  job = find_job_(job_id);
  if (layout && !job) layout = not_found(head + "Job/step already completing or completed");
  if (!layout) {
    if (conn->is_open()) send_error(conn, layout.status());
    co_return nullptr;
  }
  std::vector<pb::AgentAddress> peers = job->peers;
  for (const StepNode& n : layout->nodes) {
    bool known = n.name == node_ || std::any_of(peers.begin(), peers.end(), [&](const pb::AgentAddress& a) {
                   return a.node() == n.name && a.port() != 0;
                 });
    if (!known || (n.name != node_ && !peers_)) {
      send_error(conn, unavailable(head + "the agent of node " + n.name + " takes no steps (no step listener known)"));
      co_return nullptr;
    }
  }
  auto step = std::make_shared<Step>();
  step->job_id = job_id;
  step->step_id = step_ids_.issue(job_id, job->step_ids_file);
  step->srun = conn;
  step->overlap = req.overlap();
  step->kill_on_bad_exit = req.kill_on_bad_exit();
  step->oom_kill_step = req.oom_kill_step();
  if (gpu_request(req).asked() && !req.overlap())
    for (const StepNode& n : layout->nodes) step->gpus[n.name] = n.gpus;
  if (!req.overlap())
    for (const StepNode& n : layout->nodes)
      if (n.mem_mib > 0) step->mem_mib[n.name] = n.mem_mib;
  std::vector<std::string> names;
  for (const StepNode& n : layout->nodes) {
    names.push_back(n.name);
    step->cpus[n.name] = n.cpus;
    for (uint32_t t : n.tasks) step->open[t] = n.name;
  }
  step->first_task = layout->nodes.front().tasks.front();
  pb::Envelope created;
  auto* c = created.mutable_step_created();
  c->set_job_id(job_id);
  c->set_step_id(step->step_id);
  c->set_nodelist(compress_hostlist(names));
  c->set_ntasks(layout->ntasks);
  for (const auto& w : layout->warnings) c->add_warnings(w);
  c->set_kill_wait(kill_wait_());
  c->mutable_task_node()->Resize(layout->ntasks, 0);
  for (size_t i = 0; i < layout->nodes.size(); ++i) {
    c->add_nodes(layout->nodes[i].name);
    for (uint32_t t : layout->nodes[i].tasks)
      if (t < static_cast<uint32_t>(layout->ntasks)) c->set_task_node(static_cast<int>(t), static_cast<uint32_t>(i));
  }
  conn->send(created);
  steps_[{job_id, step->step_id}] = step;
  std::weak_ptr<Step> weak = step;
  step->gather = std::make_unique<StepGatherer>(job_id, step->step_id, layout->nodes.size(),
                                                [this, weak](const pb::Envelope& out) {
                                                  if (auto s = weak.lock()) broadcast_exchange(s, out);
                                                });
  step->record = new_step_record(req, *layout, *job->job, step->step_id, compress_hostlist(names));
  report(step->record);
  StepEnvContext ctx{job_id, step->step_id, req.launch_host(), req.label(), req.cpu_bind()};
  std::vector<std::string> env = step_environment({req.env().begin(), req.env().end()}, *layout, ctx);
  MpiPart mpi = mpi_part(req, *layout, env);
  for (size_t i = 0; i < layout->nodes.size(); ++i) {
    const StepNode& n = layout->nodes[i];
    if (n.name == node_) {
      if (Status s = launch_here(step, *job, req, env, layout->nodes, i, mpi); !s)
        step_message(step, lost_tasks(job_id, step->step_id, node_, n.tasks, s.message(), false));
      continue;
    }
    pb::StepLaunch launch;
    launch.set_job_id(job_id);
    launch.set_step_id(step->step_id);
    launch.set_node_index(static_cast<int32_t>(i));
    launch.set_cpus(n.cpus);
    launch.set_mem_mib(n.mem_mib);
    launch.set_cpu_bind(req.cpu_bind());
    launch.set_cpus_per_task(req.cpus_per_task());
    for (uint32_t t : n.tasks) launch.add_tasks(t);
    for (int32_t g : n.gpus) launch.add_gpus(g);
    for (const auto& a : req.argv()) launch.add_argv(a);
    for (const auto& e : env) launch.add_env(e);
    launch.set_cwd(req.cwd());
    launch.set_mpi(mpi.type);
    launch.set_ntasks(mpi.ntasks);
    launch.set_pmi_mapping(mpi.mapping);
    if (mpi.type == kPmix) add_layout(launch, layout->nodes);
    step->remotes.push_back({n.name, nullptr, {}, i});
    auto peer = std::find_if(peers.begin(), peers.end(), [&](const pb::AgentAddress& a) { return a.node() == n.name; });
    asio::co_spawn(io_, launch_remote(step, *peer, std::move(launch)), asio::detached);
  }
  co_return step;
}

// --mpi=pmi2: the step's tasks get SLURM_MPI_TYPE=pmi2 (as Slurm's) and a PMI-1 server on
// each node, whose PMI_process_mapping says where every rank is. --mpi=pmix: every node
// gets the whole layout (StepLaunch.layout) and attaches its ranks to the agent's PMIx server.
StepManager::MpiPart StepManager::mpi_part(const pb::StepCreate& req, const StepLayout& layout,
                                           std::vector<std::string>& env) const {
  MpiPart mpi;
  mpi.ntasks = layout.ntasks;
  if (req.mpi() == kPmix) mpi.type = kPmix;  // the PMIx server adds the tasks' variables
  if (req.mpi() != "pmi2") return mpi;
  mpi.type = "pmi2";
  std::vector<std::vector<uint32_t>> ranks;
  for (const auto& n : layout.nodes) ranks.push_back(n.tasks);
  if (auto mapping = pmi_process_mapping(ranks)) mpi.mapping = *mapping;  // else MPICH asks the ranks instead
  std::erase_if(env, [](const std::string& kv) { return kv.rfind("SLURM_MPI_TYPE=", 0) == 0; });
  env.push_back("SLURM_MPI_TYPE=pmi2");
  return mpi;
}

TaskPlan StepManager::plan_task(const JobView& job, const std::vector<std::string>& argv, std::vector<std::string> env,
                                const std::string& cwd) const {
  TaskPlan plan;
  plan.argv = argv;
  plan.env = std::move(env);
  plan.cwd = cwd;
  plan.node = node_;
  plan.switch_user = geteuid() == 0;
  plan.uid = job.job->spec.uid;
  plan.gid = job.job->spec.gid;
  plan.groups.assign(job.job->spec.groups.begin(), job.job->spec.groups.end());
  return plan;
}

// The step's confinement on this node: its cgroup in the job's, its memory limit and CPU
// binding, and its CPUs among the job's here (those the job's running steps here use
// least first), held until its tasks here are over.
void StepManager::confine(StepNodePart& part, const JobView& job, int64_t mem_mib, const std::string& cpu_bind,
                          int32_t cpus_per_task) {
  part.job_cgroup = job.cgroup;
  part.mem_mib = mem_mib;
  part.cpu_bind = cpu_bind;
  part.cpus_per_task = std::max(1, cpus_per_task);
  if (job.cpus.empty()) return;
  uint64_t job_id = part.ids.job_id;
  std::map<int32_t, int32_t>& use = cpu_use_[job_id];
  part.cpus = choose_cpus(job.cpus, use, part.here.cpus, {});
  std::vector<int32_t> all(job.cpus.begin(), job.cpus.end());
  std::sort(all.begin(), all.end());
  part.all_job_cpus = part.cpus == all;
  for (int32_t cpu : part.cpus) ++use[cpu];
  part.on_done = [this, job_id, cpus = part.cpus] {
    auto it = cpu_use_.find(job_id);
    if (it == cpu_use_.end()) return;
    for (int32_t cpu : cpus)
      if (auto c = it->second.find(cpu); c != it->second.end() && --c->second <= 0) it->second.erase(c);
    if (it->second.empty()) cpu_use_.erase(it);
  };
}

Status StepManager::launch_here(const std::shared_ptr<Step>& step, const JobView& job, const pb::StepCreate& req,
                                const std::vector<std::string>& env, const std::vector<StepNode>& layout,
                                size_t index, const MpiPart& mpi) {
  const StepNode& here = layout.at(index);
  StepKey key{step->job_id, step->step_id};
  StepNodePart part{{step->job_id, step->step_id, node_, kill_wait_()}, here, index, env,
                    plan_task(job, {req.argv().begin(), req.argv().end()}, {}, req.cwd()), mpi.type, mpi.ntasks,
                    mpi.mapping};
  if (job.gpu_deny) part.deny_devices = job.gpu_deny(here.gpus);
  if (job.gpu_env) part.gpu_env = job.gpu_env(here.gpus, !part.deny_devices.empty());
  part.topo = job.topo;
  confine(part, job, here.mem_mib, req.cpu_bind(), req.cpus_per_task());
  if (mpi.type == kPmix) part.attach = pmix_attach(key, layout, index);
  std::weak_ptr<Step> weak = step;
  step->exchange = std::make_shared<StepExchange>(io_, step->job_id, step->step_id, static_cast<uint32_t>(index),
                                                  [this, weak](const pb::Envelope& in) {
                                                    if (auto s = weak.lock()) exchange_in(s, node_, in.step_exchange_in());
                                                  });
  auto started = start_node_tasks(
      io_, part, step->exchange,
      watch_ranks(key,
                  [this, weak](const pb::Envelope& msg) {
                    if (auto s = weak.lock()) step_message(s, msg);
                  }),
      [this, weak](int code) {
        if (auto s = weak.lock()) abort_step(s, code, node_);
      });
  if (!started) {
    if (pmix_) pmix_->detach(key);
    return started.status();
  }
  step->local = started->tasks;
  step->pmi = started->pmi;
  track(step->local);
  return Status::ok();
}

// Dials the node's agent (a kept link after the first step) and sends it its tasks; a node
// that cannot be reached ends its tasks with the reason.
asio::awaitable<void> StepManager::launch_remote(std::shared_ptr<Step> step, pb::AgentAddress peer,
                                                 pb::StepLaunch launch) {
  auto link = co_await peers_->link(peer.node(), peer.host(), peer.port(), peer.fingerprint());
  std::vector<uint32_t> tasks(launch.tasks().begin(), launch.tasks().end());
  if (!link) {
    log::warn(step_name(step->job_id, step->step_id) + ": " + link.status().message());
    co_return step_message(step,
                           lost_tasks(step->job_id, step->step_id, peer.node(), tasks, link.status().message(), false));
  }
  if (step->done) co_return;
  pb::Envelope env;
  *env.mutable_step_launch() = std::move(launch);
  (*link)->send(env);
  for (auto& r : step->remotes) {  // then what srun sent meanwhile (stdin, its EOF, signals)
    if (r.node != peer.node()) continue;
    r.link = *link;
    for (const auto& m : r.pending) r.link->send(m);
    r.pending.clear();
  }
}

// Output and ends of the step's tasks, from here or from a peer link.
void StepManager::step_message(const std::shared_ptr<Step>& step, const pb::Envelope& msg) {
  if (msg.has_task_io()) {
    step->srun->send(msg);
    watch_output(step);
  } else if (msg.has_step_io_pause()) {
    stdin_full(step, msg.step_io_pause().node(), msg.step_io_pause().pause());
  } else if (msg.has_task_exited()) tasks_ended(step, msg.task_exited());
  else if (msg.has_step_abort()) {
    const pb::StepAbort& a = msg.step_abort();
    if (a.lost()) terminate_step(step);
    else abort_step(step, a.exit_code(), a.node());
  }
}

// srun reads slower than the step's tasks write (it is stopped, or its terminal is slow):
// past the high-water mark of its connection's queue, every node stops reading the tasks'
// output (they wait on their pipes) until the queue is down to the low-water mark.
void StepManager::watch_output(const std::shared_ptr<Step>& step) {
  if (step->output_paused || step->srun->queued_bytes() < kIoHighWater) return;
  pause_output(step, true);
  std::weak_ptr<Step> weak = step;
  step->srun->when_drained(kIoLowWater, [this, weak] {
    if (auto s = weak.lock(); s && !s->done) pause_output(s, false);
  });
}

void StepManager::pause_output(const std::shared_ptr<Step>& step, bool pause) {
  step->output_paused = pause;
  if (step->local) step->local->pause_output(pause);
  send_remotes(step, step_io_pause(step->job_id, step->step_id, pause));
}

// A node of the step holds too much of srun's stdin that its tasks have not read (or took
// it in again): srun stops reading its stdin while any node is full.
void StepManager::stdin_full(const std::shared_ptr<Step>& step, const std::string& node, bool full) {
  bool was = !step->stdin_full.empty();
  if (full) step->stdin_full.insert(node);
  else step->stdin_full.erase(node);
  if (was == !step->stdin_full.empty()) return;
  step->srun->send(step_io_pause(step->job_id, step->step_id, !was));
}

// A task's PMI abort (MPI_Abort): the step is killed and srun exits with the task's code,
// as Slurm's srun does with an MPI plugin's abort code; srun prints Slurm's lines for it.
void StepManager::abort_step(const std::shared_ptr<Step>& step, int code, const std::string& node) {
  if (step->abort_code || step->done) return;
  step->abort_code = code;
  log::info(step_name(step->job_id, step->step_id) + ": a task on " + node + " aborted with exit code " +
            std::to_string(code) + "; killing the step");
  step->srun->send(step_abort(step->job_id, step->step_id, code, node));
  step->srun->send(cancelled_line(*step));
  signal_step(step, SIGKILL);
}

void StepManager::tasks_ended(const std::shared_ptr<Step>& step, const pb::TaskExited& e) {
  pb::TaskExited fresh = e;  // only tasks not reported before (a lost node's may come twice)
  fresh.clear_tasks();
  for (uint32_t t : e.tasks())
    if (step->open.erase(t)) fresh.add_tasks(t);
  if (fresh.tasks_size() == 0) return;
  // Tasks that never started or were lost with their node never join the all-gather: its
  // rounds fail rather than wait for them forever.
  if (!fresh.error().empty()) step->gather->fail(unavailable(fresh.error()));
  add_step_usage(step->record, e);
  if (fresh.oom()) out_of_memory(step, fresh.node(), fresh.oom_kills());  // the node's line comes before srun's
  pb::Envelope env;
  *env.mutable_task_exited() = fresh;
  step->srun->send(env);
  step->code.add({fresh.node(), {fresh.tasks().begin(), fresh.tasks().end()}, fresh.wait_status(), fresh.oom()});
  if (failed(fresh.wait_status()) && step->kill_on_bad_exit && !step->open.empty()) terminate_step(step);
  if (step->open.empty()) finish_step(step);
}

// A task of the step was OOM-killed on `node`: Slurm's stepd line goes to srun, the step
// will end OUT_OF_MEMORY, and with --oom-kill-step its other tasks are killed now.
void StepManager::out_of_memory(const std::shared_ptr<Step>& step, const std::string& node, int32_t kills) {
  step->oom = true;
  oom_kills_[step->job_id] += std::max(1, kills);
  std::string count = std::to_string(std::max(1, kills));
  std::string name = step_name(step->job_id, step->step_id);
  step->srun->send(node_line(*step, node,  // one per report, as each of Slurm's stepds prints its own
                             "Detected " + count + " oom-kill event(s) in " + name +
                                 ". Some of your processes may have been killed by the cgroup out-of-memory handler."));
  log::info(name + ": " + count + " OOM kill(s) on " + node);
  if (step->end_state.empty()) step->end_state = "OUT_OF_MEMORY";
  if (step->oom_kill_step && !step->open.empty() && !step->terminating) signal_step(step, SIGKILL);
}

void StepManager::finish_step(const std::shared_ptr<Step>& step) {
  if (step->done) return;
  step->done = true;
  int code = step->abort_code ? *step->abort_code : step->code.code();
  pb::Envelope ended;
  ended.mutable_step_ended()->set_exit_code(code);
  step->srun->send(ended);
  if (step->pmi) step->pmi->stop();
  end_step_record(step->record, code, step->end_state);
  report(step->record);
  steps_.erase({step->job_id, step->step_id});
  if (pmix_) pmix_->detach({step->job_id, step->step_id});
  wake(waiters_, step->job_id);
}

StepPmix& StepManager::pmix() {
  if (pmix_) return *pmix_;
  StepPmix::Hooks hooks;
  hooks.abort = [this](StepKey key, int status) { rank_failed(key, status); };
  hooks.exchange = [this](StepKey key, std::string blob, StepPmix::Gathered done) {
    std::shared_ptr<StepExchange> exchange;
    if (auto it = steps_.find(key); it != steps_.end()) exchange = it->second->exchange;
    else if (auto h = hosted_.find(key); h != hosted_.end()) exchange = h->second->exchange;
    if (!exchange) return done(unavailable("the step is not running here"), "");
    exchange->all_gather(std::move(blob), [done = std::move(done)](Result<std::vector<std::string>> blobs) {
      std::string all;
      if (blobs) {
        size_t size = 0;
        for (const auto& b : *blobs) size += b.size();
        all.reserve(size);
        for (const auto& b : *blobs) all += b;
      }
      done(blobs.status(), all);
    });
  };
  std::string dir = (std::filesystem::path(path_).parent_path() / "pmix").string();
  pmix_ = std::make_unique<StepPmix>(io_, dir, node_, std::move(hooks));
  return *pmix_;
}

// The step's PMIx namespace for the ranks here (node `index` of `layout`), as a StepNodePart's attach.
std::function<Status(std::vector<TaskPlan>&)> StepManager::pmix_attach(StepKey key, std::vector<StepNode> layout,
                                                                      size_t index) {
  return [this, key, layout = std::move(layout), index](std::vector<TaskPlan>& plans) {
    return pmix().attach(key, layout, index, plans);
  };
}

// `send` for a step's tasks here, that first ends the step when a --mpi=pmix rank ended
// without MPI_Finalize.
StepManager::Send StepManager::watch_ranks(StepKey key, Send send) {
  return [this, key, send = std::move(send)](const pb::Envelope& msg) {
    if (msg.has_task_exited() && lost_rank(key, msg.task_exited())) rank_failed(key, std::nullopt);
    send(msg);
  };
}

// A --mpi=pmix rank here called MPI_Abort (`status`), or went away without MPI_Finalize
// (none): the step ends, here or told to the node that manages it (StepAbort). An abort
// kills the step at once and srun exits with its status (abort_step), as Slurm 22.05's
// mpi/pmix does; a lost rank ends it as -K does (as mpirun would: Slurm leaves the other
// ranks waiting).
void StepManager::rank_failed(StepKey key, std::optional<int> status) {
  log::info(step_name(key.first, key.second) + ": an MPI rank " +
            (status ? "aborted with status " + std::to_string(*status) : "ended without MPI_Finalize"));
  if (auto it = steps_.find(key); it != steps_.end()) {
    if (status) abort_step(it->second, *status, node_);
    else terminate_step(it->second);
    return;
  }
  auto hosted = hosted_.find(key);
  if (hosted == hosted_.end()) return;
  hosted->second->link->send(step_abort(key.first, key.second, status.value_or(0), node_, !status));
}

// A --mpi=pmix rank here that ended after PMIx_Init without PMIx_Finalize (StepPmix::lost).
bool StepManager::lost_rank(StepKey key, const pb::TaskExited& e) const {
  return pmix_ && std::any_of(e.tasks().begin(), e.tasks().end(), [&](uint32_t t) { return pmix_->lost(key, t); });
}

// srun's stdin goes to every task (Slurm's default), on every node.
void StepManager::feed_stdin(const std::shared_ptr<Step>& step, const pb::TaskIO& io) {
  // A task's own input (-i with %t) goes to its node alone.
  std::optional<std::string> node;
  if (io.per_task()) {
    auto at = step->open.find(io.task());
    if (at == step->open.end()) return;  // ended already, or no such task
    node = at->second;
  }
  if (step->local && (!node || *node == node_)) step->local->feed_stdin(io.data(), io.eof(), only_task(io), io.per_task());
  pb::Envelope env;
  *env.mutable_task_io() = io;
  env.mutable_task_io()->set_job_id(step->job_id);
  env.mutable_task_io()->set_step_id(step->step_id);
  env.mutable_task_io()->set_stream(0);
  send_remotes(step, env, node);
}

// To every other node of the step; held for a node whose link is still being dialled.
void StepManager::send_remotes(const std::shared_ptr<Step>& step, const pb::Envelope& msg,
                               const std::optional<std::string>& only_node) {
  for (auto& r : step->remotes) {
    if (only_node && r.node != *only_node) continue;
    if (r.link) r.link->send(msg);
    else r.pending.push_back(msg);
  }
}

void StepManager::signal_step(const std::shared_ptr<Step>& step, int sig, bool terminate) {
  if (sig == SIGKILL) step->terminating = true;
  if (step->local) terminate ? step->local->terminate() : step->local->signal(sig);
  pb::Envelope env;
  auto* s = env.mutable_step_signal();
  s->set_job_id(step->job_id);
  s->set_step_id(step->step_id);
  s->set_signal(sig);
  s->set_terminate(terminate);
  send_remotes(step, env);
}

// -K: SIGCONT and SIGTERM to every task, SIGKILL after the job's kill wait (Slurm's SIG_TERM_KILL).
void StepManager::terminate_step(const std::shared_ptr<Step>& step) {
  if (step->terminating) return;
  step->terminating = true;
  step->srun->send(cancelled_line(*step));
  signal_step(step, SIGTERM, true);
}

void StepManager::terminate_job(uint64_t job_id, bool time_limit) {
  for (auto it = steps_.lower_bound({job_id, 0}); it != steps_.end() && it->first.first == job_id; ++it) {
    const std::shared_ptr<Step>& step = it->second;
    if (step->terminating || step->done) continue;
    step->terminating = true;
    if (step->end_state.empty()) step->end_state = "CANCELLED";
    step->srun->send(cancelled_line(*step, time_limit ? " DUE TO TIME LIMIT" : ""));
    signal_step(step, SIGTERM, true);
  }
}

void StepManager::signal_job(uint64_t job_id, int sig) {
  for (auto it = steps_.lower_bound({job_id, 0}); it != steps_.end() && it->first.first == job_id; ++it)
    if (!it->second->terminating && !it->second->done) signal_step(it->second, sig);
}

bool StepManager::hosts_tasks(uint64_t job_id) const {
  auto it = hosted_.lower_bound({job_id, 0});
  return it != hosted_.end() && it->first.first == job_id;
}

bool StepManager::has_steps(uint64_t job_id) const {
  auto it = steps_.lower_bound({job_id, 0});
  return (it != steps_.end() && it->first.first == job_id) || sessions_.count(job_id) > 0;
}

// Slurm's line on the step's stderr, from its node: "*** STEP J.S ON NODE CANCELLED AT TIME ***".
pb::Envelope StepManager::cancelled_line(const Step& step, const std::string& why) const {
  return node_line(step, node_, cancelled_banner("STEP " + step_label(step.job_id, step.step_id), node_, why));
}

// "slurmstepd-NODE: error: TEXT" on the step's stderr, as slurmstepd's lines on Slurm's.
pb::Envelope StepManager::node_line(const Step& step, const std::string& node, const std::string& text) {
  pb::Envelope line;
  line.mutable_task_io()->set_task(step.first_task);
  line.mutable_task_io()->set_stream(2);
  line.mutable_task_io()->set_data(stepd_error_prefix(node) + text + "\n");
  return line;
}

bool StepManager::reaped(pid_t pid, int status) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end()) return false;
  std::shared_ptr<NodeTasks> tasks = std::move(it->second);
  by_pid_.erase(it);
  tasks->reaped(pid, status);
  return true;
}

void StepManager::track(const std::shared_ptr<NodeTasks>& tasks) {
  for (pid_t pid : tasks->pids()) by_pid_[pid] = tasks;
}

// The GPUs held per node by the job's running steps that asked for GPUs (not --overlap).
StepManager::BusyGpus StepManager::busy_gpus(uint64_t job_id) const {
  BusyGpus busy;
  for (auto it = steps_.lower_bound({job_id, 0}); it != steps_.end() && it->first.first == job_id; ++it)
    for (const auto& [node, gpus] : it->second->gpus) busy[node].insert(gpus.begin(), gpus.end());
  return busy;
}

std::map<std::string, int64_t> StepManager::busy_mem(uint64_t job_id) const {
  std::map<std::string, int64_t> busy;
  for (auto it = steps_.lower_bound({job_id, 0}); it != steps_.end() && it->first.first == job_id; ++it)
    for (const auto& [node, mib] : it->second->mem_mib) busy[node] += mib;
  return busy;
}

std::map<std::string, int32_t> StepManager::busy_cpus(uint64_t job_id) const {
  std::map<std::string, int32_t> busy;
  for (auto it = steps_.lower_bound({job_id, 0}); it != steps_.end() && it->first.first == job_id; ++it)
    if (!it->second->overlap)
      for (const auto& [node, cpus] : it->second->cpus) busy[node] += cpus;
  return busy;
}

// A job this node does not hold yet, for up to 10 s: its LaunchJob may be on its way (the
// controller tells srun, and the first node its peers, as it sends it). job_arrived wakes it.
asio::awaitable<std::optional<StepManager::JobView>> StepManager::await_job(uint64_t job_id, ConnPtr conn) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::optional<JobView> job;
  while (!job && conn->is_open()) {
    bool woken = co_await wait_on(arrivals_, job_id, deadline - std::chrono::steady_clock::now());
    job = find_job_(job_id);
    if (!woken) break;  // the 10 s ran out
  }
  co_return job;
}

// Suspends until wake(list, job_id) or `timeout`; true when woken.
asio::awaitable<bool> StepManager::wait_on(Waiters& list, uint64_t job_id, std::chrono::steady_clock::duration timeout) {
  asio::steady_timer timer(io_, timeout);
  auto it = list.emplace(job_id, &timer);
  asio::error_code ec;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  list.erase(it);
  co_return ec == asio::error::operation_aborted;
}

void StepManager::wake(Waiters& list, uint64_t job_id) {
  for (auto it = list.lower_bound(job_id); it != list.end() && it->first == job_id; ++it) it->second->cancel();
}

void StepManager::job_arrived(uint64_t job_id) { wake(arrivals_, job_id); }

int64_t StepManager::take_oom_kills(uint64_t job_id) {
  auto it = oom_kills_.find(job_id);
  if (it == oom_kills_.end()) return 0;
  int64_t n = it->second;
  oom_kills_.erase(it);
  return n;
}

void StepManager::job_ended(uint64_t job_id) {
  step_ids_.forget(job_id);
  oom_kills_.erase(job_id);
  cpu_use_.erase(job_id);
  for (auto it = steps_.lower_bound({job_id, 0}); it != steps_.end() && it->first.first == job_id; ++it) {
    if (it->second->end_state.empty()) it->second->end_state = "CANCELLED";
    signal_step(it->second, SIGKILL);
  }
  for (auto it = hosted_.lower_bound({job_id, 0}); it != hosted_.end() && it->first.first == job_id; ++it)
    kill_hosted(*it->second);
  wake(waiters_, job_id);
}

void StepManager::peer_message(const ConnPtr& link, const std::string& node, const pb::Envelope& msg) {
  if (msg.has_step_launch()) {
    asio::co_spawn(io_, host(link, node, msg.step_launch()), asio::detached);
    return;
  }
  bool to_hosted = msg.has_step_io_pause() &&
                   !steps_.count({msg.step_io_pause().job_id(), msg.step_io_pause().step_id()});  // else: from a node of ours
  if (msg.has_step_signal() || msg.has_step_exchange_out() || to_hosted || (msg.has_task_io() && msg.task_io().stream() == 0))
    return hosted_message(link, msg);
  if (msg.has_step_exchange_in()) {
    auto it = steps_.find({msg.step_exchange_in().job_id(), msg.step_exchange_in().step_id()});
    if (it != steps_.end()) exchange_in(it->second, node, msg.step_exchange_in());
    return;
  }
  StepKey key = msg.has_task_io()      ? StepKey{msg.task_io().job_id(), msg.task_io().step_id()}
                : msg.has_task_exited() ? StepKey{msg.task_exited().job_id(), msg.task_exited().step_id()}
                : msg.has_step_abort()  ? StepKey{msg.step_abort().job_id(), msg.step_abort().step_id()}
                : msg.has_step_io_pause() ? StepKey{msg.step_io_pause().job_id(), msg.step_io_pause().step_id()}
                                        : StepKey{0, 0};
  auto it = steps_.find(key);
  if (it == steps_.end()) return;
  bool from_its_node = std::any_of(it->second->remotes.begin(), it->second->remotes.end(),
                                   [&](const Step::Remote& r) { return r.node == node; });
  if (from_its_node) step_message(it->second, msg);
}

// A link closed: steps managed here lose that node's tasks (as killed); tasks run here for
// the other side's steps are killed.
void StepManager::peer_closed(const ConnPtr& link, const std::string& node) {
  std::vector<std::shared_ptr<Step>> hit;
  for (auto& [key, step] : steps_)
    for (const auto& r : step->remotes)
      if (r.link == link) hit.push_back(step);
  for (auto& step : hit) {
    step->gather->fail(unavailable("lost the link to " + node + "'s agent"));
    std::vector<uint32_t> lost;
    for (const auto& [task, where] : step->open)
      if (where == node) lost.push_back(task);
    log::warn(step_name(step->job_id, step->step_id) + ": lost the link to " + node + "'s agent; killing the step");
    if (lost.empty()) continue;
    step->end_state = "NODE_FAIL";
    signal_step(step, SIGKILL);  // as Slurm: a node failure ends the step
    step_message(step, lost_tasks(step->job_id, step->step_id, node, lost, "Node failure on " + node));
  }
  for (auto& [key, h] : hosted_)
    if (h->link == link) {
      kill_hosted(*h);
      h->exchange->fail(unavailable("lost the link to " + node + "'s agent"));
    }
}

// A node's blob for the step's all-gather: from this node's own tasks, or from a peer
// link, where it must come from the node the step put at that index.
void StepManager::exchange_in(const std::shared_ptr<Step>& step, const std::string& from,
                              const pb::StepExchangeIn& in) {
  bool here = from == node_ && step->exchange && step->exchange->node_index() == static_cast<uint32_t>(in.node_index());
  bool remote = std::any_of(step->remotes.begin(), step->remotes.end(), [&](const Step::Remote& r) {
    return r.node == from && r.index == static_cast<size_t>(in.node_index());
  });
  Status s = here || remote ? step->gather->add(in) : invalid("exchange: not from the step's node " +
                                                              std::to_string(in.node_index()));
  if (!s) log::warn(step_name(step->job_id, step->step_id) + " from " + from + ": " + s.message());
}

// A round's result (or failure) to every node of the step, this one too.
void StepManager::broadcast_exchange(const std::shared_ptr<Step>& step, const pb::Envelope& out) {
  send_remotes(step, out);
  if (step->exchange) step->exchange->deliver(out.step_exchange_out());
}

std::vector<pb::StepRecord> StepManager::running_records() const {
  std::vector<pb::StepRecord> out;
  for (const auto& [key, step] : steps_)
    if (!step->done) out.push_back(step->record);
  return out;
}

pb::NodeLocalReply StepManager::local_view(const std::string& what, uid_t uid) const {
  NodeView view(node_, uid);
  for (const LocalJob& j : list_jobs_ ? list_jobs_() : std::vector<LocalJob>{}) view.job(j);
  for (const auto& [key, step] : steps_)
    if (step->local) view.step(key.first, key.second, step->record.name(), step->local->running());
  for (const auto& [key, h] : hosted_)
    if (h->tasks) view.step(key.first, key.second, "", h->tasks->running());
  return view.reply(what);
}

}  // namespace hq::cmd
