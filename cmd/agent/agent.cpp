#include "cmd/agent/agent.hpp"

#include <algorithm>
#include <filesystem>
#include <asio/co_spawn.hpp>
#include <asio/connect.hpp>
#include <asio/use_awaitable.hpp>
#include <csignal>
#include <random>
#include <sched.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <ctime>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "cmd/agent/agent_link.hpp"
#include "cmd/agent/launcher.hpp"
#include "cmd/agent/proc_track.hpp"
#include "cmd/agent/task_launch.hpp"
#include "cmd/paths.hpp"
#include "core/cpu_bind.hpp"
#include "core/job_env.hpp"
#include "core/step_exit.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"
#include "net/entropy.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"
#include "net/tls.hpp"
#include "net/token.hpp"

namespace hq::cmd {
namespace {

// Dialing backs off from 0.2 s doubling to this cap (with jitter 0.5-1): an agent that has
// waited for hours still joins within 1 s (plus a handshake) of the controller's start, so
// its node is back in service within 2 s. A refused connection costs the controller host
// one RST, so even 10,000 waiting agents are cheap.
constexpr double kRetryCapSeconds = 1.0;

void log_exceptions(std::exception_ptr e) {
  if (!e) return;
  try { std::rethrow_exception(e); } catch (const std::exception& ex) { log::error(std::string("agent task failed: ") + ex.what()); }
}

}  // namespace

Agent::Agent(asio::io_context& io, AgentOptions opts, HostInfo host, Cgroups cgroups)
    : io_(io), opts_(std::move(opts)), host_(std::move(host)), cgroups_(std::move(cgroups)),
      helpers_(io, opts_.spool_dir), keys_(opts_.secret_file), sigchld_(io, SIGCHLD) {
  cpu_pool_ = own_affinity();
}

void Agent::start() {
  // Orphaned job processes come back to the agent, which reaps them; none linger as zombies.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // A root agent's memory is not dumpable (no core file, no tracing but by root): its jobs'
  // shims share it (cmd/agent/shim_memory.hpp), and so do their scripts' processes until
  // they exec, which switch to the job's user first and then make it not dumpable (the
  // switch sets it to fs.suid_dumpable): so it is from the start, not from the first job.
  if (geteuid() == 0) prctl(PR_SET_DUMPABLE, 0);
  // Where fs.suid_dumpable is 1 a process that switches to a user stays traceable by them
  // until it says otherwise: the script's child, sharing the agent's memory, would be for
  // an instant. Forked shims there.
  shims_may_share_ = trim(read_small_file("/proc/sys/fs/suid_dumpable")) != "1";
  if (!opts_.run_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts_.run_dir, ec);
    auth_ = std::make_unique<AuthService>(io_, opts_.run_dir + "/auth.sock",
                                          [this]() -> const net::Keyring& { return keys_.keys(); });
    if (Status s = auth_->start(); !s) {
      log::warn("no token service for local clients: " + s.message());
      auth_.reset();
    } else {
      log::info("token service for local clients on " + opts_.run_dir + "/auth.sock");
    }
    start_step_manager();
  }
  start_metrics();
  adopt_running();
  if (int stale = cgroups_.sweep_stale(running_ids()); stale > 0)
    log::warn("killed the processes of " + std::to_string(stale) + " job(s) an earlier agent left behind");
  wait_children();
  fence_timer_ = std::make_unique<asio::steady_timer>(io_);
  check_fence();
  asio::co_spawn(io_, connect_loop(), log_exceptions);
}

// A node cut off from the controller for node_timeout has its jobs requeued elsewhere; with
// fence_timeout (< node_timeout) its agent kills them first, so no job runs twice at once.
void Agent::check_fence() {
  double silent = net::mono_seconds() - last_word_;
  // The lease the jobs' shims watch: they fence themselves when this agent is gone too.
  if (last_word_ > 0 && silent < 2) {
    int fd = ::open(lease_file(opts_.spool_dir).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
      (void)::futimens(fd, nullptr);
      ::close(fd);
    }
  }
  if (opts_.fence_timeout > 0 && last_word_ > 0 && silent > static_cast<double>(opts_.fence_timeout)) {
    for (auto& [id, rj] : running_) {
      if (rj.fenced || rj.pid <= 0) continue;
      log::warn("job " + std::to_string(id) + ": no word from the controller for " + std::to_string(static_cast<int>(silent)) +
                " s (fence_timeout " + std::to_string(opts_.fence_timeout) + " s); killing it");
      rj.fenced = true;
      terminate(rj, 0);
    }
    while (!held_.empty()) release_held(held_.begin()->first, "no word from the controller (fence_timeout)");
  }
  fence_timer_->expires_after(std::chrono::seconds(1));
  fence_timer_->async_wait([this](const asio::error_code& ec) {
    if (!ec && !stopping_) check_fence();
  });
}

// srun inside the jobs whose batch script runs here talks to <run_dir>/step.sock.
void Agent::start_step_manager() {
  auto find = [this](uint64_t id) -> std::optional<StepManager::JobView> {
    if (auto h = held_.find(id); h != held_.end()) {
      if (h->second.ending) return std::nullopt;
      bool first = !h->second.job.alloc.empty() && h->second.job.alloc.front().node == opts_.name;
      return StepManager::JobView{&h->second.job, h->second.cgroup, h->second.cpus, h->second.peers,
                                  first ? held_step_ids_file(id) : "",
                                  step_gpu_env(h->second.job, h->second.gpus_renumbered),
                                  step_gpu_deny(h->second.job, h->second.gpus_renumbered), h->second.topo};
    }
    std::string ids = job_dir(opts_.spool_dir, id) + "/step_ids";
    auto it = running_.find(id);
    if (it == running_.end() || it->second.in_prolog || it->second.pid <= 0) return std::nullopt;
    const RunningJob& rj = it->second;
    if (rj.cancelled || rj.timed_out) return std::nullopt;  // ending: no new steps
    return StepManager::JobView{&rj.job, rj.cgroup, rj.cpus, rj.peers, ids, step_gpu_env(rj.job, rj.gpus_renumbered),
                                step_gpu_deny(rj.job, rj.gpus_renumbered), rj.topo};
  };
  steps_ = std::make_unique<StepManager>(io_, opts_.name, opts_.run_dir + "/step.sock", find,
                                         [this] { return kill_wait_; });
  steps_->set_views(
      [this](const pb::StepRecord& r) {
        if (r.state() != "RUNNING" && unacked_steps_.keep(r))
          log::warn("more than " + std::to_string(UnackedStepEnds::kMax) +
                    " ended steps not acknowledged by the controller: the lowest job and step ids' records are dropped");
        if (!conn_ || !conn_->is_open()) return;  // the full report on registration catches up
        pb::Envelope env;
        *env.mutable_step_report()->add_steps() = r;
        conn_->send(env);
      },
      [this] {
        std::vector<StepManager::LocalJob> jobs;
        for (const auto& [id, rj] : running_) jobs.push_back({id, rj.job.spec.uid, rj.job.spec.name, rj.pid});
        for (const auto& [id, h] : held_) jobs.push_back({id, h.job.spec.uid, h.job.spec.name, 0});
        return jobs;
      });
  if (Status s = steps_->start(); !s) {
    log::warn("no job steps (srun) on this node: " + s.message());
    steps_.reset();
    return;
  }
  PeerNet::Options po{opts_.name, opts_.spool_dir, opts_.transport.plaintext, opts_.step_port,
                      [this]() -> const net::Keyring& { return keys_.keys(); },
                      [this] { return heartbeat_interval_; }};
  peers_ = std::make_unique<PeerNet>(
      io_, po,
      [this](const PeerNet::ConnPtr& link, const std::string& node, const pb::Envelope& msg) {
        if (steps_) steps_->peer_message(link, node, msg);
      },
      [this](const PeerNet::ConnPtr& link, const std::string& node) {
        if (steps_) steps_->peer_closed(link, node);
      });
  steps_->set_peers(peers_.get());
  peers_->set_user_sessions([this](const PeerNet::ConnPtr& conn, uint32_t uid) {
    if (steps_) steps_->user_session(conn, uid);
  });
}

// The peer listener goes on the address this agent reaches the controller from, which is
// the address the controller hands out to the job's first node.
void Agent::listen_for_peers(const asio::ip::address& local) {
  if (!peers_ || peers_->listening()) return;
  if (Status s = peers_->listen(local); !s) log::warn("no steps across nodes here: " + s.message());
}

void Agent::stop() {
  stopping_ = true;
  if (steps_) steps_->stop();
  if (peers_) peers_->stop();
  if (opts_.kill_jobs_on_exit) {
    for (auto& [id, rj] : running_) {
      if (rj.pid > 0) ::kill(-rj.pid, SIGKILL);
      if (rj.shim > 0) ::kill(rj.shim, SIGKILL);
      rj.cgroup.kill_all();
      rj.cgroup.remove();
      cleanup_spool(opts_.spool_dir, id);  // ended here: nothing for a successor to adopt
    }
    while (!held_.empty()) release_held(held_.begin()->first, "the agent stops", false);
  } else if (!running_.empty()) {
    log::info("leaving " + std::to_string(running_.size()) + " running job(s) to the next agent");
  }
  cgroups_.release();  // its spare groups, and its directories where no job is left in them
  if (auth_) auth_->stop();
  if (metrics_acceptor_) {
    asio::error_code ec;
    metrics_acceptor_->close(ec);
  }
  if (conn_) conn_->close("agent stopping");
  sigchld_.cancel();
  if (fence_timer_) fence_timer_->cancel();
}

pb::Envelope Agent::registration() const {
  pb::Envelope env;
  auto* r = env.mutable_register_node();
  r->set_name(opts_.name);
  r->set_cpus(host_.cpus);
  r->set_mem_mib(host_.mem_mib);
  r->set_boot_time(host_.boot_time);
  if (host_.cores > 0 && host_.cpus > host_.cores && host_.cpus % host_.cores == 0)
    r->set_threads_per_core(host_.cpus / host_.cores);
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
  for (const auto& f : opts_.features) r->add_features(f);
  r->set_block(opts_.block);
  r->set_switch_name(opts_.switch_name);
  if (peers_ && peers_->listening()) {
    r->set_step_port(peers_->port());
    r->set_cert_fingerprint(peers_->fingerprint());
  }
  for (const auto& [id, rj] : running_) r->add_running_jobs(id);
  for (const auto& [id, h] : held_) r->add_running_jobs(id);
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
      if (!opts_.transport.plaintext && opts_.transport.ca_pem.empty()) {
        outcome = co_await fetch_ca();
        if (outcome) continue;  // verified: connect again at once, now checking the controller
      } else {
        asio::ip::tcp::resolver resolver(io_);
        auto eps = co_await resolver.async_resolve(opts_.controller.host, std::to_string(opts_.controller.port), asio::use_awaitable);
        co_await asio::async_connect(socket, eps, asio::use_awaitable);
        asio::error_code local_ec;
        auto local = socket.local_endpoint(local_ec);
        if (!local_ec) listen_for_peers(local.address());
        auto conn = std::make_shared<net::Connection>(io_.get_executor(), make_stream(std::move(socket)));
        outcome = co_await session(conn);
        backoff = 0.2;  // a session happened: start over quickly
        failures = 0;
      }
    } catch (const std::exception& e) {
      outcome = unavailable(e.what());
    }
    if (stopping_) break;
    if (failures++ < 3 || failures % 20 == 0)
      log::warn("controller " + opts_.controller.str() + ": " + outcome.message() + "; retrying");
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    asio::steady_timer t(io_, std::chrono::milliseconds(static_cast<int64_t>(backoff * jitter(rng) * 1000)));
    co_await t.async_wait(asio::use_awaitable);
    backoff = std::min(backoff * 2, kRetryCapSeconds);
  }
}

net::Identity Agent::node_identity() const {
  net::Identity me;
  me.role = "node";
  me.node = opts_.name;
  return me;
}

void Agent::publish_for_clients() const {
  if (opts_.run_dir.empty()) return;
  // The CA first: a client that sees the controller file finds everything it needs.
  Status s = opts_.transport.plaintext ? Status::ok()
                                       : write_file_atomic(opts_.run_dir + "/ca.pem", opts_.transport.ca_pem, 0644);
  if (s) s = write_file_atomic(opts_.run_dir + "/controller", opts_.controller.str() + "\n", 0644);
  if (!s) log::warn("cannot tell local clients where the controller is: " + s.message());
}

asio::awaitable<Status> Agent::fetch_ca() {
  asio::ip::tcp::socket socket(io_);
  asio::ip::tcp::resolver resolver(io_);
  auto eps = co_await resolver.async_resolve(opts_.controller.host, std::to_string(opts_.controller.port), asio::use_awaitable);
  co_await asio::async_connect(socket, eps, asio::use_awaitable);
  auto ctx = net::make_tls_bootstrap_context();
  if (!ctx) co_return ctx.status();
  auto conn = std::make_shared<net::Connection>(io_.get_executor(), net::make_tls_stream(std::move(socket), *ctx));
  if (std::string msg = keys_.refresh(); !msg.empty()) log::info(msg);
  auto token = net::mint_token(keys_.keys(), node_identity(), net::wall_now());
  if (!token) co_return token.status();
  auto hello = co_await conn->handshake_as_client("node", opts_.name, *token);
  if (!hello) co_return hello.status();
  std::string nonce = net::random_bytes(16);
  if (nonce.empty()) co_return internal("getrandom failed");
  pb::Envelope req;
  req.mutable_ca_request()->set_nonce(nonce);
  conn->send(req);
  auto answer = co_await conn->recv();
  conn->close("CA received");
  if (!answer) co_return answer.status();
  if (answer->has_error()) co_return Status(static_cast<Code>(answer->error().code()), answer->error().message());
  if (!answer->has_ca_reply()) co_return invalid("expected the controller's CA");
  const pb::CaReply& ca = answer->ca_reply();
  if (Status s = net::verify_ca_mac(keys_.keys(), ca.key_id(), nonce, ca.ca_pem(), ca.mac()); !s) co_return s;
  if (auto check = net::make_tls_client_context(ca.ca_pem()); !check) co_return check.status();
  std::string path = opts_.spool_dir + "/ca.pem";
  if (Status s = write_file_atomic(path, ca.ca_pem(), 0644); !s) log::warn("cannot cache the CA: " + s.message());
  opts_.transport.ca_pem = ca.ca_pem();
  tls_.reset();
  log::info("fetched the cluster CA from " + opts_.controller.str() + " (vouched for by the cluster secret, key " +
            std::to_string(ca.key_id()) + "); cached in " + path);
  co_return Status::ok();
}

asio::awaitable<Status> Agent::session(std::shared_ptr<net::Connection> conn) {
  if (std::string msg = keys_.refresh(); !msg.empty()) log::info(msg);  // picks up a rotation
  auto token = net::mint_token(keys_.keys(), node_identity(), net::wall_now());
  if (!token) co_return token.status();
  auto hello = co_await conn->handshake_as_client("node", opts_.name, *token);
  if (!hello) co_return hello.status();
  conn->send(registration());
  AgentLink link;
  while (true) {
    auto msg = co_await conn->recv();
    if (!msg) {
      if (conn_ == conn) conn_.reset();
      co_return msg.status();
    }
    last_word_ = net::mono_seconds();
    AgentLink::Step step = link.on_message(std::move(msg).value());
    if (!step.ended) co_return step.ended;
    if (step.registered) on_registered(conn, *step.registered);
    for (const auto& m : step.deliver) handle(m);
  }
}

void Agent::on_registered(const std::shared_ptr<net::Connection>& conn, const pb::RegisterAck& ack) {
  log::info("registered with controller " + opts_.controller.str() + " as " + opts_.name);
  apply_settings(ack);
  publish_for_clients();
  if (!opts_.health_check.empty() && !health_timer_) schedule_health_check(0);
  conn_ = conn;
  // Ends that came after the registration was sent would wait for the next one: send them
  // (all unacked ends; the controller acks a duplicate without recording it twice).
  for (const auto& [id, ended] : unacked_) {
    pb::Envelope env;
    *env.mutable_job_ended() = ended;
    conn->send(env);
  }
  if (steps_) {  // the steps managed here, all of them (the controller forgets the others),
    pb::Envelope env;  // and those that ended unacknowledged
    env.mutable_step_report()->set_full(true);
    for (auto& r : steps_->running_records()) *env.mutable_step_report()->add_steps() = std::move(r);
    unacked_steps_.add_to(*env.mutable_step_report());
    conn->send(env);
  }
  heartbeat_interval_ = std::max<int64_t>(1, ack.heartbeat_interval());
  asio::co_spawn(io_, heartbeat_loop(conn, heartbeat_interval_), log_exceptions);
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
    for (const auto& [id, h] : held_) env.mutable_heartbeat()->add_running_jobs(id);
    conn->send(env);
  }
}

void Agent::handle(const pb::Envelope& msg) {
  if (msg.has_launch()) on_launch(msg.launch());
  else if (msg.has_kill()) on_kill(msg.kill());
  else if (msg.has_job_time_limit()) on_time_limit(msg.job_time_limit());
  else if (msg.has_job_ended_ack()) {
    auto it = unacked_.find(msg.job_ended_ack().job_id());
    if (it != unacked_.end() && it->second.restart_count() == msg.job_ended_ack().restart_count()) end_acked(it);
  }
  else if (msg.has_step_report_ack()) unacked_steps_.acked(msg.step_report_ack());
  else if (msg.has_error()) log::warn("controller error: " + msg.error().message());
}

void Agent::on_launch(const pb::LaunchJob& l) {
  auto job = net::from_pb(l.job());
  if (!job) return log::warn("bad LaunchJob: " + job.status().message());
  uint64_t id = job->id.value;
  if (auto old = held_.find(id); old != held_.end()) {
    if (job->restart_count <= old->second.job.restart_count) return;  // a duplicate launch
    release_held(id, "run " + std::to_string(job->restart_count) + " replaces it");  // the old run's share first
  }
  if (auto old = running_.find(id); old != running_.end()) {
    // A new run of a job requeued while this node was silent: the old run goes first.
    if (job->restart_count > old->second.job.restart_count) {
      log::info("job " + std::to_string(id) + ": run " + std::to_string(job->restart_count) +
                " waits for the end of run " + std::to_string(old->second.job.restart_count) + " here");
      deferred_[id] = l;
      old->second.cancelled = true;
      terminate(old->second, 0);
    }
    return;  // else a duplicate launch
  }
  if (auto end = unacked_.find(id); end != unacked_.end() && end->second.restart_count() >= job->restart_count) return;
  kill_wait_ = l.kill_wait() > 0 ? l.kill_wait() : kill_wait_;
  if (l.alloc_only()) return hold(std::move(job).value(), {l.peers().begin(), l.peers().end()}, topology_addr(l));
  if (!opts_.prolog.empty()) {  // the job counts as running here while its prolog runs
    RunningJob& rj = running_[id];
    rj.job = *job;
    rj.in_prolog = true;
    helpers_.run(opts_.prolog, helper_env(*job), static_cast<int>(opts_.helper_timeout),
                 [this, id, l](const HelperOutcome& outcome) { prolog_done(id, l, outcome); });
    return;
  }
  begin_job(std::move(job).value(), l, RunningJob{});
}

// Starts the batch script (after the prolog, if any) and arms its time limit and signal.
void Agent::begin_job(Job job, const pb::LaunchJob& l, RunningJob started) {
  uint64_t id = job.id.value;
  auto launched = start_job(job, l, started);
  if (!launched) return fail_launch(job, launched.status().message());
  RunningJob& rj = running_[id] = std::move(started);
  rj.pid = launched->script;
  rj.shim = launched->shim;
  rj.shim_area = std::move(launched->area);
  rj.shim_shared = launched->shared_memory;
  rj.job = std::move(job);
  rj.peers.assign(l.peers().begin(), l.peers().end());
  rj.topo = topology_addr(l);
  pids_[rj.shim] = id;
  arm_limits(id);
  if (steps_) steps_->job_arrived(id);
}

// The time limit (from the job's start, so an adopted job keeps its end) and --signal.
void Agent::arm_limits(uint64_t id) {
  RunningJob& rj = running_.at(id);
  if (rj.job.time_limit > 0) {
    int64_t left = std::max<int64_t>(0, rj.job.start_time + rj.job.time_limit - net::wall_now());
    rj.limit_timer = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(left));
    rj.limit_timer->async_wait([this, id](const asio::error_code& ec) {
      auto it = running_.find(id);
      if (ec || it == running_.end()) return;
      log::info("job " + std::to_string(id) + " reached its time limit");
      it->second.timed_out = true;
      cancelled_line(it->second, " DUE TO TIME LIMIT");
      terminate(it->second, kill_wait_);
    });
  }
  arm_signal(id);
}

// scancel -s SIG: as Slurm, to the job's steps; -b to the batch shell alone; -f to both,
// and the shell's children (its process group). The job goes on.
void Agent::signal_job(const pb::KillJob& k) {
  int sig = k.signal();
  if (sig <= 0 || sig > 64) return;
  uint64_t id = k.job_id();
  if (k.signal_scope() != 1 && steps_) steps_->signal_job(id, sig);
  auto it = running_.find(id);
  if (k.signal_scope() == 0 || it == running_.end() || it->second.pid <= 0) return;
  ::kill(k.signal_scope() == 2 ? -it->second.pid : it->second.pid, sig);
  log::info("job " + std::to_string(id) + ": signal " + std::to_string(sig) + " to its batch shell" +
            (k.signal_scope() == 2 ? " and its children" : ""));
}

// scontrol suspend / resume: SIGSTOP / SIGCONT to every step's tasks and to the batch
// shell's process group, as slurmstepd does. A suspended job's time limit and --signal wait;
// the controller sends the resumed job's limit, longer by the time it was suspended.
void Agent::suspend_job(uint64_t id, bool suspend) {
  int sig = suspend ? SIGSTOP : SIGCONT;
  if (steps_) steps_->signal_job(id, sig);
  auto it = running_.find(id);
  if (it == running_.end()) return;  // an allocation's first node: its steps are all there is
  RunningJob& rj = it->second;
  if (rj.suspended == suspend) return;
  rj.suspended = suspend;
  if (suspend) {
    rj.limit_timer.reset();
    rj.signal_timer.reset();
  }
  if (rj.pid > 0) ::kill(-rj.pid, sig);
  log::info("job " + std::to_string(id) + (suspend ? " suspended" : " resumed"));
}

// scontrol notify: slurmstepd's error line, word for word, at the end of the job's stderr.
void Agent::notify_job(const pb::KillJob& k) {
  auto it = running_.find(k.job_id());
  if (it == running_.end()) return;
  const Job& job = it->second.job;
  std::string text = k.message().substr(0, 4096);
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  (void)append_job_line(batch_error_path(job, opts_.name), job.spec.uid,
                        stepd_error_prefix(opts_.name) + text + "\n");
}

// scontrol update TimeLimit=: the limit counts from the job's start, as before.
void Agent::on_time_limit(const pb::JobTimeLimit& t) {
  auto it = running_.find(t.job_id());
  if (it == running_.end() || it->second.timed_out || it->second.suspended) return;
  it->second.job.time_limit = t.time_limit() > 0 ? t.time_limit() : kUnlimited;
  it->second.limit_timer.reset();
  it->second.signal_timer.reset();
  log::info("job " + std::to_string(t.job_id()) + ": time limit now " + format_limit(it->second.job.time_limit));
  arm_limits(t.job_id());
}

void Agent::fail_launch(const Job& job, const std::string& why) {
  uint64_t id = job.id.value;
  log::warn("job " + std::to_string(id) + ": " + why);
  JobEnded ended{job.id, net::wall_now(), JobState::kFailed, 1, 0, JobReason::kJobLaunchFailure};
  ended.detail = why;
  pb::JobEnded e = net::to_pb(ended);
  e.set_restart_count(job.restart_count);
  report(e);
  clear_run(opts_.spool_dir, id);
}

// An alloc-only job: its share of this node (CPUs, memory, GPUs, in its cgroup) waits for
// the tasks of its steps; the prolog and epilog run on the job's first node only.
void Agent::hold(Job job, std::vector<pb::AgentAddress> peers, TopologyAddr topo) {
  uint64_t id = job.id.value;
  HeldJob h;
  h.cpus = choose_job_cpus(job);
  auto group = cgroups_.create(id, job_limits(job, h.cpus));
  if (!group) {  // no end to report from here: the job's steps cannot start tasks on this node
    log::warn("job " + std::to_string(id) + ": cannot hold its share here: " + group.status().message());
    return;
  }
  h.cgroup = *group;
  h.gpus_renumbered = h.cgroup.confines_devices() && !job_limits(job, h.cpus).deny_devices.empty();
  h.job = std::move(job);
  h.peers = std::move(peers);
  h.topo = std::move(topo);
  std::string where = "CPUs " + format_cpulist(h.cpus);
  if (h.cgroup.active()) where += "; cgroup " + h.cgroup.dirs().front();
  log::info("job " + std::to_string(id) + ": holding its share here for steps (alloc-only; " + where + ")");
  held_[id] = std::move(h);
  if (steps_) steps_->job_arrived(id);
}

// The step count of an allocation held here (srun or salloc), beside the job spools: a
// job directory would be taken for a batch run by the next agent's adopt_running().
std::string Agent::held_step_ids_file(uint64_t id) const {
  return opts_.spool_dir + "/held" + std::to_string(id) + ".step_ids";
}

void Agent::release_held(uint64_t id, const std::string& why, bool forget) {
  auto it = held_.find(id);
  if (it == held_.end()) return;
  HeldJob& h = it->second;
  if (steps_) steps_->job_ended(id);
  bool emptied = !h.cgroup.active() || h.cgroup.kill_all();
  if (!emptied) log::warn("job " + std::to_string(id) + ": processes survived SIGKILL in " + h.cgroup.dirs().front());
  if (!h.cgroup.active()) kill_job_processes(id, h.job.spec.uid);
  cgroups_.recycle(h.cgroup, emptied, h.cgroup.active() ? h.cgroup.usage().oom_kills : 0);
  held_.erase(it);
  std::error_code ec;
  if (forget) std::filesystem::remove(held_step_ids_file(id), ec);  // its step count (the first node's)
  log::info("job " + std::to_string(id) + ": released its share here (" + why + ")");
}

// The character devices of this node's GPUs `which` (real devices only: a fake probe
// tree's paths are not looked at).
std::vector<DeviceId> Agent::gpu_devices(const std::vector<int32_t>& which) const {
  std::vector<DeviceId> out;
  if (!default_probe_root().empty()) return out;
  for (int32_t i : which) {
    if (i < 0 || static_cast<size_t>(i) >= host_.gpus.size()) continue;
    struct stat st {};
    if (::stat(host_.gpus[static_cast<size_t>(i)].device.c_str(), &st) == 0 && S_ISCHR(st.st_mode))
      out.push_back({major(st.st_rdev), minor(st.st_rdev)});
  }
  return out;
}

// Those of this node's GPUs that are not the job's.
std::vector<DeviceId> Agent::other_gpu_devices(const std::vector<int32_t>& mine) const {
  std::vector<int32_t> others;
  for (size_t i = 0; i < host_.gpus.size(); ++i)
    if (std::find(mine.begin(), mine.end(), static_cast<int32_t>(i)) == mine.end()) others.push_back(static_cast<int32_t>(i));
  return gpu_devices(others);
}

namespace {
// This node's part of a job's allocation.
NodeAlloc share_here(const Job& job, const std::string& node) {
  NodeAlloc mine{node, 1, 0, 1, {}};
  for (const NodeAlloc& a : job.alloc)
    if (a.node == node) mine = a;
  return mine;
}
}  // namespace

std::vector<int32_t> Agent::choose_job_cpus(const Job& job) const {
  NodeAlloc mine = share_here(job, opts_.name);
  std::vector<int32_t> near;  // CPUs next to the job's GPUs
  for (int32_t g : mine.gpus)
    if (g >= 0 && static_cast<size_t>(g) < host_.gpus.size())
      near.insert(near.end(), host_.gpus[g].local_cpus.begin(), host_.gpus[g].local_cpus.end());
  std::sort(near.begin(), near.end());
  std::map<int32_t, int32_t> in_use;
  for (const auto& [id, other] : running_)
    for (int32_t c : other.cpus) ++in_use[c];
  for (const auto& [id, other] : held_)
    for (int32_t c : other.cpus) ++in_use[c];
  if (job.spec.nomultithread) return choose_cores(cpu_pool_, in_use, mine.cpus, near, host_.core_cpus);
  return choose_cpus(cpu_pool_, in_use, mine.cpus, near);
}

// The GPU variables of a job's step tasks on this node, for the step's GPUs (numbered as
// the step's processes see them: with `renumbered` (the job's group hides the node's other
// GPUs), among the job's GPUs, or among the step's own when its group hides the job's
// others too); null for a job without GPUs.
std::function<std::vector<std::string>(const std::vector<int32_t>&, bool)> Agent::step_gpu_env(const Job& job,
                                                                                              bool renumbered) const {
  if (!job_has_gpus(job)) return nullptr;
  std::vector<int32_t> job_gpus = share_here(job, opts_.name).gpus;
  return [this, job_gpus = std::move(job_gpus), renumbered](const std::vector<int32_t>& gpus, bool step_confined) {
    return step_gpu_environment(job_gpus, gpus, &host_.gpus, renumbered, step_confined ? gpus : job_gpus);
  };
}

std::function<std::vector<DeviceId>(const std::vector<int32_t>&)> Agent::step_gpu_deny(const Job& job,
                                                                                       bool confined) const {
  if (!confined || !job_has_gpus(job)) return nullptr;
  std::vector<int32_t> job_gpus = share_here(job, opts_.name).gpus;
  return [this, job_gpus = std::move(job_gpus)](const std::vector<int32_t>& gpus) {
    std::vector<int32_t> not_the_steps;
    for (int32_t g : job_gpus)
      if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) not_the_steps.push_back(g);
    return gpu_devices(not_the_steps);
  };
}

CgroupLimits Agent::job_limits(const Job& job, const std::vector<int32_t>& cpus) const {
  NodeAlloc mine = share_here(job, opts_.name);
  return CgroupLimits{cpus, mine.mem_mib * 1024 * 1024, opts_.job_pids_max, other_gpu_devices(mine.gpus),
                      !host_.gpus.empty()};
}

Result<LaunchedJob> Agent::start_job(const Job& job, const pb::LaunchJob& l, RunningJob& rj) {
  rj.cpus = choose_job_cpus(job);
  auto bind = parse_cpu_bind(job.spec.cpu_bind);
  if (!bind) return bind.status();
  auto affinity = affinity_for(*bind, rj.cpus);
  if (!affinity) return affinity.status();
  // --hint=nomultithread: the job holds whole cores (its cgroup has every thread of them);
  // its processes run on one thread of each, as Slurm binds them.
  if (job.spec.nomultithread && bind->kind == CpuBindKind::kDefault) affinity = first_threads(rj.cpus, host_.core_cpus);
  CgroupLimits limits = job_limits(job, rj.cpus);
  auto group = cgroups_.create(job.id.value, limits);
  if (!group) return group.status();
  rj.cgroup = *group;
  bool renumbered = rj.cgroup.confines_devices() && !limits.deny_devices.empty();
  rj.gpus_renumbered = renumbered;
  BatchLaunch bl{job, opts_.name, l.cluster(), l.nodelist(), l.node_index(), opts_.spool_dir, &host_.gpus,
                 rj.cgroup.batch_procs_files(), *affinity, renumbered, opts_.fence_timeout,
                 steps_ ? steps_->socket_path() : "", topology_addr(l)};
  bl.share_agent_memory = shims_may_share_ && cgroups_.mode() == CgroupMode::kV1 && rj.cgroup.measures_memory();
  auto launched = launch_batch(bl, [&](const LaunchedJob& pids) { return write_record(job.id.value, l, pids, rj.cpus); });
  if (!launched) {
    rj.cgroup.remove();
    return launched.status();
  }
  return launched;
}

// --signal=[B:]SIG@T: SIG at T seconds before the time limit, to the batch shell only
// (B:) or to the whole job.
void Agent::arm_signal(uint64_t id) {
  RunningJob& rj = running_.at(id);
  const JobSpec& spec = rj.job.spec;
  if (spec.signal <= 0 || rj.job.time_limit <= 0) return;
  int64_t at = std::max<int64_t>(0, rj.job.start_time + rj.job.time_limit - spec.signal_time - net::wall_now());
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

// A kill whose reason this agent does not know (a newer controller's) still kills: as a cancel.
void Agent::on_kill(const pb::KillJob& k) {
  if (k.reason() == "signal") return signal_job(k);
  if (k.reason() == "suspend" || k.reason() == "resume") return suspend_job(k.job_id(), k.reason() == "suspend");
  if (k.reason() == "notify") return notify_job(k);
  if (held_.count(k.job_id())) {
    // The job's steps get SIGTERM from their step manager (this node's, for an allocation of
    // srun or salloc): the share goes once their tasks here are over, or after the kill
    // wait (and a second).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds((k.grace() > 0 ? k.grace() : kill_wait_) + 1);
    held_.at(k.job_id()).ending = true;
    if (steps_) steps_->terminate_job(k.job_id(), parse_kill_reason(k.reason()) == KillReason::kTimeout);  // srun's, salloc's
    return release_after_steps(k.job_id(), held_.at(k.job_id()).job.restart_count, "killed, reason " + k.reason(), deadline);
  }
  auto it = running_.find(k.job_id());
  if (it == running_.end()) return;
  auto reason = parse_kill_reason(k.reason());
  if (!reason)
    log::warn("job " + std::to_string(k.job_id()) + ": kill with unknown reason '" + k.reason() + "'; killed as a cancel");
  KillReason why = reason.value_or(KillReason::kCancel);
  if (why == KillReason::kTimeout) it->second.timed_out = true;
  else it->second.cancelled = true;
  if (it->second.pid > 0 && (why == KillReason::kCancel || why == KillReason::kTimeout || why == KillReason::kPreempt))
    cancelled_line(it->second, why == KillReason::kTimeout   ? " DUE TO TIME LIMIT"
                               : why == KillReason::kPreempt ? " DUE TO PREEMPTION"
                                                             : "");
  terminate(it->second, why == KillReason::kUnknown ? 0 : k.grace() > 0 ? k.grace() : kill_wait_);
}

// SIGTERM to the whole process group, then SIGKILL after the grace period.
// A cancelled or timed-out job whose script is gone while its steps still run (they got
// SIGTERM with it): its end waits for them and their sruns, at most the kill wait and 5 s, as
// Slurm's job stays COMPLETING until its steps are done. True when the end is deferred.
bool Agent::wait_for_steps(uint64_t id, int status, const struct rusage* ru) {
  RunningJob& rj = running_.at(id);
  if (rj.steps_waited || !rj.steps_terminated || !steps_ || !steps_->has_steps(id)) return false;
  rj.steps_waited = true;
  // The script is gone: nothing of its may be signalled or timed out any more.
  for (auto* timer : {&rj.limit_timer, &rj.signal_timer, &rj.kill_timer})
    if (*timer) (*timer)->cancel();
  std::optional<struct rusage> kept;
  if (ru) kept = *ru;
  finish_after_steps(id, rj.job.restart_count, status, kept,
                     std::chrono::steady_clock::now() + std::chrono::seconds(kill_wait_ + 5));
  return true;
}

void Agent::finish_after_steps(uint64_t id, int32_t run, int status, std::optional<struct rusage> ru,
                               std::chrono::steady_clock::time_point deadline) {
  auto it = running_.find(id);
  if (it == running_.end() || it->second.job.restart_count != run) return;  // ended, or another run now
  if (!steps_ || !steps_->has_steps(id) || std::chrono::steady_clock::now() >= deadline)
    return finish(id, status, ru ? &*ru : nullptr);
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(50));
  timer->async_wait([this, id, run, status, ru, deadline, timer](const asio::error_code& ec) {
    if (!ec) finish_after_steps(id, run, status, ru, deadline);
  });
}

void Agent::release_after_steps(uint64_t id, int32_t run, const std::string& why,
                                std::chrono::steady_clock::time_point deadline) {
  auto it = held_.find(id);
  if (it == held_.end() || it->second.job.restart_count != run) return;  // released, or another run now
  bool busy = steps_ && (steps_->hosts_tasks(id) || steps_->has_steps(id));
  if (!busy || std::chrono::steady_clock::now() >= deadline) return release_held(id, why);
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(50));
  timer->async_wait([this, id, run, why, deadline, timer](const asio::error_code& ec) {
    if (!ec) release_after_steps(id, run, why, deadline);
  });
}

// slurmstepd's line in the job's stderr: "*** JOB 12 ON n1 CANCELLED AT <time> [DUE TO TIME LIMIT] ***".
void Agent::cancelled_line(RunningJob& rj, const std::string& why) {
  if (rj.cancel_noted) return;  // once: the controller's kill may follow the agent's own time limit
  rj.cancel_noted = true;
  std::string line = stepd_error_prefix(opts_.name) +
                     cancelled_banner("JOB " + std::to_string(rj.job.id.value), opts_.name, why) + "\n";
  (void)append_job_line(batch_error_path(rj.job, opts_.name), rj.job.spec.uid, line);
}

void Agent::terminate(RunningJob& rj, int64_t grace) {
  pid_t pgid = rj.pid;
  if (pgid <= 0) return;  // still in its prolog: it ends as cancelled when that finishes
  if (rj.suspended && steps_) steps_->signal_job(rj.job.id.value, SIGCONT);  // stopped tasks take SIGTERM only so
  rj.suspended = false;
  if (grace > 0 && steps_) {  // its steps get SIGTERM too, SIGKILL after the job's kill wait
    steps_->terminate_job(rj.job.id.value, rj.timed_out);
    rj.steps_terminated = true;
  }
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
    struct rusage ru {};
    while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0)
      if (!helpers_.reaped(pid, status) && !(steps_ && steps_->reaped(pid, status))) reap(pid, status, ru);
    wait_children();
  });
}

void Agent::reap(pid_t pid, int status, const struct rusage& ru) {
  auto p = pids_.find(pid);
  if (p == pids_.end()) return;
  uint64_t id = p->second;
  pids_.erase(p);
  // A shim killed (not exited) may have left its script's child, not yet exec'd, on the area.
  if (auto it = running_.find(id); it != running_.end() && WIFEXITED(status)) it->second.shim_area.free_after_reap();
  finish(id, status, &ru);
}

void Agent::finish(uint64_t id, int status, const struct rusage* ru) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  RunningJob& rj = it->second;
  if (wait_for_steps(id, status, ru)) return;
  int64_t step_ooms = steps_ ? steps_->take_oom_kills(id) : 0;  // v1 counts a step's kills in its own group
  if (steps_) steps_->job_ended(id);
  std::string recorded(trim(read_small_file(exit_file(opts_.spool_dir, id))));
  if (::access(fenced_file(opts_.spool_dir, id).c_str(), F_OK) == 0) rj.fenced = true;  // its shim fenced it
  if (auto v = parse_int(recorded, 0, INT32_MAX)) status = static_cast<int>(*v);  // the script's own status
  // Nothing of the job outlives its batch script: its process group, and with a cgroup
  // every process in it, daemonized ones included.
  ::kill(-rj.pid, SIGKILL);
  bool emptied = !rj.cgroup.active() || rj.cgroup.kill_all();
  if (!emptied) log::warn("job " + std::to_string(id) + ": processes survived SIGKILL in " + rj.cgroup.dirs().front());
  if (!rj.cgroup.active()) {
    // A zombie still holds its environment, so the reaping below comes after the scan.
    if (int left = kill_job_processes(id, rj.job.spec.uid); left > 0)
      log::info("job " + std::to_string(id) + ": killed " + std::to_string(left) + " process(es) that left its process group");
  }
  CgroupUsage used = rj.cgroup.usage();
  used.oom_kills = std::max(used.oom_kills, step_ooms);
  cgroups_.recycle(rj.cgroup, emptied, used.oom_kills);
  JobEnded end{JobId{id}, net::wall_now()};
  if (used.peak_mem_bytes >= 0) end.peak_mem_bytes = used.peak_mem_bytes;
  else if (ru && !rj.shim_shared) end.peak_mem_bytes = int64_t{ru->ru_maxrss} * 1024;  // else the agent's
  if (used.cpu_time_usec >= 0) end.cpu_time_usec = used.cpu_time_usec;
  else if (ru)
    end.cpu_time_usec = (int64_t{ru->ru_utime.tv_sec} + ru->ru_stime.tv_sec) * 1000000 + ru->ru_utime.tv_usec +
                        ru->ru_stime.tv_usec;
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end.exit_signal = WTERMSIG(status);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  bool oom = used.oom_kills > 0 && !rj.timed_out && !rj.cancelled;
  end.state = rj.fenced      ? JobState::kNodeFail
              : rj.timed_out ? JobState::kTimeout
              : rj.cancelled ? JobState::kCancelled
              : oom          ? JobState::kOutOfMemory
              : ok           ? JobState::kCompleted
                             : JobState::kFailed;
  if (rj.fenced) {
    end.reason = JobReason::kNodeFenced;
  } else if (oom) {
    end.reason = JobReason::kOutOfMemory;
    log::info("job " + std::to_string(id) + ": " + std::to_string(used.oom_kills) + " OOM kill(s) in its cgroup");
  } else if (rj.timed_out) {
    end.reason = JobReason::kTimeLimit;  // as Slurm: TIMEOUT, reason TimeLimit
  } else if (!ok && !rj.cancelled) {
    end.reason = WIFSIGNALED(status) ? JobReason::kRaisedSignal : JobReason::kNonZeroExitCode;
  }
  pb::JobEnded e = net::to_pb(end);
  e.set_restart_count(rj.job.restart_count);
  Job ended_job = std::move(rj.job);
  running_.erase(it);
  report(e);  // kept in the spool first: a restart now still reports it
  clear_run(opts_.spool_dir, id);
  run_epilog(ended_job);
  if (auto next = deferred_.find(id); next != deferred_.end()) {
    pb::LaunchJob launch = std::move(next->second);
    deferred_.erase(next);
    on_launch(launch);
  }
}

// The controller has the end: it is forgotten, and so is the job's spool unless a newer run
// of the job (requeued here) uses it.
void Agent::end_acked(std::map<uint64_t, pb::JobEnded>::iterator it) {
  uint64_t id = it->first;
  unacked_.erase(it);
  std::error_code ec;
  if (running_.count(id)) std::filesystem::remove(ended_file(opts_.spool_dir, id), ec);
  else cleanup_spool(opts_.spool_dir, id);
}

// Keeps the end (in memory and in the job's spool) until the controller acks it, and sends it.
void Agent::report(const pb::JobEnded& ended) {
  unacked_[ended.job_id()] = ended;
  std::error_code ec;
  std::filesystem::create_directories(job_dir(opts_.spool_dir, ended.job_id()), ec);
  if (Status s = replace_spool_file(ended_file(opts_.spool_dir, ended.job_id()), ended.SerializeAsString(), 0600); !s)
    log::warn("job " + std::to_string(ended.job_id()) + ": its end is not kept on disk (" + s.message() + "); an agent restart before the controller acks it loses it");
  if (!conn_ || !conn_->is_open()) return;  // re-sent with the next registration
  pb::Envelope env;
  *env.mutable_job_ended() = ended;
  conn_->send(env);
}

}  // namespace hq::cmd
