// `hq run` / srun: inside an allocation asks the agent of the job's first node for a step
// (its local step socket, HQ_STEP_SOCKET in a batch job's environment; or its peer listener,
// HQ_STEPMGR, inside salloc); outside one it asks for an allocation first. Then it relays: the
// tasks' stdout and stderr to ours (labelled with -l), our stdin to every task, our
// signals to the tasks as Slurm's srun does (Ctrl-C twice within a second kills the step;
// TERM, HUP and QUIT kill it; USR1 and USR2 are passed on). It prints the tasks' ends as
// Slurm does and exits with the step's code. One thread, poll().
#include <cstdlib>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <optional>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/auth_client.hpp"
#include "cmd/client/allocate.hpp"
#include "cmd/client/output.hpp"
#include "cmd/client/persona_usage.hpp"
#include "cmd/client/srun_output.hpp"
#include "cmd/client/stepmgr_link.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "core/hostlist.hpp"
#include "core/srun_options.hpp"
#include "core/std_streams.hpp"
#include "core/step_exit.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "hq.pb.h"
#include "net/clock.hpp"
#include "net/convert.hpp"
#include "net/frame.hpp"

extern char** environ;

namespace hq::cmd {
namespace {

Result<pb::StepCreate> step_request(const SrunRequest& r, const std::vector<std::string>& env) {
  pb::StepCreate m;
  m.set_version(1);
  m.set_job_id(r.job_id);
  for (const auto& a : r.argv) m.add_argv(a);
  auto exported = export_environment(r.export_spec, env);
  if (!exported) return exported.status();
  for (const auto& kv : *exported) m.add_env(kv);
  char cwd[4096];
  m.set_cwd(!r.chdir.empty() ? r.chdir : getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string("/tmp"));
  const StepRequest& s = r.step;
  m.set_ntasks(s.ntasks);
  m.set_nodes_min(s.nodes_min);
  m.set_nodes_max(s.nodes_max);
  m.set_ntasks_per_node(s.ntasks_per_node);
  m.set_cpus_per_task(s.cpus_per_task);
  m.set_cpus_per_task_set(s.cpus_per_task_set);
  m.set_distribution(static_cast<int32_t>(s.distribution));
  m.set_plane_size(s.plane_size);
  for (const auto& n : s.nodelist) m.add_nodelist(n);
  for (const auto& n : s.exclude) m.add_exclude(n);
  m.set_exact(s.exact);
  m.set_overlap(s.overlap);
  m.set_overcommit(s.overcommit);
  m.set_label(r.label);
  m.set_immediate(r.immediate_s >= 0);
  m.set_cpu_bind(r.cpu_bind);
  m.set_kill_on_bad_exit(r.kill_on_bad_exit);
  m.set_oom_kill_step(r.oom_kill_step);
  m.set_gpus(r.gpus);
  m.set_gpus_per_node(r.gpus_per_node);
  m.set_gpus_per_task(r.gpus_per_task);
  m.set_mem_mib(r.mem_mib);
  m.set_mpi(r.mpi);
  m.set_name(r.job_name);
  m.set_launch_pid(static_cast<int32_t>(getpid()));
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  m.set_launch_hostname(host);
  return m;
}

std::string current_dir() {
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string("/tmp");
}

// The job srun outside an allocation asks for: its options as sbatch's would be.
pb::JobSpec allocation_spec(const SrunRequest& r, const std::vector<std::string>& exported) {
  JobSpec spec = r.allocation;  // -A, -q, -C, --mem-per-cpu, ...: as sbatch's table read them
  spec.alloc_kind = AllocKind::kSrun;
  spec.name = !r.job_name.empty() ? r.job_name : base_name(r.argv.front());
  const StepRequest& s = r.step;
  if (s.nodes_min > 0) {
    spec.nodes_min = s.nodes_min;
    spec.nodes_max = s.nodes_max > 0 ? s.nodes_max : s.nodes_min;
    spec.nodes_set = true;
  }
  if (s.ntasks > 0) {
    spec.ntasks = s.ntasks;
    spec.ntasks_set = true;
  } else if (s.ntasks_per_node == 0 && s.nodes_min > 0) {
    spec.ntasks = s.nodes_min;  // srun's default: one task per node
    spec.ntasks_set = true;
  }
  spec.ntasks_per_node = s.ntasks_per_node;
  spec.cpus_per_task = s.cpus_per_task;
  spec.cpus_per_task_set = s.cpus_per_task_set;
  spec.nodelist = s.nodelist.empty() ? "" : compress_hostlist(s.nodelist);
  spec.exclude = s.exclude.empty() ? "" : compress_hostlist(s.exclude);
  spec.exclusive = r.exclusive;
  spec.partition = r.partition;
  spec.time_limit = r.time_limit > 0 ? r.time_limit : kTimeUnset;
  spec.mem_per_node_mib = r.mem_mib;
  spec.gpus = r.gpus;
  spec.gpus_per_node = r.gpus_per_node;
  spec.gpus_per_task = r.gpus_per_task;
  spec.cpu_bind = r.cpu_bind;
  spec.workdir = !r.chdir.empty() ? r.chdir : current_dir();
  fill_submitter(spec, exported);
  return net::to_pb(spec, true);
}

// One srun session: what the agent says, our stdin, our signals.
class Session {
 public:
  Session(int sock, const SrunRequest& req) : sock_(sock), req_(req) {}
  int run();

 private:
  void handle(const pb::Envelope& msg);
  void on_output(const pb::TaskIO& io);
  void on_signal(int sig);
  void on_task_end(const TaskEnd& end);
  void send(const pb::Envelope& msg) { (void)write_all(sock_, net::encode_frame(msg.SerializeAsString())); }
  void signal_step(int sig);
  Status open_outputs(const pb::StepCreated& c);
  void print_task_states();
  void abort_after_wait();
  Status open_input();
  void forward_stdin();
  Status send_task_inputs(const TaskOutput::Step& step);
  int finish();

  int sock_;
  const SrunRequest& req_;
  net::FrameDecoder decoder_;
  bool done_ = false, pending_ = false, stdin_open_ = true, killed_by_us_ = false;
  bool stdin_paused_ = false;  // the step's agents hold enough of our stdin: read none until told
  bool setup_failed_ = false;  // a file of -i/-o/-e could not be opened: the step was killed, srun exits 1
  int rc_ = 1;
  uint64_t job_ = 0;
  uint32_t step_ = 0;
  OutputFiles files_;
  std::unique_ptr<TaskOutput> out_, err_;
  bool signaled_ = false, terminating_ = false;
  double last_interrupt_ = -10;
  int in_fd_ = 0;             // -i FILE: that file instead of srun's stdin
  std::optional<uint32_t> input_task_;  // -i N: stdin to task N alone
  bool input_per_task_ = false;         // -i with %t, %n or %N: a file per task, sent once the step is laid out
  double wait_deadline_ = 0;  // -W: when the step is killed (0: not armed, or done)
  bool wait_started_ = false;
  bool aborted_ = false;      // srun (-W) or a task (MPI_Abort) ended the step: no "Force Terminated" line
  int64_t kill_wait_ = 30;
  enum TaskState { kRunning, kExited, kExitedAbnormally };
  std::vector<int> task_state_;
};

void Session::signal_step(int sig) {
  pb::Envelope env;
  env.mutable_step_signal()->set_signal(sig);
  send(env);
}

void Session::on_signal(int sig) {
  if (sig == SIGUSR1 || sig == SIGUSR2) return signal_step(sig);
  if (sig == SIGINT && net::mono_seconds() - last_interrupt_ > 1.0) {
    last_interrupt_ = net::mono_seconds();
    hq::cerr() << "srun: interrupt (one more within 1 sec to abort)" << std::endl;
    return;
  }
  if (sig == SIGINT) {
    hq::cerr() << "srun: sending Ctrl-C to " << step_name(job_, step_) << std::endl;
    signal_step(SIGINT);
  }
  hq::cerr() << "srun: forcing job termination" << std::endl;
  killed_by_us_ = true;
  signal_step(SIGKILL);
}

// Slurm's line for tasks that did not exit 0, as they end; with -K the first failure ends
// the step (the agent terminates it). Tasks srun itself had killed (Ctrl-C) are not news.
void Session::on_task_end(const TaskEnd& end) {
  bool killed = WIFSIGNALED(end.wait_status);
  signaled_ |= killed;
  if (!(killed && killed_by_us_) || end.oom)
    if (std::string line = task_end_message(end); !line.empty()) hq::cerr() << "srun: error: " << line << std::endl;
  bool failed = killed || WEXITSTATUS(end.wait_status) != 0;
  for (uint32_t t : end.tasks)
    if (t < task_state_.size()) task_state_[t] = failed ? kExitedAbnormally : kExited;
  if (req_.wait_s > 0 && !wait_started_) {  // -W: the first task to end starts the clock
    wait_started_ = true;
    wait_deadline_ = net::mono_seconds() + req_.wait_s;
  }
  if (failed && req_.kill_on_bad_exit && !terminating_) {
    terminating_ = true;
    hq::cerr() << "srun: launch/slurm: _step_signal: Terminating " << step_name(job_, step_) << std::endl;
  }
}

// -o/-e: files named by the step's facts (patterns), opened as the step starts.
Status Session::open_outputs(const pb::StepCreated& c) {
  TaskOutput::Step step;
  step.base.job_id = job_;
  step.base.step = std::to_string(step_);
  step.base.user = current_user_name();
  if (const char* name = getenv("SLURM_JOB_NAME")) step.base.job_name = name;
  step.nodes.assign(c.nodes().begin(), c.nodes().end());
  step.task_node.assign(c.task_node().begin(), c.task_node().end());
  step.task_node.resize(static_cast<size_t>(std::max(0, c.ntasks())), 0);
  step.label = req_.label;
  step.unbuffered = req_.unbuffered;
  if (input_per_task_)
    if (Status s = send_task_inputs(step); !s) return s;
  auto out = TaskOutput::make(req_.output, 1, step, files_);
  if (!out) return out.status();
  auto err = TaskOutput::make(req_.error.empty() ? req_.output : req_.error, 2, step, files_);
  if (!err) return err.status();
  out_ = std::move(out).value();
  err_ = std::move(err).value();
  return Status::ok();
}

// -i with %t: each task's own file (expanded with its id and node), read whole and sent to
// that task alone, then its end; a file that cannot be read fails the step before any input.
Status Session::send_task_inputs(const TaskOutput::Step& step) {
  constexpr size_t kChunk = 1 << 20;
  std::vector<std::string> contents;
  for (uint32_t t = 0; t < step.task_node.size(); ++t) {
    int fd = ::open(expand_pattern(req_.input, TaskOutput::task_context(step, t)).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error(std::string("Could not open stdin file: ") + std::strerror(errno));
    std::string data;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
      if (n > 0) data.append(buf, static_cast<size_t>(n));
    ::close(fd);
    contents.push_back(std::move(data));
  }
  for (uint32_t t = 0; t < contents.size(); ++t) {
    for (size_t at = 0; at <= contents[t].size(); at += kChunk) {
      pb::Envelope env;
      auto* io = env.mutable_task_io();
      io->set_task(t);
      io->set_only_task(true);
      io->set_per_task(true);
      io->set_data(contents[t].substr(at, kChunk));
      io->set_eof(at + kChunk >= contents[t].size());
      send(env);
      if (io->eof()) break;
    }
  }
  return Status::ok();
}

// "StepId=J.S tasks 1-2: running", then the exited and the abnormally exited, as Slurm's
// task_state_print.
void Session::print_task_states() {
  const char* names[] = {"running", "exited", "exited abnormally"};
  for (int state : {kRunning, kExited, kExitedAbnormally}) {
    std::vector<uint32_t> tasks;
    for (uint32_t t = 0; t < task_state_.size(); ++t)
      if (task_state_[t] == state) tasks.push_back(t);
    if (tasks.empty()) continue;
    hq::cerr() << "srun: " << step_name(job_, step_) << (tasks.size() == 1 ? " task " : " tasks ") << task_ranges(tasks)
              << ": " << names[state] << "\n";
  }
}

// -W ran out: Slurm's lines, then every task is killed (their ends are reported).
void Session::abort_after_wait() {
  hq::cerr() << "srun: First task exited " << req_.wait_s << "s ago\n";
  print_task_states();
  hq::cerr() << "srun: launch/slurm: _step_signal: Terminating " << step_name(job_, step_) << "\n";
  hq::cerr() << "srun: Job step aborted: Waiting up to " << kill_wait_ + 2 << " seconds for job step to finish."
            << std::endl;
  aborted_ = true;
  signal_step(SIGKILL);
}

void Session::on_output(const pb::TaskIO& io) {
  TaskOutput* to = io.stream() == 2 ? err_.get() : out_.get();
  if (to) to->write(io.task(), io.data());
  else (void)write_all(io.stream() == 2 ? 2 : 1, io.data());
}

void Session::handle(const pb::Envelope& msg) {
  if (msg.has_task_io()) return on_output(msg.task_io());
  if (msg.has_task_exited()) {
    const auto& e = msg.task_exited();
    std::vector<uint32_t> tasks(e.tasks().begin(), e.tasks().end());
    if (!e.error().empty()) hq::cerr() << "srun: error: " << e.error() << "\n";
    for (uint32_t t : tasks) {
      if (out_) out_->finish(t);
      if (err_) err_->finish(t);
    }
    on_task_end({e.node(), tasks, e.wait_status(), e.oom()});
    return;
  }
  if (msg.has_step_created()) {
    const auto& c = msg.step_created();
    job_ = c.job_id();
    step_ = c.step_id();
    for (const auto& w : c.warnings()) hq::cerr() << "srun: Warning: " << w << "\n";
    if (pending_) hq::cerr() << "srun: Step created for " << step_name(job_, step_) << "\n";
    kill_wait_ = c.kill_wait();
    task_state_.assign(static_cast<size_t>(std::max(0, c.ntasks())), kRunning);
    if (Status st = open_outputs(c); !st) {
      hq::cerr() << "srun: error: " << st.message() << std::endl;
      killed_by_us_ = true;
      setup_failed_ = true;
      signal_step(SIGKILL);
    }
    return;
  }
  if (msg.has_step_io_pause()) {  // a node of the step holds too much of our stdin unread
    stdin_paused_ = msg.step_io_pause().pause();
    return;
  }
  if (msg.has_step_pending()) {
    pending_ = true;
    hq::cerr() << "srun: Job " << req_.job_id << " step creation temporarily disabled, retrying ("
              << msg.step_pending().reason() << ")" << std::endl;
    return;
  }
  if (msg.has_step_abort()) {  // a task's MPI_Abort: the agent kills the step
    hq::cerr() << "srun: Job step aborted: Waiting up to " << kill_wait_ + 2 << " seconds for job step to finish."
              << std::endl;
    aborted_ = true;
    return;
  }
  if (msg.has_step_ended()) {
    rc_ = msg.step_ended().exit_code();
    done_ = true;
    return;
  }
  if (msg.has_error()) {
    std::string text = msg.error().message();
    for (size_t start = 0; start <= text.size();) {
      size_t nl = text.find('\n', start);
      hq::cerr() << "srun: error: " << text.substr(start, nl == std::string::npos ? nl : nl - start) << "\n";
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    rc_ = 1;
    done_ = true;
  }
}

void Session::forward_stdin() {
  char buf[65536];
  ssize_t n = read(in_fd_, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  pb::Envelope env;
  auto* io = env.mutable_task_io();
  io->set_stream(0);
  if (input_task_) {
    io->set_task(*input_task_);
    io->set_only_task(true);
  }
  if (n > 0) io->set_data(buf, static_cast<size_t>(n));
  else {
    io->set_eof(true);
    stdin_open_ = false;
  }
  send(env);
}

// -i: none (every task reads EOF), a file (every task reads it), N below -n (srun's stdin
// to task N alone: the others read EOF at once), or srun's stdin.
Status Session::open_input() {
  const std::string& in = req_.input;
  if (in.empty() || in == "all") return Status::ok();
  auto task = parse_int(in, 0, INT32_MAX);  // past the last task it is a file name, as in Slurm
  if (task && (req_.step.ntasks <= 0 || *task < req_.step.ntasks)) {
    input_task_ = static_cast<uint32_t>(*task);
    pb::Envelope env;
    env.mutable_task_io()->set_task(*input_task_);
    env.mutable_task_io()->set_only_task(true);
    send(env);
    return Status::ok();
  }
  if (names_a_task(in)) {  // the step's layout names the files: send_task_inputs()
    input_per_task_ = true;
    stdin_open_ = false;
    return Status::ok();
  }
  if (in == "none") {
    stdin_open_ = false;
    pb::Envelope env;
    env.mutable_task_io()->set_eof(true);
    send(env);
    return Status::ok();
  }
  PatternContext ctx;
  ctx.job_id = req_.job_id;
  ctx.user = current_user_name();
  in_fd_ = ::open(expand_pattern(in, ctx).c_str(), O_RDONLY | O_CLOEXEC);
  if (in_fd_ < 0) return io_error(std::string("Could not open stdin file: ") + std::strerror(errno));
  return Status::ok();
}

int Session::run() {
  if (Status s = open_input(); !s) {
    hq::cerr() << "srun: error: " << s.message() << std::endl;
    return 1;
  }
  char buf[65536];
  while (!done_) {
    pollfd fds[3] = {{sock_, POLLIN, 0}, {signal_fd(), POLLIN, 0}, {stdin_open_ && !stdin_paused_ ? in_fd_ : -1, POLLIN, 0}};
    int timeout = -1;
    if (wait_deadline_ > 0) timeout = static_cast<int>(std::max(0.0, wait_deadline_ - net::mono_seconds()) * 1000) + 1;
    int ready = poll(fds, 3, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0 && wait_deadline_ > 0 && net::mono_seconds() >= wait_deadline_) {
      wait_deadline_ = 0;
      abort_after_wait();
      continue;
    }
    if (fds[1].revents & POLLIN) {
      while (int sig = next_signal()) on_signal(sig);
    }
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) forward_stdin();
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = read(sock_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      hq::cerr() << "srun: error: the node agent running " << (job_ ? step_name(job_, step_) : "this step") << " went away\n";
      return 1;
    }
    decoder_.feed(buf, static_cast<size_t>(n));
    while (!done_) {
      auto frame = decoder_.next();
      if (!frame || !frame->has_value()) break;
      pb::Envelope msg;
      if (msg.ParseFromString(**frame)) handle(msg);
    }
  }
  return finish();
}

int Session::finish() {
  if (signaled_ && !killed_by_us_ && !aborted_ && job_) hq::cerr() << "srun: Force Terminated " << step_name(job_, step_) << "\n";
  return setup_failed_ ? 1 : rc_;
}

// Sends the step request on `sock` and relays the step until it ends; returns srun's code.
int run_step(int sock, const SrunRequest& req, pb::StepCreate create, const std::string& where) {
  pb::Envelope first;
  *first.mutable_step_create() = std::move(create);
  int rc = 1;
  if (!write_all(sock, net::encode_frame(first.SerializeAsString()))) {
    hq::cerr() << "srun: error: the node agent " << where << " closed the connection\n";
  } else {
    Session session(sock, req);
    rc = session.run();
  }
  close(sock);
  return rc;
}

// The step through the manager's peer listener (another host: srun outside a job, or in
// salloc), TLS pinned to its fingerprint, with a user token.
int run_step_remote(const StepMgrAddress& at, const SrunRequest& req, pb::StepCreate create) {
  auto transport = find_transport();
  auto token = transport ? fetch_token(find_auth_socket()) : Result<std::string>(transport.status());
  auto fd = token ? dial_stepmgr(at, transport->plaintext, *token) : Result<int>(token.status());
  if (!fd) {
    hq::cerr() << "srun: error: Unable to create step for job " << req.job_id << ": " << fd.status().message() << "\n";
    return 1;
  }
  create.set_wait_for_job(true);  // a new allocation: its node may not have its launch yet
  int rc = run_step(*fd, req, std::move(create), "of job " + std::to_string(req.job_id) + " on " + at.node);
  await_stepmgr_relays();  // run_step closed our end: the relay winds down
  return rc;
}

// HQ_STEPMGR=host:port (with HQ_STEPMGR_FP and HQ_STEPMGR_NODE), as salloc sets it.
std::optional<StepMgrAddress> stepmgr_from_env(const std::map<std::string, std::string>& vars) {
  auto it = vars.find("HQ_STEPMGR");
  if (it == vars.end()) return std::nullopt;
  size_t colon = it->second.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  auto port = parse_int(it->second.substr(colon + 1), 1, 65535);
  if (!port) return std::nullopt;
  StepMgrAddress at;
  at.host = it->second.substr(0, colon);
  at.port = static_cast<uint32_t>(*port);
  if (auto fp = vars.find("HQ_STEPMGR_FP"); fp != vars.end()) at.fingerprint = fp->second;
  if (auto node = vars.find("HQ_STEPMGR_NODE"); node != vars.end()) at.node = node->second;
  return at;
}

// The step of an allocation run from here (srun outside a job, srun --jobid): srun's options
// with the allocation's environment in place of its own.
Result<pb::StepCreate> allocation_step(const SrunRequest& req, const std::vector<std::string>& env,
                                       const pb::AllocateReply& a, const pb::JobSpec& spec,
                                       const std::vector<std::string>& exported) {
  auto create = step_request(req, env);
  if (!create) return create.status();
  create->clear_env();
  for (auto& kv : allocation_env(a, spec, exported)) create->add_env(kv);
  return create;
}

// Runs it on the allocation's step manager over the network.
int run_at_stepmgr(const pb::AllocateReply& a, const SrunRequest& req, pb::StepCreate create) {
  const auto& m = a.stepmgr();
  return run_step_remote({m.node(), m.host(), m.port(), m.fingerprint()}, req, std::move(create));
}

// srun outside an allocation: asks the controller for one, runs the step in it from here
// over the network (the job's first node manages it), then ends the allocation with the
// step's exit code, as Slurm's srun does.
int run_outside(SrunRequest& req, const std::vector<std::string>& env) {
  auto exported = export_environment(req.export_spec, env);
  if (!exported) {
    hq::cerr() << "srun: error: " << exported.status().message() << "\n";
    return 1;
  }
  catch_signals();
  pb::JobSpec spec = allocation_spec(req, *exported);
  auto requested = request_allocation(spec, {"srun", req.immediate_s >= 0});
  if (!requested) return 1;
  Allocation allocation = std::move(requested).value();
  const pb::AllocateReply& granted = allocation.granted;
  uint64_t job_id = granted.job_id();
  // The step, from here; then the allocation ends with its exit code.
  req.job_id = job_id;
  auto create = allocation_step(req, env, granted, spec, *exported);
  if (!create) {
    hq::cerr() << "srun: error: Unable to create step for job " << job_id << ": " << create.status().message() << "\n";
    release_allocation(allocation, 1, "srun");
    return 1;
  }
  int rc = 0;
  {
    HolderKeepalive keepalive(allocation);  // InactiveLimit: this srun still holds the job
    rc = run_at_stepmgr(granted, req, std::move(create).value());
  }
  release_allocation(allocation, rc, "srun");
  return rc;
}

// srun --jobid=N (or SLURM_JOB_ID) where the job's own variables are not, e.g. a login
// shell: the controller says where the job's steps are managed, and the step runs from
// here over the network, its tasks with the allocation's variables, as srun outside a job's.
int run_in_job_from_outside(const SrunRequest& req, const std::vector<std::string>& env) {
  std::string id = std::to_string(req.job_id);
  auto refuse = [&](const std::string& why) {
    if (why.rfind("Slurm job ", 0) == 0) hq::cerr() << "srun: error: " << why << "\n";  // "... has expired"
    else hq::cerr() << "srun: error: Unable to confirm allocation for job " << id << ": " << why << "\n";
    hq::cerr() << "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job " << id << "\n";
    return 1;
  };
  auto exported = export_environment(req.export_spec, env);
  if (!exported) return refuse(exported.status().message());
  auto client = connect_client();
  if (!client) return refuse(client.status().message());
  pb::Envelope ask;
  ask.mutable_step_mgr_query()->set_job_id(req.job_id);
  auto answer = (*client)->call(ask);
  if (!answer) return refuse(answer.status().message());
  if (answer->has_error()) return refuse(answer->error().message());
  const pb::AllocateReply& job = answer->allocate_reply();
  if (!job.granted() || job.stepmgr().port() == 0) return refuse("its first node takes no steps from other hosts");
  pb::JobSpec spec;
  spec.set_name(job.job_name());
  spec.set_user(current_user_name());
  spec.set_uid(getuid());
  spec.set_gid(getgid());
  auto create = allocation_step(req, env, job, spec, *exported);
  if (!create) return refuse(create.status().message());
  catch_signals();
  return run_at_stepmgr(job, req, std::move(create).value());
}

int usage(std::ostream& out, int code) {
  out << "usage: srun [OPTIONS] COMMAND [ARGS...]\n"
         "  -n, --ntasks N        tasks            -N, --nodes N[-M]       nodes\n"
         "  --ntasks-per-node N   tasks per node   -c, --cpus-per-task N   CPUs per task (implies --exact)\n"
         "  -m, --distribution block|cyclic|plane=N  -w, --nodelist LIST  -x, --exclude LIST\n"
         "  --exact, --exclusive  only the CPUs the tasks need   --overlap  share CPUs with other steps\n"
         "  -l, --label           prefix lines with the task id  -K, --kill-on-bad-exit\n"
         "  --oom-kill-step[=0|1] a task killed for memory kills the whole step\n"
         "  -I, --immediate       fail instead of waiting for busy CPUs   --export SPEC   -D, --chdir DIR\n"
         "  --mpi=pmi2|pmix       a PMI-1 or PMIx server for the tasks (MPI without mpirun)   --mpi=list\n"
         "Tasks get Slurm's step environment (SLURM_STEP_ID, SLURM_PROCID, SLURM_LOCALID, ...).\n"
         "Outside a job, srun asks for an allocation first (also -J NAME, -p PARTITION, -t TIME,\n"
         "--mem SIZE, --exclusive: whole nodes), runs the step in it and ends it.\n";
  return code;
}

}  // namespace

int run_srun(const Args& args) {
  std::ostringstream help;
  usage(help, 0);
  if (auto done = answer_meta_option(srun_meta_option({args.begin() + 1, args.end()}), args[0], help.str()))
    return *done;
  std::vector<std::string> env;
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    env.emplace_back(*e);
    size_t eq = env.back().find('=');
    if (eq != std::string::npos) vars[env.back().substr(0, eq)] = env.back().substr(eq + 1);
  }
  auto req = parse_srun({args.begin() + 1, args.end()}, vars);
  if (!req) {
    if (req.status().message() == "No command given to execute.") return hq::cerr() << "srun: fatal: " << req.status().message() << "\n", 1;
    return option_failure("srun", req.status(), args[0] == "srun" ? 255 : 1);  // hq run: hq's 1
  }
  if (!req->controller.empty()) setenv("HQ_CONTROLLER", req->controller.c_str(), 1);  // first in find_controller
  if (!req->ca_file.empty()) setenv("HQ_CA_FILE", req->ca_file.c_str(), 1);            // first in find_transport
  if (req->mpi == "list") {  // Slurm's listing, of the types built here
    hq::cout() << mpi_types_list();
    return 0;
  }
  for (const auto& w : req->warnings) hq::cerr() << "srun: Warning: " << w << "\n";
  if (req->job_id == 0) {
    SrunRequest outside = *req;
    return run_outside(outside, env);
  }
  std::string path = vars.count("HQ_STEP_SOCKET") ? vars["HQ_STEP_SOCKET"] : "";
  if (path.empty() && !vars.count("HQ_STEPMGR")) return run_in_job_from_outside(*req, env);
  auto create = step_request(*req, env);
  if (!create) {
    hq::cerr() << "srun: error: " << create.status().message() << "\n";
    return 1;
  }
  catch_signals();
  int sock = path.empty() ? -1 : connect_unix(path);
  int err = errno;
  if (sock >= 0) return run_step(sock, *req, std::move(create).value(), "at " + path);
  if (auto at = stepmgr_from_env(vars)) return run_step_remote(*at, *req, std::move(create).value());
  hq::cerr() << "srun: error: Unable to create step for job " << req->job_id << ": cannot reach the node agent at " << path
            << ": " << std::strerror(err) << "\n";
  return 1;
}

}  // namespace hq::cmd
