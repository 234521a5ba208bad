// `hq run` / srun inside an allocation: asks the agent of the job's batch node (its local
// step socket, HQ_STEP_SOCKET in the batch environment) for a step, then relays: the
// tasks' stdout and stderr to ours (labelled with -l), our stdin to every task, our
// signals to the tasks as Slurm's srun does (Ctrl-C twice within a second kills the step;
// TERM, HUP and QUIT kill it; USR1 and USR2 are passed on). It prints the tasks' ends as
// Slurm does and exits with the step's code. One thread, poll().
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/auth_client.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/client/stepmgr_link.hpp"
#include "cmd/commands.hpp"
#include "cmd/paths.hpp"
#include "cmd/client/srun_output.hpp"
#include "core/hostlist.hpp"
#include "core/io_label.hpp"
#include "core/job_env.hpp"
#include "net/convert.hpp"
#include "core/srun_options.hpp"
#include "core/step_exit.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "hq.pb.h"
#include "net/frame.hpp"

extern char** environ;

namespace hq::cmd {
namespace {

int signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  unsigned char s = static_cast<unsigned char>(sig);
  int saved = errno;
  (void)!write(signal_pipe[1], &s, 1);
  errno = saved;
}

void catch_signals() {
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

double monotonic() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int connect_local(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (fd < 0 || path.size() >= sizeof addr.sun_path) return -1;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

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
  m.set_mpi(r.mpi);
  return m;
}

bool signal_pending() {
  pollfd p{signal_pipe[0], POLLIN, 0};
  return signal_pipe[0] >= 0 && poll(&p, 1, 0) > 0;
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string current_dir() {
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string("/tmp");
}

// The job srun outside an allocation asks for: its options as sbatch's would be.
pb::JobSpec allocation_spec(const SrunRequest& r, const std::vector<std::string>& exported) {
  JobSpec spec;
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
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  spec.submit_host = host;
  spec.uid = getuid();  // the controller takes who it is from the token; this is for the environment
  spec.gid = getgid();
  spec.user = current_user_name();
  spec.env = exported;
  spec.script = std::string();
  return net::to_pb(spec, true);
}

// The allocation's environment for its step, as a batch job's would start: SLURM_JOB_ID,
// SLURM_JOB_NAME, SLURM_JOB_NODELIST, ... (the step adds its own on top).
std::vector<std::string> allocation_env(const pb::AllocateReply& a, const pb::JobSpec& spec,
                                        const std::vector<std::string>& exported) {
  Job job;
  job.id = JobId{a.job_id()};
  job.spec = net::from_pb(spec);
  job.spec.env = exported;
  job.partition = a.partition();
  job.time_limit = a.time_limit();
  for (const auto& n : a.alloc()) {
    NodeAlloc na;
    na.node = n.node();
    na.cpus = n.cpus();
    na.mem_mib = n.mem_mib();
    na.tasks = n.tasks();
    job.alloc.push_back(na);
  }
  LaunchContext ctx;
  ctx.nodelist = a.nodelist();
  if (!job.alloc.empty()) {
    ctx.node = job.alloc.front().node;
    ctx.cpus_on_node = job.alloc.front().cpus;
  }
  std::vector<std::string> out;
  for (auto& kv : job_environment(job, ctx))
    if (kv.rfind("ENVIRONMENT=", 0) != 0) out.push_back(std::move(kv));
  return out;
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
  int finish();

  int sock_;
  const SrunRequest& req_;
  net::FrameDecoder decoder_;
  bool done_ = false, pending_ = false, stdin_open_ = true, killed_by_us_ = false;
  int rc_ = 1;
  uint64_t job_ = 0;
  uint32_t step_ = 0;
  OutputFiles files_;
  std::unique_ptr<TaskOutput> out_, err_;
  bool signaled_ = false, terminating_ = false;
  double last_interrupt_ = -10;
  int in_fd_ = 0;             // -i FILE: that file instead of srun's stdin
  double wait_deadline_ = 0;  // -W: when the step is killed (0: not armed, or done)
  bool wait_started_ = false;
  bool aborted_ = false;      // srun ended the step itself (-W): no "Force Terminated" line
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
  if (sig == SIGINT && monotonic() - last_interrupt_ > 1.0) {
    last_interrupt_ = monotonic();
    std::cerr << "srun: interrupt (one more within 1 sec to abort)" << std::endl;
    return;
  }
  if (sig == SIGINT) {
    std::cerr << "srun: sending Ctrl-C to " << step_name(job_, step_) << std::endl;
    signal_step(SIGINT);
  }
  std::cerr << "srun: forcing job termination" << std::endl;
  killed_by_us_ = true;
  signal_step(SIGKILL);
}

// Slurm's line for tasks that did not exit 0, as they end; with -K the first failure ends
// the step (the agent terminates it). Tasks srun itself had killed (Ctrl-C) are not news.
void Session::on_task_end(const TaskEnd& end) {
  bool killed = WIFSIGNALED(end.wait_status);
  signaled_ |= killed;
  if (!(killed && killed_by_us_))
    if (std::string line = task_end_message(end); !line.empty()) std::cerr << "srun: error: " << line << std::endl;
  bool failed = killed || WEXITSTATUS(end.wait_status) != 0;
  for (uint32_t t : end.tasks)
    if (t < task_state_.size()) task_state_[t] = failed ? kExitedAbnormally : kExited;
  if (req_.wait_s > 0 && !wait_started_) {  // -W: the first task to end starts the clock
    wait_started_ = true;
    wait_deadline_ = monotonic() + req_.wait_s;
  }
  if (failed && req_.kill_on_bad_exit && !terminating_) {
    terminating_ = true;
    std::cerr << "srun: launch/slurm: _step_signal: Terminating " << step_name(job_, step_) << std::endl;
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
  auto out = TaskOutput::make(req_.output, 1, step, files_);
  if (!out) return out.status();
  auto err = TaskOutput::make(req_.error.empty() ? req_.output : req_.error, 2, step, files_);
  if (!err) return err.status();
  out_ = std::move(out).value();
  err_ = std::move(err).value();
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
    std::cerr << "srun: " << step_name(job_, step_) << (tasks.size() == 1 ? " task " : " tasks ") << task_ranges(tasks)
              << ": " << names[state] << "\n";
  }
}

// -W ran out: Slurm's lines, then every task is killed (their ends are reported).
void Session::abort_after_wait() {
  std::cerr << "srun: First task exited " << req_.wait_s << "s ago\n";
  print_task_states();
  std::cerr << "srun: launch/slurm: _step_signal: Terminating " << step_name(job_, step_) << "\n";
  std::cerr << "srun: Job step aborted: Waiting up to " << kill_wait_ + 2 << " seconds for job step to finish."
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
    if (!e.error().empty()) std::cerr << "srun: error: " << e.error() << "\n";
    for (uint32_t t : tasks) {
      if (out_) out_->finish(t);
      if (err_) err_->finish(t);
    }
    on_task_end({e.node(), tasks, e.wait_status()});
    return;
  }
  if (msg.has_step_created()) {
    const auto& c = msg.step_created();
    job_ = c.job_id();
    step_ = c.step_id();
    for (const auto& w : c.warnings()) std::cerr << "srun: Warning: " << w << "\n";
    if (pending_) std::cerr << "srun: Step created for " << step_name(job_, step_) << "\n";
    kill_wait_ = c.kill_wait();
    task_state_.assign(static_cast<size_t>(std::max(0, c.ntasks())), kRunning);
    if (Status st = open_outputs(c); !st) {
      std::cerr << "srun: error: " << st.message() << std::endl;
      killed_by_us_ = true;
      signal_step(SIGKILL);
    }
    return;
  }
  if (msg.has_step_pending()) {
    pending_ = true;
    std::cerr << "srun: Job " << req_.job_id << " step creation temporarily disabled, retrying ("
              << msg.step_pending().reason() << ")" << std::endl;
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
      std::cerr << "srun: error: " << text.substr(start, nl == std::string::npos ? nl : nl - start) << "\n";
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
  if (n > 0) io->set_data(buf, static_cast<size_t>(n));
  else {
    io->set_eof(true);
    stdin_open_ = false;
  }
  send(env);
}

// -i: none (every task reads EOF), a file (every task reads it), or srun's stdin.
Status Session::open_input() {
  const std::string& in = req_.input;
  if (in.empty() || in == "all") return Status::ok();
  if (in == "none") {
    stdin_open_ = false;
    pb::Envelope env;
    env.mutable_task_io()->set_eof(true);
    send(env);
    return Status::ok();
  }
  if (parse_int(in, 0, INT32_MAX)) return invalid("-i " + in + " (stdin to one task) is not supported yet");
  PatternContext ctx;
  ctx.job_id = req_.job_id;
  ctx.user = current_user_name();
  in_fd_ = ::open(expand_pattern(in, ctx).c_str(), O_RDONLY | O_CLOEXEC);
  if (in_fd_ < 0) return io_error("Could not open stdin file " + in + ": " + std::strerror(errno));
  return Status::ok();
}

int Session::run() {
  if (Status s = open_input(); !s) {
    std::cerr << "srun: error: " << s.message() << std::endl;
    return 1;
  }
  char buf[65536];
  while (!done_) {
    pollfd fds[3] = {{sock_, POLLIN, 0}, {signal_pipe[0], POLLIN, 0}, {stdin_open_ ? in_fd_ : -1, POLLIN, 0}};
    int timeout = -1;
    if (wait_deadline_ > 0) timeout = static_cast<int>(std::max(0.0, wait_deadline_ - monotonic()) * 1000) + 1;
    int ready = poll(fds, 3, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0 && wait_deadline_ > 0 && monotonic() >= wait_deadline_) {
      wait_deadline_ = 0;
      abort_after_wait();
      continue;
    }
    if (fds[1].revents & POLLIN) {
      unsigned char sig;
      while (read(signal_pipe[0], &sig, 1) == 1) on_signal(sig);
    }
    if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) forward_stdin();
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t n = read(sock_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::cerr << "srun: error: the node agent running " << (job_ ? step_name(job_, step_) : "this step") << " went away\n";
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
  if (signaled_ && !killed_by_us_ && !aborted_ && job_) std::cerr << "srun: Force Terminated " << step_name(job_, step_) << "\n";
  return rc_;
}

// srun outside an allocation: asks the controller for one, runs the step in it from here
// over the network (the job's first node manages it), then ends the allocation with the
// step's exit code, as Slurm's srun does.
int run_outside(SrunRequest& req, const std::vector<std::string>& env) {
  auto exported = export_environment(req.export_spec, env);
  if (!exported) {
    std::cerr << "srun: error: " << exported.status().message() << "\n";
    return 1;
  }
  catch_signals();
  pb::Envelope ask;
  auto* a = ask.mutable_allocate();
  *a->mutable_spec() = allocation_spec(req, *exported);
  a->set_request_key(new_request_key());
  std::unique_ptr<net::RpcClient> client;
  bool waited = false, interrupted = false;
  uint64_t job_id = 0;
  pb::AllocateReply granted;
  auto revoke = [&](uint64_t id) {
    pb::Envelope cancel;
    cancel.mutable_cancel()->add_job_ids(id);
    cancel.mutable_cancel()->set_request_key(new_request_key());
    std::unique_ptr<net::RpcClient> fresh;
    (void)call_with_retry(fresh, cancel);
  };
  for (double budget_until = monotonic() + 15;;) {
    if (!client) {
      auto c = connect_client();
      if (!c) {
        if (c.status().code() == Code::kUnavailable && monotonic() < budget_until && !signal_pending()) continue;
        std::cerr << "srun: error: Unable to allocate resources: " << c.status().message() << "\n";
        return 1;
      }
      client = std::move(c).value();
      client->send(ask);
    }
    auto reply = client->recv(86400 * 365, [&] { return interrupted = signal_pending(); });
    if (interrupted) {
      if (job_id) {
        revoke(job_id);
        std::cerr << "srun: Job allocation " << job_id << " has been revoked\n";
      } else {
        std::cerr << "srun: error: Unable to allocate resources: interrupted\n";
      }
      return 1;
    }
    if (!reply) {
      if (reply.status().code() == Code::kUnavailable) {  // a controller restart: ask again, same key
        client.reset();
        budget_until = monotonic() + 15;
        continue;
      }
      std::cerr << "srun: error: Unable to allocate resources: " << reply.status().message() << "\n";
      return 1;
    }
    if (!reply->has_allocate_reply()) continue;
    const pb::AllocateReply& r = reply->allocate_reply();
    job_id = r.job_id();
    if (!r.error().empty()) {
      std::cerr << "srun: error: " << r.error() << "\n";
      return 1;
    }
    if (!r.granted()) {
      if (!waited) std::cerr << "srun: job " << job_id << " queued and waiting for resources" << std::endl;
      waited = true;
      continue;
    }
    if (waited) std::cerr << "srun: job " << job_id << " has been allocated resources" << std::endl;
    granted = r;
    break;
  }
  // The step, from here; then the allocation ends with its exit code.
  int rc = 1;
  req.job_id = job_id;
  auto create = step_request(req, env);
  auto transport = find_transport();
  auto token = fetch_token(find_auth_socket());
  Status failed;
  if (!create) failed = create.status();
  else if (!transport) failed = transport.status();
  else if (!token) failed = token.status();
  int sock = -1;
  if (failed.is_ok()) {
    const auto& m = granted.stepmgr();
    auto fd = dial_stepmgr({m.node(), m.host(), m.port(), m.fingerprint()}, transport->plaintext, *token);
    if (!fd) failed = fd.status();
    else sock = *fd;
  }
  if (sock >= 0) {
    create->clear_env();
    for (auto& kv : allocation_env(granted, ask.allocate().spec(), *exported)) create->add_env(kv);
    create->set_wait_for_job(true);
    pb::Envelope first;
    *first.mutable_step_create() = std::move(create).value();
    if (!write_all(sock, net::encode_frame(first.SerializeAsString()))) {
      std::cerr << "srun: error: the node agent of job " << job_id << " closed the connection\n";
    } else {
      Session session(sock, req);
      rc = session.run();
    }
    close(sock);
  } else {
    std::cerr << "srun: error: Unable to create step for job " << job_id << ": " << failed.message() << "\n";
  }
  pb::Envelope done;
  done.mutable_job_complete()->set_job_id(job_id);
  done.mutable_job_complete()->set_exit_code(rc);
  auto ended = call_with_retry(client, done);
  if (!ended) std::cerr << "srun: error: could not end job " << job_id << ": " << ended.status().message() << "\n";
  return rc;
}

int usage(std::ostream& out, int code) {
  out << "usage: srun [OPTIONS] COMMAND [ARGS...]\n"
         "  -n, --ntasks N        tasks            -N, --nodes N[-M]       nodes\n"
         "  --ntasks-per-node N   tasks per node   -c, --cpus-per-task N   CPUs per task (implies --exact)\n"
         "  -m, --distribution block|cyclic|plane=N  -w, --nodelist LIST  -x, --exclude LIST\n"
         "  --exact, --exclusive  only the CPUs the tasks need   --overlap  share CPUs with other steps\n"
         "  -l, --label           prefix lines with the task id  -K, --kill-on-bad-exit\n"
         "  -I, --immediate       fail instead of waiting for busy CPUs   --export SPEC   -D, --chdir DIR\n"
         "  --mpi=pmix            a PMIx server for the tasks (Open MPI without mpirun)   --mpi=list\n"
         "Tasks get Slurm's step environment (SLURM_STEP_ID, SLURM_PROCID, SLURM_LOCALID, ...).\n"
         "Outside a job, srun asks for an allocation first (also -J NAME, -p PARTITION, -t TIME,\n"
         "--mem SIZE, --exclusive: whole nodes), runs the step in it and ends it.\n";
  return code;
}

}  // namespace

int run_srun(const Args& args) {
  for (size_t i = 1; i < args.size() && !args[i].empty() && args[i][0] == '-'; ++i) {
    if (args[i] == "-h" || args[i] == "--help") return usage(std::cout, 0);
    if (args[i] == "--mpi=list" || (args[i] == "--mpi" && i + 1 < args.size() && args[i + 1] == "list")) {
      std::cout << mpi_types_list();
      return 0;
    }
  }
  std::vector<std::string> env;
  std::map<std::string, std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    env.emplace_back(*e);
    size_t eq = env.back().find('=');
    if (eq != std::string::npos) vars[env.back().substr(0, eq)] = env.back().substr(eq + 1);
  }
  auto req = parse_srun({args.begin() + 1, args.end()}, vars);
  if (!req) {
    std::cerr << "srun: " << (req.status().message() == "No command given to execute." ? "fatal: " : "error: ")
              << req.status().message() << "\n";
    return 1;
  }
  for (const auto& w : req->warnings) std::cerr << "srun: Warning: " << w << "\n";
  if (req->job_id == 0) {
    SrunRequest outside = *req;
    return run_outside(outside, env);
  }
  std::string path = vars.count("HQ_STEP_SOCKET") ? vars["HQ_STEP_SOCKET"] : "";
  if (path.empty()) {
    std::cerr << "srun: error: Unable to create step for job " << req->job_id
              << ": not inside an hq batch job on its node (HQ_STEP_SOCKET is not set)\n";
    return 1;
  }
  auto create = step_request(*req, env);
  if (!create) {
    std::cerr << "srun: error: " << create.status().message() << "\n";
    return 1;
  }
  int sock = connect_local(path);
  if (sock < 0) {
    std::cerr << "srun: error: Unable to create step for job " << req->job_id << ": cannot reach the node agent at " << path
              << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  catch_signals();
  pb::Envelope first;
  *first.mutable_step_create() = std::move(create).value();
  if (!write_all(sock, net::encode_frame(first.SerializeAsString()))) {
    std::cerr << "srun: error: the node agent at " << path << " closed the connection\n";
    return 1;
  }
  Session session(sock, *req);
  int rc = session.run();
  close(sock);
  return rc;
}

}  // namespace hq::cmd
