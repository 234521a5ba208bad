// The controller's domain glue: owns ClusterState, the journal and the scheduler;
// turns requests into events (apply + journal), and runs side effects (replies,
// launches, kills) only after the events they depend on are durable.
// Everything here runs on the controller's single event-loop thread.
#pragma once
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "core/acct_policy.hpp"
#include "core/array_rows.hpp"
#include "core/cluster_state.hpp"
#include "core/metrics.hpp"
#include "core/sluid.hpp"
#include "core/job_update.hpp"
#include "core/replay_guard.hpp"
#include "net/token.hpp"
#include "core/pass_pacing.hpp"
#include "core/scheduler.hpp"
#include "hq.pb.h"
#include "net/http_server.hpp"
#include "net/peer.hpp"
#include "cmd/controller/accounting.hpp"
#include "cmd/controller/listing_cache.hpp"
#include "cmd/controller/off_loop.hpp"
#include "cmd/keys.hpp"
#include "store/event_log.hpp"

namespace hq {
struct JobFilter;  // core/job_filter.hpp
namespace cmd {
struct RestMeta;  // cmd/rest/v0043.hpp
struct RestDiag;
}  // namespace cmd
}

namespace hq::cmd {

// An idempotency key is empty or 1-64 printable ASCII characters.
Status check_request_key(const std::string& key);

class Controller {
 public:
  using ConnPtr = std::shared_ptr<net::Peer>;

  using Clock = std::function<Time()>;
  // `secret_path`: the keyring file, reloaded when it changes (key rotation). `clock`: the
  // wall clock in seconds (empty: the real one; tests move their own).
  Controller(asio::io_context& io, ClusterConfig config, std::unique_ptr<store::EventLog> journal,
             std::string secret_path, Clock clock = {});
  ~Controller();
  // Checks a Hello's token for `role` ("client" needs a user token, "node" a node token
  // for `name`); each token opens one connection only.
  Result<net::Identity> authenticate(const pb::Hello& hello);
  const net::Keyring& keyring() const { return keys_.keys(); }
  Status load_keys() { return keys_.load(); }
  // Rebuilds state from the latest snapshot plus the journal after it.
  Status recover();
  void start();
  void shutdown();
  // The periodic work: liveness (nodes that fell silent go DOWN), time-limit backstop,
  // purge, scheduling. Runs every second from start(); a call runs it now and re-arms.
  void tick();
  const ClusterConfig& config() const { return config_; }

  // Client requests. `reply` runs once the outcome is durable.
  void submit(const pb::SubmitRequest& req, const net::Identity& who, std::function<void(Result<pb::SubmitReply>)> reply);
  pb::QueueReply queue(const pb::QueueRequest& req, const net::Identity& who) const;
  // The same into `out` (the server's reply, on an arena: a long listing allocates nothing
  // one by one).
  void queue(const pb::QueueRequest& req, const net::Identity& who, pb::QueueReply& out) const;
  // A brief listing without priority factors (squeue's default): the serialized QueueReply,
  // written straight from the jobs (net/brief_wire), the same records as queue() gives
  // (a page of more than 4 MiB may break at another job: each entry's tag counts here),
  // appended to `out`.
  void queue_brief_wire(const pb::QueueRequest& req, const net::Identity& who, std::string& out) const;
  // A brief listing rendered here (QueueRequest.render, cmd/controller/listing): the
  // QueueReply, its text in `listing`, appended to `out`; returns where it starts there.
  // nullopt, `out` as it was, where it cannot be (columns or keys not brief, more than a
  // page, an array's pending tasks to group): queue_brief_wire's records then.
  // The same listing asked for again while nothing it shows has changed is sent as it was
  // kept (cmd/controller/listing_cache).
  std::optional<size_t> queue_listing(const pb::QueueRequest& req, const net::Identity& who, std::string& out) const;
  // The listing queue_listing keeps for `req` and `who`, where one is kept and good now, as
  // its file (a sealed memfd, the cache's own: the caller passes it on, never closes it)
  // and the QueueReply that goes with it (listing_file_bytes, now, unknown ids).
  struct ListingFile {
    pb::QueueReply reply;
    int fd = -1;
  };
  std::optional<ListingFile> kept_listing_file(const pb::QueueRequest& req, const net::Identity& who) const;
  // Array tasks grouped listings have read so far (add_stretch_rows): a listing that finds
  // its arrays as they were reads none.
  size_t array_tasks_read() const { return array_listings_.tasks_read(); }
  // srun/salloc outside a job: an allocation (cmd/controller/allocations.cpp). `reply` runs
  // up to twice: once the job is durable and still pending after a scheduling pass
  // (granted false), and once it has started (granted true) or was revoked (an error
  // text); a job that starts at once gets only the second.
  void allocate(const pb::AllocateRequest& req, const net::Identity& who,
                std::function<void(Result<pb::AllocateReply>)> reply);
  // srun/salloc ends its allocation: COMPLETED, or FAILED with the exit code; every node
  // lets go of its share once that is durable.
  // srun --jobid from outside the job: the job's stepmgr (its first node's step address).
  Result<pb::AllocateReply> stepmgr_of(const pb::StepMgrQuery& req, const net::Identity& who) const;
  // srun/salloc outside a job still holds its allocation (InactiveLimit): noted, and
  // answered with the job's state and how often to say so again.
  Result<pb::AllocationAliveReply> allocation_alive(const pb::AllocationAlive& req, const net::Identity& who);
  void complete(const pb::JobCompleteRequest& req, const net::Identity& who,
                std::function<void(Result<pb::JobCompleteReply>)> reply);
  // `reply` runs once the cancellations are durable.
  void cancel(const pb::CancelRequest& req, const net::Identity& who, std::function<void(Result<pb::CancelReply>)> reply);
  pb::NodesReply nodes() const;
  // scontrol show config: the settings, by Slurm's names where Slurm has them.
  void add_config(pb::NodesReply& out) const;
  // scontrol show topology [NAME] (core/topology): topology NAME's lines, the default's when
  // no topology has that name.
  void add_topology(const std::string& name, pb::NodesReply& out) const;
  // Job mail (controller/mail.cpp): what a change just applied sends, and sending it.
  struct Mail {
    std::string to, subject;
  };
  std::vector<Mail> mails_after(const Event& event) const;
  void send_mails(const std::vector<Mail>& mails) const;
  // hold, release, requeue...; `reply` runs once the changes are durable.
  void job_control(const pb::JobControlRequest& req, const net::Identity& who,
                   std::function<void(Result<pb::JobControlReply>)> reply);
  // scontrol update JobId=...; `reply` runs once the changes are durable.
  void update_jobs(const pb::JobUpdateRequest& req, const net::Identity& who,
                   std::function<void(Result<pb::JobUpdateReply>)> reply);
  pb::ExplainReply explain(const pb::ExplainRequest& req, const net::Identity& who) const;
  // drain / resume / delete, for root and operators; `reply` runs once it is durable.
  // scontrol create|update|delete reservation (cmd/controller/reservations.cpp).
  void reservation_request(const pb::ReservationRequest& req, const net::Identity& who,
                           std::function<void(pb::NodeControlReply)> reply);
  // The reservations, and which nodes they hold now, for scontrol show reservation and sinfo.
  void add_reservations(pb::NodesReply& out) const;
  void update_partition(const pb::PartitionUpdateRequest& req, const net::Identity& who,
                        std::function<void(pb::NodeControlReply)> reply);
  void node_control(const pb::NodeControlRequest& req, const net::Identity& who,
                    std::function<void(pb::NodeControlReply)> reply);
  // scontrol reconfigure (NodeControlRequest "reconfigure"; cmd/controller/reconfigure.cpp):
  // the config file read again through `source`, applied live when only what may change
  // live changed. Without a source (tests, benchmarks) it is refused.
  void set_config_source(std::function<Result<ClusterConfig>()> source) { config_source_ = std::move(source); }
  pb::NodeControlReply reconfigure(const net::Identity& who);

  // HTTP (cmd/controller/http_api.cpp, over net/http_server): probes, /metrics. `respond`
  // runs once (now, or once what the request changes is durable).
  void http(const net::HttpRequest& req, net::HttpRespond respond);
  // The caller a request's token (X-SLURM-USER-TOKEN or Bearer) names, into `who`; else the
  // answer to send: 401 without a valid hq token, 403 when X-SLURM-USER-NAME names another.
  std::optional<net::HttpResponse> http_caller(const net::HttpRequest& req, net::Identity& who) const;
  // slurmrestd's v0.0.43 routes (cmd/controller/rest_api.cpp) and hq's /hq/v1 (hq_api.cpp),
  // for an authenticated caller; `respond` runs once.
  void rest(const net::HttpRequest& req, const net::Identity& who, net::HttpRespond respond);
  void hq_api(const net::HttpRequest& req, const net::Identity& who, net::HttpRespond respond);
  // hq token: a token for `who` to present over HTTP, for the lifespan asked (1 s to 1 day).
  Result<pb::TokenReply> http_token(const pb::TokenRequest& req, const net::Identity& who) const;
  // Where the web dashboard is ("https://HOST:PORT/ui/"), for hq token's replies.
  void set_dashboard_url(std::string url) { dashboard_url_ = std::move(url); }
  // A request served (RPC by message type, HTTP by route) and how long it took here.
  void count_request(const std::string& type, double seconds);

  // Node agents.
  // The cluster CA for a node that has only the secret (configless join), vouched for
  // by a MAC over its nonce; an error when this controller has no CA (plaintext).
  Result<pb::CaReply> ca_for(const pb::CaRequest& req) const;
  // An agent's registration (the first message of its session, `seq`): records what it
  // changes of the node and, once that is durable, answers with a RegisterAck; or an Error
  // and false when refused. Only after the ack does the agent get what reconciliation sends
  // (kills, acks of the ends it buffered): its session is a state machine that wants the
  // ack first (cmd/agent/agent_link.hpp).
  bool agent_register(const ConnPtr& conn, uint64_t seq, const pb::RegisterNode& reg);
  void agent_heartbeat(const std::string& node, const pb::Heartbeat& hb);
  void agent_job_ended(const std::string& node, const ConnPtr& conn, const pb::JobEnded& msg);
  void agent_disconnected(const std::string& node, const ConnPtr& conn);
  // A failed health check, prolog or epilog drains the node with its output as the
  // reason; a passing health check lifts a drain that a health check set.
  void agent_health(const std::string& node, const pb::NodeHealth& health);
  // Job steps as their managing agents report them (steps.cpp): soft state, not journaled;
  // a registering agent's full report replaces what it had said before. Ended steps are
  // acknowledged (StepReportAck on `conn`) once their accounting records are journaled.
  void agent_steps(const std::string& node, const ConnPtr& conn, const pb::StepReport& report);
  void acknowledge_when_durable(const ConnPtr& conn, pb::Envelope ack,
                                const std::vector<std::pair<const Job*, const pb::StepRecord*>>& ended);
  // `done` (may be empty) once the record is durable; now when no accounting is kept.
  void record_step_end(const Job& job, const pb::StepRecord& r, std::function<void(const Status&)> done);
  pb::StepQueryReply steps(const pb::StepQueryRequest& req) const;
  // The port the server listens on (registered with the accounting store), set before start().
  void set_bound_port(uint16_t port) { bound_port_ = port; }
  uint16_t bound_port() const { return bound_port_; }
  // sacctmgr: one command on the accounting model (cmd/controller/acct_query.cpp).
  void acct_mgr(const pb::AcctMgrRequest& req, const net::Identity& who,
                std::function<void(Result<pb::AcctMgrReply>)> reply);
  // sacct: the accounting store's records (cmd/controller/acct_query.cpp).
  void acct_query(const pb::AcctQueryRequest& req, const net::Identity& who,
                  std::function<void(Result<pb::AcctQueryReply>)> reply);
  // Runs `fn` once fair share is current: at once, or after the refresh it starts (fair
  // share is not worked out while nothing uses it; sshare and assoc_mgr wait for it).
  void with_shares(std::function<void()> fn);
  // sshare: the associations with shares, usage, fair share and their running jobs' TRES-minutes.
  pb::ShareReply shares() const;
  // sacctmgr list cluster --json: this cluster's node list and TRES, which the model lacks.
  void own_cluster_tres(pb::AcctListedRec& listed) const;
  // sreport: the report the words ask for, over the store's records (cmd/controller/report.cpp).
  void report(const pb::ReportRequest& req, std::function<void(Result<pb::ReportReply>)> reply);
  // scontrol show assoc_mgr: users, associations and QOS with what is used against their limits.
  pb::AssocMgrReply assoc_mgr(const pb::AssocMgrRequest& req) const;
  // How many times an event asked for a scheduling pass (since the start).
  uint64_t schedule_requests() const { return schedule_requests_; }

 private:
  struct JobStepViews {
    std::map<uint32_t, pb::StepRecord> running;
    std::deque<pb::StepRecord> ended;  // the most recent, oldest first
    std::string node;                  // the agent managing them
  };
  void forget_step_views();
  void add_job_steps(const Job& job, bool include_ended, pb::StepQueryReply& out) const;
  // Applies `event` and journals it; `after` runs once it is durable (at once for an
  // event already reflected, but only after every event queued before it is durable).
  void record(Event event, std::function<void(const Status&)> after = {});
  std::vector<std::string> acct_records(const Event& event) const;
  std::optional<std::string> run_before_requeue(const Event& event) const;
  std::vector<std::string> node_span_records(const Event& event) const;
  void open_accounting();  // cmd/controller/acct_query.cpp
  // Compiles the enforcement policy from the accounting model as it now is (at load and
  // after each sacctmgr change) for submissions and the scheduler.
  void refresh_acct_policy();
  // At submit: the job's account and QOS chosen and checked (a policy still loading: try
  // again), then `count` such jobs against the submit limits; Slurm's words when refused.
  Status enforce_at_submit(JobSpec& spec, const std::vector<std::string>& partitions) const;
  Status check_submit_limits(const Job& first, size_t count) const;
  // Works out fair share again from the store's records (at load, every priority_calc_period,
  // after a sacctmgr change); the policy follows once it is done.
  void refresh_fair_share();
  FairShareConfig fair_share_config() const;  // from [scheduler]
  // Fair share as last worked out (before the first time: the tree with no usage).
  std::shared_ptr<const FairShare> current_shares() const;
  // Adds every pending and running job to `usage`.
  void count_active(AcctUsage& usage) const;
  // Whether fair share is worth working out again every priority_calc_period: it weighs in
  // the priority, or sshare / assoc_mgr asked for it lately (else only at start and after
  // sacctmgr changes: reading the store's records is not free).
  bool fair_share_wanted() const;
  // Loads the accounting model (at start; again every few seconds after a failure).
  void load_acct_model();
  void when_durable(std::function<void(const Status&)> fn);
  void request_schedule();
  void arm_schedule();
  void run_schedule(PassKind kind);
  // LaunchJob to every node of the job (the first runs the script, the others hold their
  // share, alloc_only), or a requeue when one of them is not connected.
  void launch(JobId id);
  // The LaunchJob for the node at `index` of the job's alloc (the first one with `peers`).
  // `tree`: the switch tree, when the caller has built it (one build for all of a job's nodes).
  pb::Envelope launch_message(const Job& job, size_t index, const SwitchTree* tree = nullptr) const;
  // The nodes other than the first of job `id` while it is RUNNING (captured before an
  // event takes it out of RUNNING); empty for a single-node job or none.
  std::vector<std::string> nodes_to_release(JobId id) const;
  // KillJob (reason unknown) to `nodes`, the other nodes of job `id` that held its share:
  // once the job's end or requeue is durable, they let go of it.
  void release_other_nodes(JobId id, const std::vector<std::string>& nodes);
  // KillJob to every node of the job; `grace` seconds from SIGTERM to SIGKILL (0: the agent's kill_wait).
  void send_kill(const Job& job, KillReason reason, Duration grace = 0);
  // Records `event` (a cancel or stop of job `id`), then kills the job once that is durable
  // if it still runs: the intent is on disk before its effect leaves the process.
  void record_then_kill(Event event, JobId id, KillReason reason, Duration grace = 0);
  // The kill a job being cancelled or stopped needs, again (its agent re-registered).
  void resend_stop(const Job& job);
  void check_nodes();
  void disconnect_deleted(const std::string& node);
  void check_time_limits();
  // The jobs a listing shows `who` (the request's filters, named ids looked up, paging from
  // after_id), each offered to `add(job, mine)` until it returns false (the page is full);
  // named ids that exist nowhere go to `unknown`. Used by queue() and queue_brief_wire().
  template <typename Add>
  void for_listed_jobs(const pb::QueueRequest& req, const net::Identity& who, Add&& add,
                       std::vector<uint64_t>& unknown) const;
  // A grouped listing's rows (squeue without -r), its arrays' tasks read from the stretches
  // kept for them (array_listings_), so that it costs what it shows: each row to `add(job,
  // tasks)` until it returns false (then false). std::nullopt where the request cannot go
  // this way (named jobs, a later page, a filter on what a group's tasks may not show
  // alike: -p, -A, -q, -R, --wckey, -w, -L); for_listed_jobs with add_grouped_rows then.
  // queue_listing's listing made from the state: its text (a view into `out`), until when
  // it stays as it is, and the ids named that exist nowhere.
  struct MadeListing {
    std::string_view text;
    int64_t valid_until = 0;
    std::vector<uint64_t> unknown_ids;
  };
  std::optional<size_t> make_listing(const pb::QueueRequest& req, const net::Identity& who, std::string& out,
                                     MadeListing& made) const;
  std::string kept_listing_key(const pb::QueueRequest& req, const net::Identity& who) const;
  void check_kept_listing(const pb::QueueRequest& req, const net::Identity& who, std::string_view kept) const;
  template <typename Add>
  std::optional<bool> add_stretch_rows(const pb::QueueRequest& req, const net::Identity& who, Add&& add) const;
  // The running and ended jobs after `after_id`, in id order (ended ones only when `filter`
  // asks for an ended state, or for all): what -t without PENDING, and -w, look at.
  std::vector<JobId> ids_not_pending(const JobFilter& filter, uint64_t after_id) const;
  // Allocations of srun/salloc being preempted: nothing on a node reports their end, so it
  // is recorded here once their grace is over (at once after a controller restart).
  void end_preempted_allocations();
  // Allocations whose srun/salloc has been silent for InactiveLimit end TIMEOUT
  // (InactiveLimit), as Slurm's job_time_limit ends them.
  void end_inactive_allocations();
  // How often a holder says AllocationAlive: a third of InactiveLimit (how often Slurm pings
  // srun), else kHolderDefaultKeepalive so that a limit set later reaches it.
  int32_t holder_keepalive() const;
  static constexpr int32_t kHolderDefaultKeepalive = 30;  // seconds, while no InactiveLimit is set
  // Drops the entries of jobs that no longer run.
  void forget_unless_running(std::map<JobId, Time>& by_job) const;
  void end_reservations();  // those whose window is over, and the jobs still running in them
  // The jobs running on `node` end (or are requeued) because it failed; the kill goes to
  // their other nodes, and to this one too when it is `reachable` (an operator set it DOWN).
  void end_jobs_on_node(const std::string& node, JobState state, JobReason reason, bool reachable = false);
  // The events a registration makes (a node the config does not declare joins), or why
  // it is refused.
  Result<std::vector<Event>> registration(const pb::RegisterNode& reg) const;
  void log_registration(const ConnPtr& conn, const pb::RegisterNode& reg, bool joined) const;
  pb::RegisterAck register_ack() const;
  void reconcile_agent(const std::string& node, const ConnPtr& conn, const pb::RegisterNode& reg);
  void fill_agent_settings(pb::AgentSettings& out) const;
  void submit_job(const pb::SubmitRequest& req, const net::Identity& who,
                  std::function<void(Result<pb::SubmitReply>)> reply);
  // The allocation's answers: after a pass (still pending), at its launch (granted), or
  // when it ended before starting (revoked).
  pb::AllocateReply allocation_reply(const Job& job) const;
  void allocation_started(JobId id);
  void allocations_after_pass();
  void allocations_revoked();
  Result<Job> admit(const JobSpec& spec) const;
  Result<std::vector<Job>> expand_array(Job job) const;
  pb::SubmitReply test_only(const Job& job) const;
  // What submitting `job` answered (a retried submission gets it again).
  pb::SubmitReply submit_reply(const Job& job) const;
  // "123" (every task of an array 123) or "123_4".
  std::vector<JobId> resolve(const std::string& text) const;
  std::string control_one(const std::string& action, Job& job, bool admin);
  std::string requeue_one(const std::string& action, Job& job);
  static std::string control_denied(const std::string& action);
  // sbatch --uid/--gid: `spec`'s identity from the request when root asks (jobs.cpp).
  Status run_as(const pb::SubmitRequest& req, const net::Identity& who, JobSpec& spec) const;
  // scontrol suspend|resume|notify (cmd/controller/suspend.cpp).
  void suspend_control(const pb::JobControlRequest& req, const net::Identity& who,
                       std::function<void(Result<pb::JobControlReply>)> reply);
  std::string suspend_one(Job& job, bool suspend);
  std::string notify_one(const Job& job, const std::string& message);
  // A job's suspension as it now stands to its first node (also when the agent registers).
  void send_suspension(JobId id);
  // What `job` becomes under an update, admitted again when pending (cmd/controller/job_update.cpp).
  Result<Job> updated_job(const Job& job, const JobUpdate& u, bool admin) const;
  // A running job's time limit to the node that runs its script.
  void send_time_limit(JobId id);
  // `env` to the agent of the job's first node (its batch script, its step manager); false
  // when that agent is not connected.
  bool send_to_first_node(const Job& job, const pb::Envelope& env);
  // Owners act on their jobs, admins on all; a refusal is logged. `action`: "cancel", "hold", ...
  bool may_act(const Job& job, const net::Identity& who, bool admin, const std::string& action) const;
  void apply_plan(Plan plan);
  void preempt(const Preemption& p);
  void cancel_one(Job& job, const std::string& key, uint32_t uid, pb::CancelReply& out);
  void signal_one(const Job& job, int32_t sig, int32_t scope, pb::CancelReply& out);
  // Root or a configured operator (one /etc/passwd read; call once per request).
  bool is_admin(const net::Identity& who) const;
  // REST helpers (rest_api.cpp).
  RestMeta rest_meta(const net::HttpRequest& req, const net::Identity& who) const;
  RestDiag rest_diag() const;
  void rest_jobs(const net::HttpRequest& req, const net::Identity& who, const std::string& one, net::HttpRespond respond);
  void rest_submit(const net::HttpRequest& req, const net::Identity& who, net::HttpRespond respond);
  void rest_cancel(const net::HttpRequest& req, const net::Identity& who, const std::string& target,
                   net::HttpRespond respond);
  void rest_node_update(const net::HttpRequest& req, const net::Identity& who, const std::string& node,
                        net::HttpRespond respond);
  void rest_job_update(const net::HttpRequest& req, const net::Identity& who, const std::string& target,
                       net::HttpRespond respond);
  void hq_output(const pb::Job& job, const std::string& stream, const net::Identity& who, net::HttpRespond respond) const;
  void run_node_steps(std::vector<pb::NodeControlRequest> steps, const net::Identity& who,
                      std::function<void(pb::NodeControlReply)> done);
  Time now() const;

  asio::io_context& io_;
  Clock clock_;
  SluidClock sluids_;  // SLUIDs handed out (core/sluid); restarts go on after the jobs held
  // A new job's SLUID, and a requeued job's next one, given before the event is applied.
  void stamp_sluid(Event& event);
  ClusterConfig config_;
  std::function<Result<ClusterConfig>()> config_source_;
  std::unique_ptr<store::EventLog> journal_;
  std::unique_ptr<AccountingLink> acct_;  // null: no accounting store open
  AcctEnforce enforce_;                   // [accounting] enforce
  std::shared_ptr<const AcctPolicy> acct_policy_;  // null: no accounting store, or the model not loaded yet
  std::shared_ptr<const FairShare> shares_;        // null: not worked out yet
  double next_fair_share_ = 0;                     // mono seconds: when refresh_fair_share() runs again
  bool fair_share_running_ = false, fair_share_again_ = false;
  std::vector<std::function<void()>> share_waiters_;  // with_shares()'s, until the refresh ends
  mutable double fair_share_asked_ = -1e18;        // mono seconds: the last sshare / assoc_mgr
  double model_retry_at_ = 0;                      // mono seconds: load the model again (0: no need)
  Scheduler scheduler_;
  ClusterState state_;
  mutable ArrayListings array_listings_;  // what grouped listings made of the arrays (add_stretch_rows)
  // squeue's listings kept while the queue stays as it was (HQ_CHECK_LISTINGS: every one
  // kept, and checked against a fresh one each time it is sent).
  bool check_listings_ = std::getenv("HQ_CHECK_LISTINGS") != nullptr;
  mutable ListingCache listings_{check_listings_ ? 0 : kLeastKeptListingBytes};
  std::set<std::string> planned_nodes_;  // in the last plan's reservations (sinfo's PLANNED)
  KeyringWatcher keys_;
  ReplayGuard replay_;
  std::map<std::string, ConnPtr> agents_;
  // Each connected agent's step listener (RegisterNode), for LaunchJob.peers; runtime only.
  std::map<std::string, pb::AgentAddress> step_addresses_;
  std::map<uint64_t, JobStepViews> step_views_;  // per job id
  asio::steady_timer tick_timer_;
  asio::steady_timer sched_timer_;
  asio::steady_timer ship_timer_;  // AccountingLink's delay before shipping
  bool schedule_posted_ = false;
  bool schedule_after_commit_ = false;  // a pass is wanted once the journal has caught up
  PassPacing pacing_;
  int64_t events_since_snapshot_ = 0;
  uint64_t schedule_requests_ = 0;
  uint64_t appended_ = 0, durable_ = 0;  // events handed to the journal, and those durable
  std::deque<std::pair<uint64_t, std::function<void(const Status&)>>> after_durable_;
  Time started_at_ = 0;
  SchedulerCounters sched_counters_;                 // /metrics: Slurm's sdiag counters
  std::string dashboard_url_;                        // "" without HTTP
  std::deque<PassRecord> recent_passes_;             // the last passes, newest last (/hq/v1/scheduler)
  std::map<std::string, RequestCount> requests_;     // /metrics: requests by type
  RequestCount journal_commits_;                     // /metrics: events made durable, time from append
  // The /metrics page (cmd/controller/http_api.cpp), made at most once a second: scrapers
  // in a crowd cost the loop one page a second.
  // The /metrics page, at most a second old, to `done` on the loop: a snapshot of the state
  // taken here, its text written on a worker thread (the loop and its passes go on), the
  // callers of the meantime answered with the same page.
  void metrics_page(std::function<void(const std::string&)> done);
  void metrics_built(std::string text);
  std::string metrics_cache_;
  double metrics_made_at_ = -1;                      // mono seconds
  bool metrics_building_ = false;
  std::vector<std::function<void(const std::string&)>> metrics_waiters_;
  OffLoop off_loop_{io_};                            // long replies written off the loop (metrics, REST listings)
  void count_event(const Event& event);              // /metrics' job counters
  void count_pass(bool full, int64_t micros, const Plan& plan);  // /metrics' scheduler counters
  // srun/salloc waiting for their allocation, per job (runtime only: a retry after a
  // restart asks again with its request key).
  struct AllocWaiter {
    std::function<void(Result<pb::AllocateReply>)> reply;
    bool told = false;  // the pending answer was sent
  };
  std::map<JobId, std::vector<AllocWaiter>> alloc_waiters_;
  std::map<JobId, Time> preempted_alloc_deadline_;  // when a preempted allocation's grace ends
  std::map<JobId, Time> holder_heard_;  // when each allocation's srun/salloc last said it is alive
  // No holder counts as silent before this (a reconfigure that changed InactiveLimit:
  // holders learn it at their next keepalive).
  Time holders_heard_floor_ = 0;
  uint16_t bound_port_ = 0;
};

}  // namespace hq::cmd
