#include "cmd/agent/agent.hpp"

#include <algorithm>
#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/use_awaitable.hpp>
#include <csignal>
#include <random>
#include <sys/wait.h>

#include "cmd/agent/launcher.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"
#include "net/tls.hpp"
#include "net/token.hpp"

namespace hq::cmd {
namespace {

void log_exceptions(std::exception_ptr e) {
  if (!e) return;
  try { std::rethrow_exception(e); } catch (const std::exception& ex) { log::error(std::string("agent task failed: ") + ex.what()); }
}

}  // namespace

Agent::Agent(asio::io_context& io, AgentOptions opts, HostInfo host)
    : io_(io), opts_(std::move(opts)), host_(std::move(host)), keys_(opts_.secret_file), sigchld_(io, SIGCHLD) {}

void Agent::start() {
  wait_children();
  asio::co_spawn(io_, connect_loop(), log_exceptions);
}

void Agent::stop() {
  stopping_ = true;
  for (auto& [id, rj] : running_) ::kill(-rj.pid, SIGKILL);
  if (conn_) conn_->close("agent stopping");
  sigchld_.cancel();
}

pb::Envelope Agent::registration() const {
  pb::Envelope env;
  auto* r = env.mutable_register_node();
  r->set_name(opts_.name);
  r->set_cpus(host_.cpus);
  r->set_mem_mib(host_.mem_mib);
  r->set_boot_time(host_.boot_time);
  for (const Gpu& g : host_.gpus) {
    pb::Gpu* pg = r->add_gpus();
    pg->set_type(g.type);
    pg->set_cpus(format_cpulist(g.local_cpus));
    pg->set_vendor(std::string(gpu_vendor_name(g.vendor)));
    pg->set_pci(g.pci);
    pg->set_device(g.device);
    pg->set_minor(g.minor);
    pg->set_uuid(g.uuid);
  }
  for (const auto& [id, rj] : running_) r->add_running_jobs(id);
  for (const auto& [id, ended] : unacked_) *r->add_finished() = ended;
  return env;
}

std::unique_ptr<net::ByteStream> Agent::make_stream(asio::ip::tcp::socket socket) {
  if (opts_.transport.plaintext) return net::make_tcp_stream(std::move(socket));
  if (!tls_) {
    auto ctx = net::make_tls_client_context(opts_.transport.ca_pem);
    if (!ctx) throw std::runtime_error(ctx.status().message());
    tls_ = *ctx;
  }
  return net::make_tls_stream(std::move(socket), tls_);
}

asio::awaitable<void> Agent::connect_loop() {
  std::mt19937 rng(std::random_device{}());
  double backoff = 0.2;
  int failures = 0;
  while (!stopping_) {
    asio::ip::tcp::socket socket(io_);
    Status outcome;
    try {
      asio::ip::tcp::resolver resolver(io_);
      auto eps = co_await resolver.async_resolve(opts_.controller.host, std::to_string(opts_.controller.port), asio::use_awaitable);
      co_await asio::async_connect(socket, eps, asio::use_awaitable);
      auto conn = std::make_shared<net::Connection>(io_.get_executor(), make_stream(std::move(socket)));
      outcome = co_await session(conn);
      backoff = 0.2;  // a session happened: start over quickly
      failures = 0;
    } catch (const std::exception& e) {
      outcome = unavailable(e.what());
    }
    if (stopping_) break;
    if (failures++ < 3 || failures % 20 == 0)
      log::warn("controller " + opts_.controller.str() + ": " + outcome.message() + "; retrying");
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    asio::steady_timer t(io_, std::chrono::milliseconds(static_cast<int64_t>(backoff * jitter(rng) * 1000)));
    co_await t.async_wait(asio::use_awaitable);
    backoff = std::min(backoff * 2, 10.0);
  }
}

asio::awaitable<Status> Agent::session(std::shared_ptr<net::Connection> conn) {
  net::Identity me;
  me.role = "node";
  me.node = opts_.name;
  if (std::string msg = keys_.refresh(); !msg.empty()) log::info(msg);  // picks up a rotation
  auto token = net::mint_token(keys_.keys(), me, net::wall_now());
  if (!token) co_return token.status();
  auto hello = co_await conn->handshake_as_client("node", opts_.name, *token);
  if (!hello) co_return hello.status();
  conn->send(registration());
  auto ack = co_await conn->recv();
  if (!ack) co_return ack.status();
  if (ack->has_error()) co_return Status(static_cast<Code>(ack->error().code()), ack->error().message());
  if (!ack->has_register_ack()) co_return invalid("expected RegisterAck");
  log::info("registered with controller " + opts_.controller.str() + " as " + opts_.name);
  conn_ = conn;
  asio::co_spawn(io_, heartbeat_loop(conn, std::max<int64_t>(1, ack->register_ack().heartbeat_interval())), log_exceptions);
  while (true) {
    auto msg = co_await conn->recv();
    if (!msg) {
      if (conn_ == conn) conn_.reset();
      co_return msg.status();
    }
    handle(*msg);
  }
}

asio::awaitable<void> Agent::heartbeat_loop(std::shared_ptr<net::Connection> conn, int64_t interval) {
  asio::steady_timer t(io_);
  while (conn->is_open()) {
    t.expires_after(std::chrono::seconds(interval));
    co_await t.async_wait(asio::use_awaitable);
    if (!conn->is_open()) break;
    pb::Envelope env;
    env.mutable_heartbeat()->set_time(net::wall_now());
    for (const auto& [id, rj] : running_) env.mutable_heartbeat()->add_running_jobs(id);
    conn->send(env);
  }
}

void Agent::handle(const pb::Envelope& msg) {
  if (msg.has_launch()) on_launch(msg.launch());
  else if (msg.has_kill()) on_kill(msg.kill());
  else if (msg.has_job_ended_ack()) unacked_.erase(msg.job_ended_ack().job_id());
  else if (msg.has_error()) log::warn("controller error: " + msg.error().message());
}

void Agent::on_launch(const pb::LaunchJob& l) {
  auto job = net::from_pb(l.job());
  if (!job) return log::warn("bad LaunchJob: " + job.status().message());
  uint64_t id = job->id.value;
  if (running_.count(id) || unacked_.count(id)) return;  // duplicate launch
  kill_wait_ = l.kill_wait() > 0 ? l.kill_wait() : kill_wait_;
  BatchLaunch bl{*job, opts_.name, l.cluster(), l.nodelist(), l.node_index(), opts_.spool_dir, &host_.gpus};
  auto pid = launch_batch(bl);
  if (!pid) {
    log::warn("job " + std::to_string(id) + ": " + pid.status().message());
    pb::JobEnded e;
    e.set_job_id(id);
    e.set_state("FAILED");
    e.set_exit_code(1);
    e.set_reason("JobLaunchFailure");
    e.set_end_time(net::wall_now());
    cleanup_spool(opts_.spool_dir, id);
    return report(e);
  }
  RunningJob& rj = running_[id];
  rj.pid = *pid;
  rj.job = std::move(job).value();
  pids_[*pid] = id;
  if (rj.job.time_limit > 0) {
    rj.limit_timer = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(rj.job.time_limit));
    rj.limit_timer->async_wait([this, id](const asio::error_code& ec) {
      auto it = running_.find(id);
      if (ec || it == running_.end()) return;
      log::info("job " + std::to_string(id) + " reached its time limit");
      it->second.timed_out = true;
      terminate(it->second, kill_wait_);
    });
  }
  arm_signal(id);
}

// --signal=[B:]SIG@T: SIG at T seconds before the time limit, to the batch shell only
// (B:) or to the whole job.
void Agent::arm_signal(uint64_t id) {
  RunningJob& rj = running_.at(id);
  const JobSpec& spec = rj.job.spec;
  if (spec.signal <= 0 || rj.job.time_limit <= 0) return;
  int64_t at = std::max<int64_t>(0, rj.job.time_limit - spec.signal_time);
  rj.signal_timer = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(at));
  rj.signal_timer->async_wait([this, id](const asio::error_code& ec) {
    auto it = running_.find(id);
    if (ec || it == running_.end()) return;
    const JobSpec& s = it->second.job.spec;
    ::kill(s.signal_batch_only ? it->second.pid : -it->second.pid, s.signal);
    log::info("job " + std::to_string(id) + ": sent signal " + std::to_string(s.signal) + " " +
              std::to_string(s.signal_time) + " s before its time limit");
  });
}

void Agent::on_kill(const pb::KillJob& k) {
  auto it = running_.find(k.job_id());
  if (it == running_.end()) return;
  if (k.reason() == "timeout") it->second.timed_out = true;
  else it->second.cancelled = true;
  terminate(it->second, k.reason() == "unknown" ? 0 : k.grace() > 0 ? k.grace() : kill_wait_);
}

// SIGTERM to the whole process group, then SIGKILL after the grace period.
void Agent::terminate(RunningJob& rj, int64_t grace) {
  pid_t pgid = rj.pid;
  ::kill(-pgid, SIGCONT);
  ::kill(-pgid, grace > 0 ? SIGTERM : SIGKILL);
  if (grace <= 0) return;
  rj.kill_timer = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(grace));
  rj.kill_timer->async_wait([pgid](const asio::error_code& ec) {
    if (!ec) ::kill(-pgid, SIGKILL);
  });
}

void Agent::wait_children() {
  sigchld_.async_wait([this](const asio::error_code& ec, int) {
    if (ec) return;
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) reap(pid, status);
    wait_children();
  });
}

void Agent::reap(pid_t pid, int status) {
  auto p = pids_.find(pid);
  if (p == pids_.end()) return;
  uint64_t id = p->second;
  pids_.erase(p);
  auto it = running_.find(id);
  if (it == running_.end()) return;
  RunningJob& rj = it->second;
  ::kill(-rj.pid, SIGKILL);  // nothing of the job outlives its batch script
  pb::JobEnded e;
  e.set_job_id(id);
  e.set_end_time(net::wall_now());
  if (WIFEXITED(status)) e.set_exit_code(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) e.set_exit_signal(WTERMSIG(status));
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  e.set_state(rj.timed_out ? "TIMEOUT" : rj.cancelled ? "CANCELLED" : ok ? "COMPLETED" : "FAILED");
  if (!ok && !rj.timed_out && !rj.cancelled) e.set_reason(WIFSIGNALED(status) ? "RaisedSignal" : "NonZeroExitCode");
  running_.erase(it);
  cleanup_spool(opts_.spool_dir, id);
  report(e);
}

void Agent::report(const pb::JobEnded& ended) {
  unacked_[ended.job_id()] = ended;
  if (!conn_ || !conn_->is_open()) return;  // re-sent with the next registration
  pb::Envelope env;
  *env.mutable_job_ended() = ended;
  conn_->send(env);
}

}  // namespace hq::cmd
