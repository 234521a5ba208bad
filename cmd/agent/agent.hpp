// The node agent: dials the controller (retrying with capped exponential backoff and
// jitter), registers, heartbeats, launches jobs, enforces their time limits, reaps
// them, and reports each end until the controller acknowledges it (so ends survive a
// controller restart). Runs on one io_context thread.
#pragma once
#include <asio/io_context.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/signal_set.hpp>
#include <asio/steady_timer.hpp>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <sys/resource.h>

#include "cmd/agent/cgroup.hpp"
#include "cmd/agent/helpers.hpp"
#include "cmd/agent/launcher.hpp"
#include "cmd/auth_service.hpp"
#include "cmd/agent/probe.hpp"
#include "cmd/agent/peer_net.hpp"
#include "cmd/agent/step_manager.hpp"
#include "cmd/keys.hpp"
#include "core/job.hpp"
#include "core/job_env.hpp"
#include "cmd/agent/step_ends.hpp"
#include "hq.pb.h"
#include "net/client.hpp"
#include "net/connection.hpp"
#include "net/http_server.hpp"
#include "net/tls.hpp"
#include "net/token.hpp"

namespace hq::cmd {

struct AgentOptions {
  net::Endpoint controller;
  net::Transport transport;
  std::string secret_file;     // the cluster keyring: node tokens are minted locally
  std::string name;
  std::string spool_dir;
  std::string cgroup_mode = "auto";        // auto | v1 | v2 | none
  std::string cgroup_root = "/sys/fs/cgroup";
  int64_t job_pids_max = 0;                // per-job process limit in its cgroup; 0: none
  std::vector<std::string> features;       // for a node the config does not declare
  std::string block, switch_name;          // topology labels (partitions may take nodes by them)
  // Where clients on this host find the cluster: auth.sock (a token service), controller
  // (its address) and ca.pem. "" = none.
  std::string run_dir;
  // Operator programs (Slurm's HealthCheckProgram, Prolog, Epilog); "" = none.
  std::string health_check, prolog, epilog;
  int64_t health_interval = 60;            // seconds between health checks
  int64_t helper_timeout = 60;             // seconds before a program is killed (failed)
  bool kill_jobs_on_exit = false;          // else a stopping agent leaves jobs to its successor
  int64_t fence_timeout = 0;               // from the controller: kill jobs after this long without word; 0: never
  // Options given here (flag or environment): they win over what the controller serves.
  std::set<std::string> set_locally;
  uint16_t step_port = 0;                  // peer listener for steps across nodes (0: any free port)
  // /metrics (cmd/agent/agent_metrics.cpp): -1 off, 0 any free port (spool/metrics.addr).
  // Plain HTTP on 127.0.0.1, else HTTPS with the step listener's certificate.
  int32_t metrics_port = -1;
  std::string metrics_host = "127.0.0.1";
  bool metrics_public = false;             // no token needed (else one from hq token)
};

class Agent {
 public:
  Agent(asio::io_context& io, AgentOptions opts, HostInfo host, Cgroups cgroups);
  void start();
  // Stops dialing. Running jobs are left to the next agent, which re-adopts them
  // (or, with kill_jobs_on_exit, they are killed).
  void stop();

 private:
  struct RunningJob {
    pid_t pid = 0;               // the script: leads its process group
    pid_t shim = 0;              // its shim (our child, unless adopted from an earlier agent)
    ShimArea shim_area;          // the memory our shim runs on, freed once it is reaped
    bool shim_shared = false;    // our shim shares our memory: its rusage's peak is ours
    bool adopted = false;
    std::unique_ptr<asio::posix::stream_descriptor> exit_watch;  // adopted: the shim's pidfd
    std::unique_ptr<asio::steady_timer> poll_timer;              // adopted, no pidfd: polling
    Job job;
    bool cancelled = false, timed_out = false;
    std::unique_ptr<asio::steady_timer> limit_timer, kill_timer, signal_timer;
    JobCgroup cgroup;
    bool gpus_renumbered = false;  // its cgroup hides other GPUs: it numbers its own from 0
    std::vector<int32_t> cpus;   // the CPUs it runs on
    bool in_prolog = false;      // pid 0: the prolog runs, the script has not started
    bool fenced = false;         // killed because the controller was out of reach (fence_timeout)
    bool steps_terminated = false;  // its steps got SIGTERM (a cancel or time limit with a grace)
    bool cancel_noted = false;      // its stderr has the "*** JOB ... CANCELLED AT ..." line
    bool steps_waited = false;   // its end waited (or had no need to wait) for its steps to end
    bool suspended = false;      // scontrol suspend: stopped (SIGSTOP), its limit timers off
    std::vector<pb::AgentAddress> peers;  // every node of the job, in alloc order (LaunchJob.peers)
    TopologyAddr topo;                    // this node's place in the switch tree (LaunchJob)
  };
  // A job whose script runs on another node (LaunchJob alloc_only): this node holds its
  // share (CPUs, cgroup) for the tasks of its steps. Not kept across agent restarts: the
  // controller sends the LaunchJob again when this agent registers without it.
  struct HeldJob {
    Job job;
    std::vector<int32_t> cpus;
    JobCgroup cgroup;
    bool gpus_renumbered = false;
    // The first node of an allocation of srun or salloc (no script anywhere): every node's
    // agent, for its steps; empty elsewhere.
    std::vector<pb::AgentAddress> peers;
    TopologyAddr topo;    // this node's place in the switch tree (LaunchJob)
    bool ending = false;  // killed: it goes once its steps' tasks here are over; no new steps
  };

  // The job's CPUs, cgroup and launch; an error when it cannot be confined as asked.
  Result<LaunchedJob> start_job(const Job& job, const pb::LaunchJob& l, RunningJob& rj);
  // This node's CPUs for `job`: its NodeAlloc share, those next to its GPUs first, not those
  // the jobs running or held here have.
  std::vector<int32_t> choose_job_cpus(const Job& job) const;
  CgroupLimits job_limits(const Job& job, const std::vector<int32_t>& cpus) const;
  std::function<std::vector<std::string>(const std::vector<int32_t>&, bool)> step_gpu_env(const Job& job,
                                                                                           bool renumbered) const;
  // `confined` (the job's group denies the node's other GPUs): the devices of the job's
  // GPUs here that a step with the given GPUs is denied too; null otherwise.
  std::function<std::vector<DeviceId>(const std::vector<int32_t>&)> step_gpu_deny(const Job& job, bool confined) const;
  // alloc_only: the job's share here, no prolog, no script.
  void hold(Job job, std::vector<pb::AgentAddress> peers, TopologyAddr topo);
  // This node's place in the switch tree, as the controller sent it with the job.
  static TopologyAddr topology_addr(const pb::LaunchJob& l) { return {l.topology_addr(), l.topology_addr_pattern()}; }
  // Lets go of a held job's share: its step tasks and every process in its cgroup die.
  // `forget`: the job is over here, so is its step count; not when the agent stops.
  void release_held(uint64_t id, const std::string& why, bool forget = true);
  std::string held_step_ids_file(uint64_t id) const;
  void arm_limits(uint64_t id);
  // How a job ended: its shim's exit file when there is one, else `status`; `ru` when reaped here.
  void finish(uint64_t id, int status, const struct rusage* ru);
  bool wait_for_steps(uint64_t id, int status, const struct rusage* ru);
  void cancelled_line(RunningJob& rj, const std::string& why);
  // A held job's share, once the tasks of its steps here are over or at `deadline`.
  void release_after_steps(uint64_t id, int32_t run, const std::string& why,
                           std::chrono::steady_clock::time_point deadline);
  // `run`: the job's restart count when the wait began; another run's job is left alone.
  void finish_after_steps(uint64_t id, int32_t run, int status, std::optional<struct rusage> ru,
                          std::chrono::steady_clock::time_point deadline);
  // Restart survival (adopt.cpp): what a launch leaves in the spool, and taking over the
  // jobs an earlier agent left running (or learning how they ended meanwhile).
  // The restart record of a job being launched: written before its script may start.
  Status write_record(uint64_t id, const pb::LaunchJob& l, const LaunchedJob& pids, const std::vector<int32_t>& cpus);
  void adopt_running();
  void start_step_manager();
  void listen_for_peers(const asio::ip::address& local);
  int32_t restore_end(uint64_t job_id);
  void adopt_run(uint64_t job_id, int32_t ended_run);
  void watch_adopted(uint64_t id);
  std::set<uint64_t> running_ids() const;
  void fail_launch(const Job& job, const std::string& why);
  void begin_job(Job job, const pb::LaunchJob& l, RunningJob started);
  // Operator programs (agent_helpers.cpp).
  std::vector<std::string> helper_env(const Job& job) const;
  void prolog_done(uint64_t id, const pb::LaunchJob& l, const HelperOutcome& outcome);
  void run_epilog(const Job& job);
  void schedule_health_check(int64_t delay_s);
  void send_health(bool ok, const std::string& source, const std::string& message);
  // /metrics (agent_metrics.cpp): the listener, a request, and the page.
  void start_metrics();
  void serve_metrics(const net::HttpRequest& req, net::HttpRespond respond);
  std::string metrics_page() const;
  std::vector<DeviceId> other_gpu_devices(const std::vector<int32_t>& mine) const;
  // The character devices of this node's GPUs `which` (indices; real devices only).
  std::vector<DeviceId> gpu_devices(const std::vector<int32_t>& which) const;

  asio::awaitable<void> connect_loop();
  asio::awaitable<Status> session(std::shared_ptr<net::Connection> conn);
  // The controller accepted the registration: settings, heartbeats, reports go to `conn`.
  void on_registered(const std::shared_ptr<net::Connection>& conn, const pb::RegisterAck& ack);
  // Configless join: asks the controller for the cluster CA over an unverified TLS
  // connection, checks the answer's MAC with the cluster secret, caches it in the spool.
  asio::awaitable<Status> fetch_ca();
  net::Identity node_identity() const;
  // Tells clients on this host where the cluster is (run_dir: controller, ca.pem).
  void publish_for_clients() const;
  // Configless: the controller's [agents] settings and programs, cached in <spool>/config.
  void apply_settings(const pb::RegisterAck& ack);
  asio::awaitable<void> heartbeat_loop(std::shared_ptr<net::Connection> conn, int64_t interval);
  void handle(const pb::Envelope& msg);
  // Every second: with fence_timeout set, jobs die once the controller was silent that long.
  void check_fence();
  void on_launch(const pb::LaunchJob& launch);
  void on_kill(const pb::KillJob& kill);
  void on_time_limit(const pb::JobTimeLimit& limit);
  void signal_job(const pb::KillJob& k);
  void suspend_job(uint64_t id, bool suspend);
  void notify_job(const pb::KillJob& k);
  void terminate(RunningJob& rj, int64_t grace);
  void arm_signal(uint64_t id);
  void wait_children();
  void reap(pid_t pid, int status, const struct rusage& ru);
  void report(const pb::JobEnded& ended);
  void end_acked(std::map<uint64_t, pb::JobEnded>::iterator it);
  pb::Envelope registration() const;
  std::unique_ptr<net::ByteStream> make_stream(asio::ip::tcp::socket socket);

  asio::io_context& io_;
  AgentOptions opts_;
  HostInfo host_;
  Cgroups cgroups_;
  std::unique_ptr<AuthService> auth_;  // the token service for clients on this host
  std::unique_ptr<StepManager> steps_;  // srun inside jobs whose batch script runs here
  std::unique_ptr<PeerNet> peers_;      // links to other nodes' agents for those steps
  HelperRunner helpers_;
  std::unique_ptr<asio::steady_timer> health_timer_;
  bool health_ok_ = true;               // the last health check, prolog or epilog passed
  int64_t health_at_ = 0;               // when it ran (0: none yet)
  std::unique_ptr<asio::ip::tcp::acceptor> metrics_acceptor_;
  std::shared_ptr<net::TlsContext> metrics_tls_;
  std::vector<int32_t> cpu_pool_;  // CPUs this agent may hand out (its own affinity)
  bool shims_may_share_ = false;   // jobs' shims may share our memory (start: not where fs.suid_dumpable is 1)
  std::shared_ptr<net::Connection> conn_;
  std::shared_ptr<net::TlsContext> tls_;
  KeyringWatcher keys_;
  std::map<uint64_t, RunningJob> running_;
  std::map<uint64_t, HeldJob> held_;  // alloc-only jobs: their script runs on another node
  std::map<uint64_t, pb::JobEnded> unacked_;
  UnackedStepEnds unacked_steps_;  // ended steps' records, until the controller has them
  std::map<uint64_t, pb::LaunchJob> deferred_;  // a new run of a job whose old run is being killed
  std::map<pid_t, uint64_t> pids_;
  asio::signal_set sigchld_;
  int64_t kill_wait_ = 30;
  int64_t heartbeat_interval_ = 10;  // the controller's; also the peer links' ping interval
  double last_word_ = 0;   // monotonic time of the controller's last message (0: none yet)
  std::unique_ptr<asio::steady_timer> fence_timer_;
  bool stopping_ = false;
};

int run_agent(const AgentOptions& opts, const HostInfo& host, const std::string& log_file);

}  // namespace hq::cmd
