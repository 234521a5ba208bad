#include "cmd/controller/controller.hpp"

#include <algorithm>
#include <csignal>
#include <unistd.h>
#include <asio/post.hpp>
#include "cmd/controller/recovery.hpp"
#include "cmd/users.hpp"
#include <cstdlib>

#include "core/block_usage.hpp"
#include "core/job_filter.hpp"
#include "core/hostlist.hpp"
#include "core/switch_tree.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"
#include "core/array_rows.hpp"
#include "cmd/controller/listing.hpp"
#include "net/brief_wire.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {
// A queue reply stops past this many bytes of jobs (frames are at most 16 MiB; one job
// over it still goes alone): 100,000 jobs come in pages of about 15,000.
constexpr size_t kQueuePageBytes = 4 << 20;
constexpr size_t kBriefBytesPerJob = 128;  // room reserved a job: a pending job's brief record takes less

// The job a JobEnded or JobRequeued is about; none for any other event.
JobId ending_or_requeued(const Event& event) {
  if (const auto* e = std::get_if<JobEnded>(&event)) return e->id;
  if (const auto* r = std::get_if<JobRequeued>(&event)) return r->id;
  return {};
}
}  // namespace

Controller::Controller(asio::io_context& io, ClusterConfig config, std::unique_ptr<store::EventLog> journal,
                       std::string secret_path, Clock clock)
    : io_(io), clock_(std::move(clock)), config_(std::move(config)), journal_(std::move(journal)), scheduler_(config_.scheduler),
      state_(make_state(config_)), keys_(std::move(secret_path)), tick_timer_(io), sched_timer_(io), ship_timer_(io) {}

Controller::~Controller() = default;

Time Controller::now() const { return clock_ ? clock_() : net::wall_now(); }

Result<net::Identity> Controller::authenticate(const pb::Hello& hello) {
  auto who = net::verify_token(keys_.keys(), hello.token(), now());
  if (!who) return who;
  bool node = hello.role() == "node";
  // A client logs in with a user's token only: an HTTP token (role "http", long-lived,
  // kept in files) opens no RPC session.
  if (node != (who->role == "node") || (node && who->node != hello.name()) || (!node && who->role != "user"))
    return denied("identity token is not valid for role '" + hello.role() + "'");
  if (!replay_.first_use(who->nonce, who->expires, now())) return denied("identity token was already used");
  return who;
}

bool Controller::is_admin(const net::Identity& who) const {
  if (who.uid == 0) return true;
  auto pw = passwd_by_uid(who.uid);
  return pw && std::find(config_.operators.begin(), config_.operators.end(), pw->name) != config_.operators.end();
}

Status Controller::recover() {
  auto loaded = journal_->load();
  if (!loaded) return loaded.status();
  auto replayed = replay_journal(std::move(loaded).value(), state_);
  if (!replayed) return replayed.status().with_context(state_db_path(config_.controller.state_dir));
  size_t running = 0;
  for (const auto& [id, job] : state_.jobs) {
    running += job.state == JobState::kRunning;
    sluids_.observe(job.sluid);
  }
  log::info("recovered " + std::to_string(state_.jobs.size()) + " jobs (" + std::to_string(state_.pending_jobs) +
            " pending, " + std::to_string(running) + " running) from snapshot + " + std::to_string(replayed->events) +
            " journal events; next job id " + std::to_string(state_.next_job_id));
  return Status::ok();
}

void Controller::start() {
  started_at_ = now();
  journal_->start([this](std::function<void()> fn) { asio::post(io_, std::move(fn)); });
  open_accounting();
  tick();
}

void Controller::shutdown() {
  tick_timer_.cancel();
  sched_timer_.cancel();
  ship_timer_.cancel();
  journal_->snapshot(net::encode_snapshot(state_), {});
  journal_->stop();
  if (acct_) acct_->stop();
}

void Controller::tick() {
  if (std::string msg = keys_.refresh(); !msg.empty()) log::info(msg);
  check_nodes();
  check_time_limits();
  end_preempted_allocations();
  end_inactive_allocations();
  if (!state_.reservations.empty()) end_reservations();
  purge_finished(state_, now() - config_.min_job_age);
  if (acct_) acct_->retry();  // a store that failed
  if (acct_ && acct_policy_ && fair_share_wanted() && net::mono_seconds() >= next_fair_share_) refresh_fair_share();
  if (acct_ && !acct_policy_ && model_retry_at_ > 0 && net::mono_seconds() >= model_retry_at_) load_acct_model();
  forget_step_views();
  pacing_.on_tick(net::mono_seconds(), static_cast<double>(config_.scheduler.bf_interval));
  arm_schedule();
  tick_timer_.expires_after(std::chrono::seconds(1));
  tick_timer_.async_wait([this](const asio::error_code& ec) {
    if (!ec) tick();
  });
}

void Controller::stamp_sluid(Event& event) {
  uint32_t cluster = 0;  // 0 until the accounting store has given this cluster its id
  if (acct_) {
    auto it = acct_->model().clusters.find(config_.name);
    if (it != acct_->model().clusters.end()) cluster = it->second.id;
  }
  int64_t ms = clock_ ? clock_() * 1000 : net::wall_now_ms();
  if (auto* sub = std::get_if<JobSubmitted>(&event); sub && sub->job.sluid == 0) sub->job.sluid = sluids_.next(cluster, ms);
  if (auto* req = std::get_if<JobRequeued>(&event); req && req->sluid == 0) req->sluid = sluids_.next(cluster, ms);
}

void Controller::record(Event event, std::function<void(const Status&)> after) {
  stamp_sluid(event);
  // A multi-node job leaving RUNNING (ended, requeued: by its agent, a node's failure, a
  // launch that could not be sent...): its other nodes let go of their share once durable.
  JobId leaving = ending_or_requeued(event);
  std::vector<std::string> release = nodes_to_release(leaving);
  std::optional<std::string> requeued_run = run_before_requeue(event);
  std::vector<std::string> spans = node_span_records(event);  // read against the state before it
  if (!hq::apply(state_, event)) {
    // Stale or duplicate: already reflected, but maybe not durable yet (the first copy may
    // still be in the journal's queue). Acting on it waits for everything queued so far.
    if (after) when_durable(std::move(after));
    return;
  }
  count_event(event);
  if (!alloc_waiters_.empty()) allocations_revoked();
  if (auto mails = mails_after(event); !mails.empty()) {  // sent once the change is durable
    after = [this, mails = std::move(mails), after = std::move(after)](const Status& s) {
      if (after) after(s);
      send_mails(mails);
    };
  }
  if (!release.empty()) {
    after = [this, id = leaving, release = std::move(release), after = std::move(after)](const Status& s) {
      if (after) after(s);
      release_other_nodes(id, release);
    };
  }
  std::vector<std::string> records = acct_records(event);
  if (requeued_run) records.insert(records.begin(), std::move(*requeued_run));
  store::OutboxKind kind = spans.empty() ? store::OutboxKind::kJob : store::OutboxKind::kNode;
  if (!spans.empty()) records = std::move(spans);  // a node's event: no job record goes with it
  bool ship = acct_ && !records.empty();
  uint64_t seq = ++appended_;
  journal_->append(net::encode_event(event), std::move(records), kind, [this, seq, t0 = net::mono_seconds(), after = std::move(after)](const Status& s) {
    ++journal_commits_.count;
    journal_commits_.seconds += net::mono_seconds() - t0;
    if (!s) {
      // The in-memory state is ahead of the disk; restart from what is durable.
      log::error("journal commit failed, exiting so a restart reloads durable state: " + s.message());
      std::_Exit(70);
    }
    durable_ = seq;  // completions come in queue order
    if (after) after(s);
    while (!after_durable_.empty() && after_durable_.front().first <= durable_) {
      auto fn = std::move(after_durable_.front().second);
      after_durable_.pop_front();
      fn(Status::ok());
    }
  });
  if (ship) acct_->ship_soon();
  // A snapshot encodes every job held: taking one no more often than every that many
  // events keeps its cost per event constant, and a restart replays at most as many
  // events as it loads jobs.
  int64_t every = std::max<int64_t>(config_.snapshot_every, static_cast<int64_t>(state_.jobs.size()));
  if (++events_since_snapshot_ >= every) {
    events_since_snapshot_ = 0;
    journal_->snapshot(net::encode_snapshot(state_), {});
  }
}

// A running job about to be requeued, as its run ends: REQUEUED at the requeue, the last
// record of that run's row in the accounting store (the next run is a row of its own).
std::optional<std::string> Controller::run_before_requeue(const Event& event) const {
  const auto* e = std::get_if<JobRequeued>(&event);
  if (!e || config_.accounting.storage == "none") return std::nullopt;
  const Job* job = find_job(state_, e->id);
  if (!job || job->state != JobState::kRunning) return std::nullopt;
  Job run = *job;
  run.end_time = e->time;
  run.suspended = false;
  return encode_acct_record(run, "REQUEUED");
}

// A node's spans out of service that `event` opens or closes, for the accounting store.
std::vector<std::string> Controller::node_span_records(const Event& event) const {
  if (config_.accounting.storage == "none") return {};
  std::vector<std::string> out;
  for (const NodeSpan& s : node_span_changes(state_, event)) out.push_back(encode_node_span(s));
  return out;
}

// The job's record after `event`, for the accounting store (none when accounting is off).
std::vector<std::string> Controller::acct_records(const Event& event) const {
  if (config_.accounting.storage == "none") return {};
  auto id = job_of(event);
  const Job* job = id ? find_job(state_, *id) : nullptr;
  if (!job) return {};
  return {encode_acct_record(*job)};
}

void Controller::when_durable(std::function<void(const Status&)> fn) {
  if (durable_ == appended_) return fn(Status::ok());
  after_durable_.emplace_back(appended_, std::move(fn));
}

// Events want a quick and a full pass; the tick a quick one, and a full one once
// bf_interval has passed. PassPacing says which runs when (core/pass_pacing.hpp).
// While the event is being made durable the pass waits for it: the answers that wait on
// that commit go out first (a pass cannot start a job that is not durable anyway).
void Controller::request_schedule() {
  ++schedule_requests_;
  pacing_.on_event();
  if (durable_ == appended_) return arm_schedule();
  if (schedule_after_commit_) return;
  schedule_after_commit_ = true;
  when_durable([this](const Status&) {
    schedule_after_commit_ = false;
    arm_schedule();
  });
}

void Controller::arm_schedule() {
  if (schedule_posted_) return;
  NextPass next = next_pass(pacing_, net::mono_seconds());
  if (!next.any) return;
  schedule_posted_ = true;
  double wait = next.at - net::mono_seconds();
  sched_timer_.expires_after(std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, wait) * 1e6)));
  sched_timer_.async_wait([this](const asio::error_code& ec) {
    schedule_posted_ = false;
    if (ec) return;
    double t0 = net::mono_seconds();
    NextPass due = next_pass(pacing_, t0);  // events may have come meanwhile
    if (due.any && due.at <= t0) {
      run_schedule(due.kind);
      pacing_.ran(due.kind, t0, net::mono_seconds());
    }
    arm_schedule();
  });
}

void Controller::run_schedule(PassKind kind) {
  // With limits enforced, nothing starts before the accounting model is in memory (the
  // first moments after a start): a pass without it would start jobs past their limits.
  if (enforce_.limits && acct_ && !acct_policy_) return;
  if (state_.pending_jobs > 0) {
    double t0 = net::mono_seconds();
    Plan plan = kind == PassKind::kFull ? scheduler_.schedule(state_, now()) : scheduler_.quick_pass(state_, now());
    count_pass(kind == PassKind::kFull, static_cast<int64_t>((net::mono_seconds() - t0) * 1e6), plan);
    apply_plan(std::move(plan));
  }
  if (!alloc_waiters_.empty()) allocations_after_pass();
}

// Derived fields first (reasons, expected starts, priorities), then the decisions,
// each recorded before anything acts on it.
void Controller::apply_plan(Plan plan) {
  JobWalker walker(state_.jobs);  // most of plan.pending is in id order
  planned_nodes_.clear();
  for (const auto& r : plan.reservations)
    for (const auto& a : r.alloc) planned_nodes_.insert(a.node);
  for (auto& info : plan.pending) {
    // The plan was made from state_ just now: its records are state_'s own (not const
    // there), found without a walk of the map (a cache miss a job).
    Job* found = info.record && info.record->id == info.job ? const_cast<Job*>(info.record) : walker.find(info.job);
    if (!found) continue;
    Job& job = *found;
    if (job.array_job_id != 0 && (job.reason != info.reason || job.priority != info.priority))
      touch_array(state_, job);  // what its listed line shows changed (ArrayListings)
    std::string sched = info.reservation >= 0
                            ? alloc_hostlist(plan.reservations[static_cast<size_t>(info.reservation)].alloc)
                            : std::string();
    if (job.reason != info.reason || job.priority != info.priority || job.expected_start != info.expected_start ||
        job.sched_nodes != sched)
      touch_listed(state_);  // kept listings are stale (ListingCache)
    job.reason = info.reason;
    job.priority = info.priority;
    job.expected_start = info.expected_start;
    if (job.sched_nodes != sched) job.sched_nodes = std::move(sched);
  }
  for (const auto& [id, dep] : plan.dependency_changes) record(JobDependencyChanged{id, now(), dep});
  for (JobId id : plan.invalid_dependency_kills)
    record(JobEnded{id, now(), JobState::kCancelled, 0, 0, JobReason::kDependencyNeverSatisfied});
  for (JobId id : plan.deadline_kills)  // Slurm's: ExitCode 0:1, started and ended now
    record(JobEnded{id, now(), JobState::kDeadline, 0, 1, JobReason::kDeadLine});
  for (const auto& p : plan.preemptions) preempt(p);
  for (auto& start : plan.starts) {
    JobId id = start.job;
    if (Job* job = walker.find(id)) {
      if (job->array_job_id != 0 && job->priority != start.priority) touch_array(state_, *job);
      if (job->priority != start.priority) touch_listed(state_);
      job->priority = start.priority;
    }
    record(JobStarted{id, now(), std::move(start.alloc), std::move(start.partition), start.time_limit, std::move(start.qos)},
           [this, id](const Status&) { launch(id); });
  }
}

// A lower-tier job gives way: SIGTERM now, SIGKILL after the partition's GraceTime;
// its end is then recorded as a requeue or as PREEMPTED (agent_job_ended).
void Controller::preempt(const Preemption& p) {
  const Job* job = find_job(state_, p.victim);
  if (!job || job->state != JobState::kRunning || job->stop_intent != StopIntent::kNone || job->cancel_requested) return;
  PreemptMode mode = p.mode == PreemptMode::kRequeue && job->spec.requeue == 0 ? PreemptMode::kCancel : p.mode;
  log::info("job " + display_id(*job) + " preempted by job " + std::to_string(p.preemptor.value) + " (" +
            std::string(preempt_mode_name(mode)) + ", grace " + std::to_string(p.grace) + " s)");
  StopIntent intent = mode == PreemptMode::kRequeue ? StopIntent::kPreemptRequeue : StopIntent::kPreemptCancel;
  Duration grace = std::max<Duration>(1, p.grace);
  if (!job->spec.is_batch()) preempted_alloc_deadline_[job->id] = now() + grace;
  record_then_kill(JobStopRequested{job->id, now(), intent}, job->id, KillReason::kPreempt, grace);
}

void Controller::launch(JobId id) {
  const Job* job = find_job(state_, id);
  if (!job || job->state != JobState::kRunning || job->alloc.empty()) return;
  // Every node first: a job starts on all of its nodes or, one missing, is requeued whole.
  std::vector<ConnPtr> conns;
  for (const NodeAlloc& a : job->alloc) {
    auto it = agents_.find(a.node);
    if (it == agents_.end() || !it->second->is_open()) {
      log::warn("job " + std::to_string(id.value) + ": node " + a.node + " is not connected; requeued");
      record(JobRequeued{id, now(), JobReason::kNone});
      request_schedule();
      return;
    }
    conns.push_back(it->second);
  }
  const TopologyConfig& topo = topology_of_partition(state_, job->partition);
  SwitchTree tree = topo.switches.empty() ? SwitchTree{} : switch_tree_of(state_, topo);  // once, not per node
  for (size_t i = 0; i < conns.size(); ++i) conns[i]->send(launch_message(*job, i, &tree));
  allocation_started(id);  // srun/salloc waiting for it: where its steps go
}

pb::Envelope Controller::launch_message(const Job& job, size_t index, const SwitchTree* tree) const {
  pb::Envelope env;
  auto* l = env.mutable_launch();
  *l->mutable_job() = net::to_pb(job);
  l->set_nodelist(alloc_hostlist(job.alloc));
  l->set_node_index(static_cast<int32_t>(index));
  l->set_cluster(config_.name);
  l->set_kill_wait(config_.kill_wait);
  // An allocation of srun or salloc has no script: its first node holds its share too.
  if (index > 0 || !job.spec.is_batch()) l->set_alloc_only(true);
  const TopologyConfig& topo = topology_of_partition(state_, job.partition);
  if (!topo.switches.empty() && index < job.alloc.size()) {  // topology/tree: where the node sits
    SwitchTree own = tree ? SwitchTree{} : switch_tree_of(state_, topo);
    const SwitchTree& t = tree ? *tree : own;
    l->set_topology_addr(t.node_addr(job.alloc[index].node));
    l->set_topology_addr_pattern(t.node_addr_pattern());
  }
  if (index > 0) return env;
  for (const NodeAlloc& a : job.alloc) {
    pb::AgentAddress* p = l->add_peers();
    if (auto it = step_addresses_.find(a.node); it != step_addresses_.end()) *p = it->second;
    p->set_node(a.node);
  }
  return env;
}

std::vector<std::string> Controller::nodes_to_release(JobId id) const {
  const Job* job = id ? find_job(state_, id) : nullptr;
  if (!job || job->state != JobState::kRunning || (job->alloc.size() < 2 && job->spec.is_batch())) return {};
  std::vector<std::string> out;
  // An allocation of srun or salloc: its first node holds a share too, and reports no end.
  for (size_t i = job->spec.is_batch() ? 1 : 0; i < job->alloc.size(); ++i) out.push_back(job->alloc[i].node);
  return out;
}

// Sent on the connection a node has now: a requeued job that runs again on the same nodes
// gets its new LaunchJob after this (it is sent once its JobStarted, journaled later, is
// durable), so the kill reaches the old share only. A node not connected now reports the
// job in its next registration or heartbeat and is told to kill it then (agent_heartbeat).
void Controller::release_other_nodes(JobId id, const std::vector<std::string>& nodes) {
  pb::Envelope env;
  env.mutable_kill()->set_job_id(id.value);
  env.mutable_kill()->set_reason(std::string(to_string(KillReason::kUnknown)));
  for (const auto& name : nodes)
    if (auto it = agents_.find(name); it != agents_.end() && it->second->is_open()) it->second->send(env);
}

void Controller::send_kill(const Job& job, KillReason reason, Duration grace) {
  pb::Envelope env;
  env.mutable_kill()->set_job_id(job.id.value);
  env.mutable_kill()->set_reason(std::string(to_string(reason)));
  env.mutable_kill()->set_grace(grace);
  // The first node runs the script; the others let go of their share (and its step tasks).
  for (const NodeAlloc& a : job.alloc)
    if (auto it = agents_.find(a.node); it != agents_.end() && it->second->is_open()) it->second->send(env);
}

void Controller::record_then_kill(Event event, JobId id, KillReason reason, Duration grace) {
  record(std::move(event), [this, id, reason, grace](const Status&) {
    if (const Job* j = find_job(state_, id); j && j->state == JobState::kRunning) send_kill(*j, reason, grace);
  });
}

void Controller::resend_stop(const Job& job) {
  if (job.cancel_requested) send_kill(job, KillReason::kCancel);
  else if (is_preemption(job.stop_intent)) send_kill(job, KillReason::kPreempt, 1);
  else if (job.stop_intent != StopIntent::kNone) send_kill(job, KillReason::kRequeue);
}

void Controller::cancel(const pb::CancelRequest& req, const net::Identity& who,
                        std::function<void(Result<pb::CancelReply>)> reply) {
  if (Status s = check_request_key(req.request_key()); !s) return reply(s);
  pb::CancelReply out;
  bool admin = is_admin(who);
  std::vector<std::string> targets;
  for (uint64_t raw : req.job_ids()) targets.push_back(std::to_string(raw));
  targets.insert(targets.end(), req.tasks().begin(), req.tasks().end());
  for (const auto& text : targets) {
    std::vector<JobId> ids = resolve(text);
    if (ids.empty()) out.add_errors("Kill job error on job id " + text + ": Invalid job id specified");
    for (JobId id : ids) {
      Job& job = state_.jobs.at(id);
      if (!may_act(job, who, admin, "cancel"))
        out.add_errors("Kill job error on job id " + display_id(job) + ": Access/permission denied");
      else if (req.signal() > 0 && req.signal() != SIGKILL) signal_one(job, req.signal(), req.signal_scope(), out);
      else cancel_one(job, req.request_key(), who.uid, out);
    }
  }
  request_schedule();
  when_durable([reply = std::move(reply), out = std::move(out)](const Status&) { reply(out); });
}

bool Controller::may_act(const Job& job, const net::Identity& who, bool admin, const std::string& action) const {
  if (admin || job.spec.uid == who.uid) return true;
  log::warn("denied: uid " + std::to_string(who.uid) + " may not " + action + " job " + display_id(job) + " of uid " +
            std::to_string(job.spec.uid));
  return false;
}

// scancel -s: a running job's first node signals its steps (there and on its other nodes)
// or its batch shell; nothing is journaled, the job goes on. Slurm's words otherwise.
void Controller::signal_one(const Job& job, int32_t sig, int32_t scope, pb::CancelReply& out) {
  std::string prefix = "Kill job error on job id " + display_id(job) + ": ";
  if (is_terminal(job.state)) {
    if (job.array_job_id == 0) out.add_errors(prefix + "Job/step already completing or completed");
    return;
  }
  if (job.state != JobState::kRunning || job.alloc.empty())
    return out.add_errors(prefix + "Job can not be altered now, try again later");
  if (sig > 64 || scope < 0 || scope > 2) return out.add_errors(prefix + "Invalid signal");
  pb::Envelope env;
  auto* k = env.mutable_kill();
  k->set_job_id(job.id.value);
  k->set_signal(sig);
  k->set_reason("signal");
  k->set_signal_scope(job.spec.is_batch() ? scope : 0);
  if (!send_to_first_node(job, env)) return out.add_errors(prefix + "Node " + job.alloc.front().node + " is not responding");
  out.add_cancelled(job.id.value);
}

// A retry of the request that cancelled the job (same idempotency key) answers as it did.
void Controller::cancel_one(Job& job, const std::string& key, uint32_t uid, pb::CancelReply& out) {
  bool retried = !key.empty() && job.cancel_key == key;
  if (is_terminal(job.state) && !retried) {
    if (job.array_job_id == 0)
      out.add_errors("Kill job error on job id " + display_id(job) + ": Job/step already completing or completed");
    return;  // finished tasks of an array are skipped quietly
  }
  if (job.state == JobState::kRunning && !job.spec.is_batch()) {
    // No node reports an allocation's end: it is recorded here, and its nodes let go of it.
    record(JobCancelRequested{job.id, now(), key, uid});
    record(JobEnded{job.id, now(), JobState::kCancelled, 0, 0, JobReason::kNone});
  } else if (!is_terminal(job.state)) {
    record_then_kill(JobCancelRequested{job.id, now(), key, uid}, job.id, KillReason::kCancel);
  }
  out.add_cancelled(job.id.value);
}

namespace {
// squeue's filters from a request (an unknown -t matches nothing: the client checks it first).
JobFilter queue_filter(const pb::QueueRequest& req) {
  JobFilter f;
  if (!req.state_filter().empty()) {
    if (!parse_state_filter(req.state_filter(), f)) {
      f = JobFilter{};
      f.states_given = true;
    }
  } else if (req.include_finished()) {
    f.all_states = true;
  }
  f.users.insert(req.users().begin(), req.users().end());
  if (!req.user().empty()) f.users.insert(req.user());
  f.partitions.insert(req.partitions().begin(), req.partitions().end());
  f.names.insert(req.names().begin(), req.names().end());
  f.accounts.insert(req.accounts().begin(), req.accounts().end());
  f.qos.insert(req.qos().begin(), req.qos().end());
  f.reservations.insert(req.reservations().begin(), req.reservations().end());
  f.wckeys.insert(req.wckeys().begin(), req.wckeys().end());
  f.nodes.insert(req.nodes().begin(), req.nodes().end());
  f.licenses_given = req.licenses_size() > 0;
  return f;
}

// The jobs `req` names: each id's job, and an array's tasks (only those named_tasks names
// where it names any of that array's); `unknown` gets the ids that are neither a job nor
// an array.
std::set<uint64_t> named_jobs(const ClusterState& s, const pb::QueueRequest& req, std::vector<uint64_t>& unknown) {
  std::map<uint64_t, std::set<int32_t>> only;
  for (const auto& t : req.named_tasks()) only[t.array_job_id()].insert(t.task_id());
  std::set<uint64_t> out;
  for (uint64_t id : req.job_ids()) {
    auto restricted = only.find(id);
    auto wanted = [&](const Job& j) {
      return restricted == only.end() || j.array_job_id != id || restricted->second.count(j.array_task_id) > 0;
    };
    bool any = false;
    if (const Job* job = find_job(s, JobId{id})) {
      any = true;
      if (wanted(*job)) out.insert(id);
    }
    for_each_array_task(s, id, [&](const Job& task) {
      any = true;
      if (wanted(task)) out.insert(task.id.value);
    });
    if (!any) unknown.push_back(id);
  }
  return out;
}

void set_factors(const PriorityFactors& f, pb::PriorityFactors& out) {
  out.set_age(f.age);
  out.set_job_size(f.job_size);
  out.set_partition(f.partition);
  out.set_qos(f.qos);
  out.set_fairshare(f.fairshare);
  out.set_nice(f.nice);
  out.set_total(f.total);
}
}  // namespace

pb::QueueReply Controller::queue(const pb::QueueRequest& req, const net::Identity& who) const {
  pb::QueueReply out;
  queue(req, who, out);
  return out;
}

namespace {
// Whether a listing with `filter` shows `job` to its asker: it matches, and it is the
// asker's, or the asker is an admin, or jobs are not private.
bool listed_for(const JobFilter& filter, const Job& job, bool mine, bool private_jobs) {
  return job_matches(filter, job) && (mine || !private_jobs);
}
}  // namespace

template <typename Add>
void Controller::for_listed_jobs(const pb::QueueRequest& req, const net::Identity& who, Add&& add,
                                 std::vector<uint64_t>& unknown) const {
  bool admin = is_admin(who);
  JobFilter filter = queue_filter(req);
  // One job, if it matches and the asker may see it; false once the page is full.
  auto offer = [&](const Job& job) {
    bool mine = admin || job.spec.uid == who.uid;
    if (!listed_for(filter, job, mine, config_.private_jobs)) return true;
    return add(job, mine);
  };
  if (req.job_ids_size() > 0) {  // named jobs: looked up, not searched for; ended ones too
    if (!filter.states_given) filter.all_states = true;
    std::set<uint64_t> named = named_jobs(state_, req, unknown);
    for (uint64_t id : named)
      if (id > req.after_id() && !offer(state_.jobs.at(JobId{id}))) break;
    return;
  }
  if (filter.licenses_given) return;  // -L: hq tracks no licenses, so no job uses one
  bool no_pending = filter.states_given && !filter.all_states && !filter.states.count(JobState::kPending);
  if (no_pending || !filter.nodes.empty()) {
    // -t without PENDING (R, CD, ...), or -w (a pending job holds no node): the running and
    // ended jobs' indexes, not the queue.
    for (JobId id : ids_not_pending(filter, req.after_id()))
      if (auto it = state_.jobs.find(id); it != state_.jobs.end() && !offer(it->second)) break;
    return;
  }
  state_.job_list.for_each(state_.jobs, req.after_id(), filter.users, offer,
                           filter_reads_key(filter) ? &filter : nullptr);
}

namespace {
// Whether `filter` reads only what an array's pending tasks grouped in one row show alike
// (core/array_rows' same_listed_line: user, name, the state), so that the first task
// stands for the group.
bool filter_reads_group_alike(const JobFilter& f) {
  bool pending_shown = !f.states_given || f.all_states || f.states.count(JobState::kPending) > 0;
  return pending_shown && f.partitions.empty() && f.accounts.empty() && f.qos.empty() && f.reservations.empty() &&
         f.wckeys.empty() && f.nodes.empty() && !f.licenses_given;
}
}  // namespace

template <typename Add>
std::optional<bool> Controller::add_stretch_rows(const pb::QueueRequest& req, const net::Identity& who,
                                                 Add&& add) const {
  if (req.job_ids_size() > 0 || req.named_tasks_size() > 0 || req.after_id() != 0) return std::nullopt;
  JobFilter filter = queue_filter(req);
  if (!filter_reads_group_alike(filter)) return std::nullopt;
  bool admin = is_admin(who);
  auto shown = [&](const Job& job) {
    return listed_for(filter, job, admin || job.spec.uid == who.uid, config_.private_jobs);
  };
  std::vector<const ListedRow*> groups;  // after the other rows, as add_grouped_rows gives them
  bool ok = true;
  array_listings_.begin_walk();
  state_.job_list.walk(state_.jobs, 0, filter.users, [&](const Job& job) -> uint64_t {
    if (job.array_job_id == 0) {
      if (shown(job) && !add(job, std::string_view())) ok = false;
      return ok ? job.id.value : JobList::kEnd;
    }
    const ArrayStretch& stretch = array_listings_.stretch(state_, job);
    for (const ListedRow& row : stretch.groups)
      if (shown(*row.job)) groups.push_back(&row);
    for (const Job* task : stretch.others)
      if (shown(*task) && !add(*task, std::string_view())) return ok = false, JobList::kEnd;
    return stretch.last_id;
  });
  for (size_t i = 0; ok && i < groups.size(); ++i) ok = add(*groups[i]->job, std::string_view(groups[i]->tasks));
  array_listings_.end_walk(state_);
  return ok;
}

std::vector<JobId> Controller::ids_not_pending(const JobFilter& filter, uint64_t after_id) const {
  std::vector<JobId> ids(state_.running.upper_bound(JobId{after_id}), state_.running.end());
  if (filter.all_states ||
      std::any_of(filter.states.begin(), filter.states.end(), [](JobState s) { return is_terminal(s); })) {
    for (const auto& [end, id] : state_.finished)
      if (id.value > after_id) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
  }
  return ids;
}

void Controller::queue(const pb::QueueRequest& req, const net::Identity& who, pb::QueueReply& out) const {
  out.set_now(now());
  PriorityContext prio = make_priority_context(config_.scheduler, state_);
  prio.accounting = acct_policy_.get();
  if (req.with_priority()) {
    const PriorityWeights& w = config_.scheduler.weights;
    pb::PriorityWeightsRec* pw = out.mutable_weights();
    pw->set_age(w.age), pw->set_job_size(w.job_size), pw->set_partition(w.partition), pw->set_qos(w.qos);
    pw->set_fairshare(w.fairshare);
  }
  size_t bytes = 0;
  std::vector<uint64_t> unknown;
  for_listed_jobs(req, who, [&](const Job& job, bool mine) {
    pb::Job* pj = out.add_jobs();
    if (req.brief()) net::to_pb_brief(job, *pj);
    else net::to_pb(job, mine && req.with_script(), *pj);  // scripts and environments may hold secrets
    if (job.state == JobState::kPending && req.with_priority())
      set_factors(compute_priority(job, prio, now()), *pj->mutable_factors());
    size_t size = pj->ByteSizeLong();
    if (bytes > 0 && bytes + size > kQueuePageBytes) {  // the rest on the next page
      out.mutable_jobs()->RemoveLast();
      out.set_more(true);
      return false;
    }
    bytes += size;
    return true;
  }, unknown);
  for (uint64_t id : unknown) out.add_unknown_ids(id);
}

void Controller::queue_brief_wire(const pb::QueueRequest& req, const net::Identity& who, std::string& out) const {
  // Room for every job at once: a long listing's buffer is one allocation, which the
  // next listing reuses (keep_freed_memory), instead of a trail of buffers doubled in turn
  // that the heap keeps. Pages never written are never touched.
  out.reserve(out.size() + std::min(kQueuePageBytes, state_.jobs.size() * kBriefBytesPerJob));
  size_t start = out.size();
  bool more = false;
  std::vector<uint64_t> unknown;
  // One record; false once the page is full (the record is taken back).
  auto append = [&](const Job& job, std::string_view array_tasks) {
    size_t before = out.size();
    net::append_brief_job_entry(job, out, array_tasks);
    if (before > start && out.size() - start > kQueuePageBytes) {  // the rest on the next page
      out.resize(before);
      more = true;
      return false;
    }
    return true;
  };
  // Grouped only as one page: a later page, asked for after the queue changed, could not
  // tell which tasks an earlier page's groups stood for. A grouped listing longer than a page
  // goes ungrouped, page by page, and the client groups it. (One page: its records may come
  // in any order; the client sorts them.)
  bool grouped = false;
  if (req.collapse_arrays() && req.after_id() == 0) {
    std::optional<bool> stretched = add_stretch_rows(req, who, append);
    grouped = stretched ? *stretched
                        : add_grouped_rows([&](auto&& visit) { for_listed_jobs(req, who, visit, unknown); }, append);
    if (!grouped) {
      out.resize(start);
      more = false;
      unknown.clear();
    }
  }
  if (!grouped) for_listed_jobs(req, who, [&](const Job& job, bool) { return append(job, {}); }, unknown);
  net::append_queue_reply_tail(now(), more, unknown, out);
}

// A kept listing's key: who asks, and the request but for how the client takes the text.
std::string Controller::kept_listing_key(const pb::QueueRequest& req, const net::Identity& who) const {
  pb::QueueRequest asked = req;
  asked.clear_listing_as_file();
  return listing_key(who.uid, is_admin(who), asked.SerializeAsString());
}

std::optional<size_t> Controller::queue_listing(const pb::QueueRequest& req, const net::Identity& who,
                                                std::string& out) const {
  if (req.after_id() != 0) return std::nullopt;  // one page, or records
  std::string key = kept_listing_key(req, who);
  if (const ListingCache::Entry* kept = listings_.find(key, state_.listed_stamp, now())) {
    size_t start = out.size();
    out.append(net::kListingHeadRoom, '\0');
    size_t text_from = out.size();
    if (ListingCache::append_text(*kept, out)) {
      if (check_listings_) check_kept_listing(req, who, std::string_view(out).substr(text_from));
      size_t reply_from = net::put_listing_head(out, text_from);
      net::append_queue_reply_tail(now(), false, kept->unknown_ids, out);
      return reply_from;
    }
    out.resize(start);
  }
  MadeListing made;
  std::optional<size_t> reply_from = make_listing(req, who, out, made);
  if (reply_from) listings_.keep(std::move(key), state_.listed_stamp, made.valid_until, made.text, std::move(made.unknown_ids));
  return reply_from;
}

std::optional<Controller::ListingFile> Controller::kept_listing_file(const pb::QueueRequest& req,
                                                                     const net::Identity& who) const {
  if (req.after_id() != 0) return std::nullopt;
  const ListingCache::Entry* kept =
      listings_.find(kept_listing_key(req, who), state_.listed_stamp, now());
  if (!kept) return std::nullopt;
  if (check_listings_) {
    std::string text;
    if (!ListingCache::append_text(*kept, text)) return std::nullopt;
    check_kept_listing(req, who, text);
  }
  ListingFile file;
  file.fd = kept->fd;
  file.reply.set_now(now());
  file.reply.set_listing_file_bytes(kept->bytes);
  for (uint64_t id : kept->unknown_ids) file.reply.add_unknown_ids(id);
  return file;
}

std::optional<size_t> Controller::make_listing(const pb::QueueRequest& req, const net::Identity& who, std::string& out,
                                               MadeListing& made) const {
  size_t at_most = req.job_ids_size() > 0 ? static_cast<size_t>(req.job_ids_size()) : state_.jobs.size();
  ListingRenderer listing(req.render(), now(), out, kQueuePageBytes, at_most);
  if (!listing.usable()) return std::nullopt;
  std::vector<uint64_t> unknown;
  auto add = [&](const Job& job, std::string_view tasks) { return listing.add(job, tasks); };
  bool ok = true;
  if (req.collapse_arrays()) {  // as queue_brief_wire groups them
    std::optional<bool> stretched = add_stretch_rows(req, who, add);
    ok = stretched ? *stretched : add_grouped_rows([&](auto&& visit) { for_listed_jobs(req, who, visit, unknown); }, add);
  } else {
    for_listed_jobs(req, who, [&](const Job& job, bool) { return ok = add(job, {}); }, unknown);
  }
  if (!ok) {
    listing.abandon();
    return std::nullopt;
  }
  size_t reply_from = listing.finish(unknown);
  made.text = listing.text();
  made.valid_until = listing.valid_until();
  made.unknown_ids = std::move(unknown);
  return reply_from;
}

// HQ_CHECK_LISTINGS: a kept listing must be what the state makes now, or something changed
// what listings show without touching listed_stamp (core touch_listed): a bug that would
// show users a stale queue. The test suite's controllers check every listing they send.
void Controller::check_kept_listing(const pb::QueueRequest& req, const net::Identity& who, std::string_view kept) const {
  std::string fresh;
  MadeListing made;
  if (make_listing(req, who, fresh, made) && made.text == kept) return;
  log::error("a kept squeue listing is stale (listed_stamp " + std::to_string(state_.listed_stamp) +
             "): kept\n" + std::string(kept) + "\nmade now\n" + std::string(made.text));
  std::abort();
}

pb::NodesReply Controller::nodes() const {
  pb::NodesReply out;
  out.set_now(now());
  out.set_cluster(config_.name);
  std::set<std::string> blocked;  // the topology is built only when something can be BLOCKED
  if (exclusive_topo_running(state_)) blocked = blocked_by_exclusive_topo(state_);
  for (const auto& [name, node] : state_.nodes) {
    pb::Node* n = out.add_nodes();
    *n = net::to_pb(node);
    if (node.down && !node.drain) n->set_reason_uid(static_cast<uint32_t>(::getuid()));  // the controller's doing
    n->set_planned(planned_nodes_.count(name) > 0);
    n->set_blocked(blocked.count(name) > 0);
  }
  const PartitionConfig* def = default_partition(config_);
  for (const auto& p : state_.partitions) {  // members now, dynamic nodes included
    auto* pp = out.add_partitions();
    pp->set_name(p.name);
    pp->set_nodes(compress_hostlist(p.nodes));
    pp->set_is_default(def && def->name == p.name);
    pp->set_max_time(p.max_time);
    pp->set_default_time(p.default_time);
    pp->set_total_nodes(static_cast<int32_t>(p.nodes.size()));
    pp->set_state(std::string(partition_state_name(p.state)));
    pp->set_max_nodes(p.max_nodes);
    pp->set_min_nodes(p.min_nodes);
    pp->set_priority_tier(p.priority_tier);
    pp->set_priority_job_factor(p.priority_job_factor);
    pp->set_exclusive(p.exclusive);
    pp->set_preempt_mode(std::string(preempt_mode_name(p.preempt_mode)));
    pp->set_grace_time(p.grace_time);
    pp->set_def_mem_per_cpu_mib(p.def_mem_per_cpu_mib);
    for (const auto& a : p.allow_accounts) pp->add_allow_accounts(a);
    for (const auto& g : p.allow_groups) pp->add_allow_groups(g);
    pp->set_disable_root_jobs(!config_.allow_root_jobs);
    pp->set_qos(p.qos);
    pp->set_topology(p.topology);
  }
  return out;
}

}  // namespace hq::cmd
