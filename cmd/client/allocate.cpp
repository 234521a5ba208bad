// Allocations for srun and salloc outside a job (see allocate.hpp). One thread.
#include "cmd/client/allocate.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "cmd/client/output.hpp"
#include "cmd/client/retry.hpp"
#include "cmd/paths.hpp"
#include "core/job_env.hpp"
#include "core/std_streams.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"

namespace hq::cmd {
namespace {

int signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  unsigned char s = static_cast<unsigned char>(sig);
  int saved = errno;
  (void)!write(signal_pipe[1], &s, 1);
  errno = saved;
}

void revoke(uint64_t id) {
  pb::Envelope cancel;
  cancel.mutable_cancel()->add_job_ids(id);
  cancel.mutable_cancel()->set_request_key(new_request_key());
  std::unique_ptr<net::RpcClient> fresh;
  (void)call_with_retry(fresh, cancel);
}

Status shown(std::string message) { return Status(Code::kUnavailable, std::move(message)); }

}  // namespace

void catch_signals() {
  if (signal_pipe[0] < 0 && pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

void catch_child_exits() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, nullptr);
}

int signal_fd() { return signal_pipe[0]; }

bool signal_pending() {
  pollfd p{signal_pipe[0], POLLIN, 0};
  return signal_pipe[0] >= 0 && poll(&p, 1, 0) > 0;
}

int next_signal() {
  unsigned char sig = 0;
  return signal_pipe[0] >= 0 && read(signal_pipe[0], &sig, 1) == 1 ? sig : 0;
}

void fill_submitter(JobSpec& spec, const std::vector<std::string>& exported) {
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  spec.submit_host = host;
  spec.uid = getuid();
  spec.gid = getgid();  // the user's name comes from the controller (see submit.cpp's fill_identity)
  spec.env = exported;
  spec.script = std::string();
}

Result<Allocation> request_allocation(const pb::JobSpec& spec, const AllocateOptions& opt) {
  const std::string& prog = opt.prog;
  bool salloc = prog == "salloc";
  pb::Envelope ask;
  *ask.mutable_allocate()->mutable_spec() = spec;
  ask.mutable_allocate()->set_request_key(new_request_key());
  Allocation out;
  bool waited = false, interrupted = false;
  uint64_t job_id = 0;
  auto fail = [&](const std::string& why) {
    hq::cmd::fail(prog, Status(Code::kInvalid, why));  // each line its own "srun: error: "
    return shown(why);
  };
  for (double budget_until = net::mono_seconds() + 15;;) {
    if (!out.client) {
      auto c = connect_client();
      if (!c) {
        if (c.status().code() == Code::kUnavailable && net::mono_seconds() < budget_until && !signal_pending()) continue;
        return fail("Unable to allocate resources: " + c.status().message());
      }
      out.client = std::move(c).value();
      out.client->send(ask);
    }
    auto reply = out.client->recv(86400 * 365, [&] { return interrupted = signal_pending(); });
    if (interrupted) {
      if (!job_id) return fail("Unable to allocate resources: interrupted");
      revoke(job_id);
      hq::cerr() << prog << ": Job allocation " << job_id << " has been revoked" << (salloc ? ".\n" : "\n");
      if (salloc) hq::cerr() << "salloc: Job aborted due to signal\n";
      return shown("revoked");
    }
    if (!reply) {
      if (reply.status().code() == Code::kUnavailable) {  // a controller restart: ask again, same key
        out.client.reset();
        budget_until = net::mono_seconds() + 15;
        continue;
      }
      return fail(context_last_line(reply.status(), "Unable to allocate resources").message());
    }
    if (!reply->has_allocate_reply()) continue;
    const pb::AllocateReply& r = reply->allocate_reply();
    job_id = r.job_id();
    if (!r.error().empty()) return fail(r.error());
    if (!r.granted()) {
      if (opt.immediate) {
        revoke(job_id);
        return fail("Unable to allocate resources: Immediate execution impossible, resources busy");
      }
      if (!waited && salloc) hq::cerr() << "salloc: Pending job allocation " << job_id << "\n";
      if (!waited) hq::cerr() << prog << ": job " << job_id << " queued and waiting for resources" << std::endl;
      waited = true;
      continue;
    }
    if (waited) hq::cerr() << prog << ": job " << job_id << " has been allocated resources" << std::endl;
    if (salloc) hq::cerr() << "salloc: Granted job allocation " << job_id << std::endl;
    out.granted = r;
    return out;
  }
}

void release_allocation(Allocation& a, int exit_code, const std::string& prog) {
  uint64_t id = a.granted.job_id();
  if (prog == "salloc") hq::cerr() << "salloc: Relinquishing job allocation " << id << std::endl;
  pb::Envelope done;
  done.mutable_job_complete()->set_job_id(id);
  done.mutable_job_complete()->set_exit_code(exit_code);
  auto ended = call_with_retry(a.client, done);
  if (!ended) hq::cerr() << prog << ": error: could not end job " << id << ": " << ended.status().message() << "\n";
}

std::string say_alive(std::unique_ptr<net::RpcClient>& client, uint64_t job_id, int32_t& keepalive_s, double timeout_s) {
  if (!client) {
    auto c = connect_client();
    if (!c) return "";
    client = std::move(c).value();
  }
  pb::Envelope alive;
  alive.mutable_allocation_alive()->set_job_id(job_id);
  auto reply = client->call(alive, timeout_s);
  if (!reply) {
    client.reset();  // connect again next time
    return "";
  }
  if (!reply->has_allocation_alive_reply()) return "";
  const pb::AllocationAliveReply& r = reply->allocation_alive_reply();
  if (r.keepalive_s() > 0) keepalive_s = r.keepalive_s();
  return r.state();
}

HolderKeepalive::HolderKeepalive(const Allocation& a)
    : job_id_(a.granted.job_id()), every_s_(a.granted.keepalive_s() > 0 ? a.granted.keepalive_s() : 30),
      thread_([this] { run(); }) {}

HolderKeepalive::~HolderKeepalive() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HolderKeepalive::run() {
  sigset_t all;  // signals are the main thread's (srun's self-pipe)
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_ptr<net::RpcClient> client;  // this thread's own connection
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, std::chrono::seconds(every_s_), [this] { return stop_; })) {
    lock.unlock();
    (void)say_alive(client, job_id_, every_s_, 5);  // a failure is tried again at the next turn
    lock.lock();
  }
}

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

}  // namespace hq::cmd
