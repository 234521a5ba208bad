// Job steps (srun inside a job), managed on the job's first node as Slurm's stepmgr does.
// srun connects to this agent's local step socket and sends StepCreate; the manager lays
// the step out in the job's allocation (core/step_layout), queues it while other steps hold
// its CPUs, starts its tasks here (NodeTasks) and, over peer links (PeerNet), on the job's
// other nodes, relays their output and ends to srun and srun's stdin and signals to them.
// srun gone means the step is killed. The kernel says who connects: only the job's user
// (or root) may start steps in it.
// The same manager runs the tasks another node's manager sends here (StepLaunch), as the
// user and in the cgroup of this node's own record of the job, and only for the job's
// first node; a link that closes takes its tasks with it (step_hosting.cpp; what both
// sides share is in step_parts.hpp).
// It also routes each step's all-gather (StepExchange, for the tasks' PMI servers): it
// gathers every node's blob here and sends the rounds back over the links.
// With --mpi=pmix every node of the step serves its ranks through the agent's PMIx server
// (StepPmix); a rank's MPI_Abort ends the step and srun exits with its status, and so does
// a rank that goes away without MPI_Finalize (srun's code is then the tasks').
// Step ids go on from where they were after an agent restart (StepIds).
// Runs on the agent's event-loop thread.
#pragma once
#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cmd/agent/cgroup.hpp"
#include "cmd/agent/step_ids.hpp"
#include "core/job.hpp"
#include "core/job_env.hpp"
#include "core/status.hpp"
#include "core/step_layout.hpp"
#include "net/connection.hpp"

namespace hq::cmd {

class NodeTasks;
class PeerNet;
class StepPmix;
struct TaskPlan;
struct StepNodePart;

class StepManager {
 public:
  using ConnPtr = std::shared_ptr<net::Connection>;
  // A job held here, as the manager needs it. `job` is the agent's own record: valid until
  // the agent's loop runs again, so it is looked up anew after every wait.
  struct JobView {
    const Job* job = nullptr;
    JobCgroup cgroup;                       // the job's group here: each step's is made in it
    std::vector<int32_t> cpus;              // the job's CPUs here (a step's are chosen among them)
    std::vector<pb::AgentAddress> peers;    // the first node: every node's agent, in allocation order
    std::string step_ids_file;              // keeps the job's step count across agent restarts ("": none)
    // Set when the job has GPUs: the GPU variables (CUDA_VISIBLE_DEVICES, ...) for a step's
    // GPUs on this node, which replace whatever srun's environment holds for its tasks here;
    // `step_confined`: the step's group hides the job's other GPUs (numbered among its own).
    std::function<std::vector<std::string>(const std::vector<int32_t>& gpus, bool step_confined)> gpu_env;
    // Set when the job's GPUs here are confined (its group denies the node's others): the
    // devices of the job's GPUs here that a step with GPUs `gpus` is denied in its own group.
    std::function<std::vector<DeviceId>(const std::vector<int32_t>& gpus)> gpu_deny;
    TopologyAddr topo;                      // this node's place in the switch tree (empty: none)
  };
  using FindJob = std::function<std::optional<JobView>(uint64_t job_id)>;
  using KillWait = std::function<int64_t()>;  // seconds between SIGTERM and SIGKILL
  // Where step starts and ends go (the controller's step views), fire and forget.
  using ReportStep = std::function<void(const pb::StepRecord&)>;
  // The jobs held here, for the node's own views (hq node list-jobs, list-pids).
  struct LocalJob {
    uint64_t job_id = 0;
    uint32_t uid = 0;
    std::string name;
    pid_t batch_pid = 0;  // 0: no script here
  };
  using ListJobs = std::function<std::vector<LocalJob>()>;

  StepManager(asio::io_context& io, std::string node, std::string socket_path, FindJob find_job, KillWait kill_wait);
  ~StepManager();
  Status start();
  void stop();
  // The links to other nodes' agents (none: steps stay on this node).
  void set_peers(PeerNet* peers) { peers_ = peers; }
  void set_views(ReportStep report, ListJobs list_jobs) {
    report_ = std::move(report);
    list_jobs_ = std::move(list_jobs);
  }
  // Every step managed here that runs now (the full report on registration).
  std::vector<pb::StepRecord> running_records() const;
  // From the agent's SIGCHLD loop: true if `pid` was a step's task.
  bool reaped(pid_t pid, int status);
  // The job is now held here (its LaunchJob came): steps waiting for it go on.
  void job_arrived(uint64_t job_id);
  // The job ended or left this node: its steps' tasks are killed, here and on its other nodes.
  void job_ended(uint64_t job_id);
  // The job is cancelled or out of time: each of its steps gets Slurm's line ("*** STEP J.S
  // ON NODE CANCELLED AT TIME [DUE TO TIME LIMIT] ***"), then SIGCONT and SIGTERM on every
  // node, SIGKILL after the kill wait.
  void terminate_job(uint64_t job_id, bool time_limit);
  // scancel -s: `sig` to every task of the job's running steps, on every node; they go on.
  void signal_job(uint64_t job_id, int sig);
  // Whether steps of the job managed here have not ended yet, or their sruns are still
  // connected (reading the last of their output).
  bool has_steps(uint64_t job_id) const;
  // Whether tasks of the job's steps managed elsewhere still run here.
  bool hosts_tasks(uint64_t job_id) const;
  // The OOM kills the job's steps reported so far (forgotten now): a job with any ends
  // OUT_OF_MEMORY, as when its own group counts them.
  int64_t take_oom_kills(uint64_t job_id);
  const std::string& socket_path() const { return path_; }
  // An srun that came over the peer listener (another host) as user `uid` (its token).
  void user_session(const ConnPtr& conn, uint32_t uid);
  // From PeerNet: a message on a peer link, and its end.
  void peer_message(const ConnPtr& link, const std::string& node, const pb::Envelope& msg);
  void peer_closed(const ConnPtr& link, const std::string& node);

 private:
  struct Step;
  struct Hosted;
  using StepKey = std::pair<uint64_t, uint32_t>;
  void accept_next();
  asio::awaitable<void> session(asio::local::stream_protocol::socket socket);
  asio::awaitable<void> serve(ConnPtr conn, uid_t uid);
  asio::awaitable<std::shared_ptr<Step>> create(const ConnPtr& conn, const pb::StepCreate& req, uid_t peer_uid);
  asio::awaitable<Result<StepLayout>> plan(const ConnPtr& conn, const pb::StepCreate& req);
  asio::awaitable<void> launch_remote(std::shared_ptr<Step> step, pb::AgentAddress peer, pb::StepLaunch launch);
  struct MpiPart {
    std::string type;     // "pmi2", "pmix" or "" (none)
    std::string mapping;  // PMI_process_mapping
    int32_t ntasks = 0;   // PMI_SIZE
  };
  MpiPart mpi_part(const pb::StepCreate& req, const StepLayout& layout, std::vector<std::string>& env) const;
  Status launch_here(const std::shared_ptr<Step>& step, const JobView& job, const pb::StepCreate& req,
                     const std::vector<std::string>& env, const std::vector<StepNode>& layout, size_t index,
                     const MpiPart& mpi);
  void abort_step(const std::shared_ptr<Step>& step, int code, const std::string& node);
  // `why`: "" or " DUE TO TIME LIMIT", as Slurm's line ends.
  pb::Envelope cancelled_line(const Step& step, const std::string& why = "") const;
  static pb::Envelope node_line(const Step& step, const std::string& node, const std::string& text);
  StepPmix& pmix();
  std::function<Status(std::vector<TaskPlan>&)> pmix_attach(StepKey key, std::vector<StepNode> layout, size_t index);
  using Send = std::function<void(const pb::Envelope&)>;  // NodeTasks::Send
  Send watch_ranks(StepKey key, Send send);
  void rank_failed(StepKey key, std::optional<int> status);
  bool lost_rank(StepKey key, const pb::TaskExited& e) const;
  void step_message(const std::shared_ptr<Step>& step, const pb::Envelope& msg);
  void watch_output(const std::shared_ptr<Step>& step);
  void pause_output(const std::shared_ptr<Step>& step, bool pause);
  void stdin_full(const std::shared_ptr<Step>& step, const std::string& node, bool full);
  void tasks_ended(const std::shared_ptr<Step>& step, const pb::TaskExited& e);
  void feed_stdin(const std::shared_ptr<Step>& step, const pb::TaskIO& io);
  void signal_step(const std::shared_ptr<Step>& step, int sig, bool terminate = false);
  // `only_node` set: to that node alone (if it is one of the step's others).
  void send_remotes(const std::shared_ptr<Step>& step, const pb::Envelope& msg,
                    const std::optional<std::string>& only_node = std::nullopt);
  void kill_hosted(Hosted& h);
  void terminate_step(const std::shared_ptr<Step>& step);
  void finish_step(const std::shared_ptr<Step>& step);
  void out_of_memory(const std::shared_ptr<Step>& step, const std::string& node, int32_t kills);
  void report(const pb::StepRecord& record) const {
    if (report_) report_(record);
  }
  // hq node list-jobs|list-steps|list-pids: what runs here, for `uid` (root: everything).
  pb::NodeLocalReply local_view(const std::string& what, uid_t uid) const;
  std::map<std::string, int32_t> busy_cpus(uint64_t job_id) const;
  std::map<std::string, int64_t> busy_mem(uint64_t job_id) const;
  using BusyGpus = std::map<std::string, std::set<int32_t>>;
  BusyGpus busy_gpus(uint64_t job_id) const;
  using Waiters = std::multimap<uint64_t, asio::steady_timer*>;  // per job: coroutines waiting for news of it
  asio::awaitable<bool> wait_on(Waiters& list, uint64_t job_id, std::chrono::steady_clock::duration timeout);
  void wake(Waiters& list, uint64_t job_id);
  asio::awaitable<std::optional<JobView>> await_job(uint64_t job_id, ConnPtr conn);
  asio::awaitable<void> host(ConnPtr link, std::string node, pb::StepLaunch launch);
  void hosted_message(const ConnPtr& link, const pb::Envelope& msg);
  void exchange_in(const std::shared_ptr<Step>& step, const std::string& from, const pb::StepExchangeIn& in);
  void broadcast_exchange(const std::shared_ptr<Step>& step, const pb::Envelope& out);
  void track(const std::shared_ptr<NodeTasks>& tasks);
  TaskPlan plan_task(const JobView& job, const std::vector<std::string>& argv, std::vector<std::string> env,
                     const std::string& cwd) const;
  void confine(StepNodePart& part, const JobView& job, int64_t mem_mib, const std::string& cpu_bind, int32_t cpus_per_task);

  asio::io_context& io_;
  std::string node_, path_;
  FindJob find_job_;
  KillWait kill_wait_;
  PeerNet* peers_ = nullptr;
  ReportStep report_;
  ListJobs list_jobs_;
  std::unique_ptr<StepPmix> pmix_;  // from the first --mpi=pmix step here
  std::map<uint64_t, std::map<int32_t, int32_t>> cpu_use_;  // per job: its steps here per CPU
  std::map<uint64_t, int64_t> oom_kills_;  // per job: OOM kills its steps' tasks reported (any node)
  std::map<uint64_t, int> sessions_;       // per job: srun connections with a step
  asio::local::stream_protocol::acceptor acceptor_;
  StepIds step_ids_;
  std::map<StepKey, std::shared_ptr<Step>> steps_;        // managed here, running
  std::map<StepKey, std::shared_ptr<Hosted>> hosted_;     // run here for another node's manager
  std::map<pid_t, std::shared_ptr<NodeTasks>> by_pid_;    // every task started here
  Waiters waiters_;   // steps waiting for CPUs
  Waiters arrivals_;  // requests waiting for a job's LaunchJob
};

}  // namespace hq::cmd
