#include "cmd/controller/controller.hpp"

#include <algorithm>
#include <asio/post.hpp>
#include "cmd/users.hpp"
#include <cstdlib>

#include "core/hostlist.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {

Controller::Controller(asio::io_context& io, ClusterConfig config, std::unique_ptr<store::Journal> journal,
                       std::string secret_path)
    : io_(io), config_(std::move(config)), journal_(std::move(journal)), scheduler_(make_first_fit_scheduler()),
      state_(make_state(config_)), keys_(std::move(secret_path)), tick_timer_(io), sched_timer_(io) {}

Time Controller::now() const { return net::wall_now(); }

Result<net::Identity> Controller::authenticate(const pb::Hello& hello) {
  auto who = net::verify_token(keys_.keys(), hello.token(), now());
  if (!who) return who;
  bool node = hello.role() == "node";
  if (node != (who->role == "node") || (node && who->node != hello.name()))
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
  if (!loaded->snapshot.empty()) {
    if (Status s = net::restore_snapshot(loaded->snapshot, state_); !s) return s;
  }
  size_t replayed = 0;
  for (const auto& bytes : loaded->events) {
    auto ev = net::decode_event(bytes);
    if (!ev) return ev.status().with_context("journal event " + std::to_string(replayed + 1));
    hq::apply(state_, *ev);
    ++replayed;
  }
  size_t running = 0;
  for (const auto& [id, job] : state_.jobs) running += job.state == JobState::kRunning;
  log::info("recovered " + std::to_string(state_.jobs.size()) + " jobs (" + std::to_string(state_.pending.size()) +
            " pending, " + std::to_string(running) + " running) from snapshot + " + std::to_string(replayed) +
            " journal events; next job id " + std::to_string(state_.next_job_id));
  return Status::ok();
}

void Controller::start() {
  started_at_ = now();
  journal_->start([this](std::function<void()> fn) { asio::post(io_, std::move(fn)); });
  tick();
}

void Controller::shutdown() {
  tick_timer_.cancel();
  sched_timer_.cancel();
  journal_->snapshot(net::encode_snapshot(state_), {});
  journal_->stop();
}

void Controller::tick() {
  if (std::string msg = keys_.refresh(); !msg.empty()) log::info(msg);
  check_nodes();
  check_time_limits();
  purge_finished(state_, now() - config_.min_job_age);
  request_schedule();
  tick_timer_.expires_after(std::chrono::seconds(1));
  tick_timer_.async_wait([this](const asio::error_code& ec) {
    if (!ec) tick();
  });
}

void Controller::record(Event event, std::function<void(const Status&)> after) {
  if (!hq::apply(state_, event)) {
    if (after) after(Status::ok());  // stale or duplicate: already reflected
    return;
  }
  journal_->append(net::encode_event(event), [after = std::move(after)](const Status& s) {
    if (!s) {
      // The in-memory state is ahead of the disk; restart from what is durable.
      log::error("journal commit failed, exiting so a restart reloads durable state: " + s.message());
      std::_Exit(70);
    }
    if (after) after(s);
  });
  if (++events_since_snapshot_ >= config_.snapshot_every) {
    events_since_snapshot_ = 0;
    journal_->snapshot(net::encode_snapshot(state_), {});
  }
}

Result<Job> Controller::admit(const JobSpec& spec) const {
  if (Status s = validate_spec(spec); !s) return s;
  if (Status s = check_script(spec.script); !s) return s;
  const PartitionConfig* part = spec.partition.empty() ? default_partition(config_)
                                                       : find_partition(config_, spec.partition);
  if (!part) return invalid(spec.partition.empty() ? "no partitions are configured"
                                                   : "invalid partition name specified: " + spec.partition);
  if (spec.ntasks < 1 || spec.cpus_per_task < 1 || spec.nodes_min < 1)
    return invalid("task, CPU and node counts must be at least 1");
  Job job;
  job.spec = spec;
  job.partition = part->name;
  Duration def = part->default_time != kUnlimited ? part->default_time : part->max_time;
  job.time_limit = spec.time_limit == kTimeUnset ? def : spec.time_limit;
  if (part->max_time != kUnlimited && (job.time_limit == kUnlimited || job.time_limit > part->max_time))
    return invalid("Requested time limit is invalid (missing or exceeds some limit): partition " + part->name +
                   " allows at most " + format_limit(part->max_time));
  job.id = JobId{state_.next_job_id};
  job.submit_time = now();
  job.priority = 1;
  job.held = spec.hold;
  job.reason = spec.hold ? "JobHeldUser" : "None";
  if (Status s = check_ever_runnable(state_, job); !s) return s;
  return job;
}

void Controller::submit(const pb::SubmitRequest& req, const net::Identity& who,
                        std::function<void(Result<JobId>)> reply) {
  JobSpec spec = net::from_pb(req.spec());
  spec.uid = who.uid;  // who runs the job comes from the verified token, never the request
  spec.gid = who.gid;
  spec.groups = who.groups;
  spec.user = user_name(who.uid);
  if (who.uid == 0 && !config_.allow_root_jobs)
    return reply(denied("jobs may not run as root on this cluster (set [cluster] allow_root_jobs = true to allow it)"));
  auto job = admit(spec);
  if (!job) return reply(job.status());
  JobId id = job->id;
  record(JobSubmitted{std::move(job).value()}, [reply = std::move(reply), id](const Status&) { reply(id); });
  request_schedule();
}

// Event-triggered passes, paced so that scheduling takes at most about a third of the
// loop: the next pass waits twice the last pass's cost after the last one ended.
void Controller::request_schedule() {
  if (schedule_posted_) return;
  schedule_posted_ = true;
  double gap = 2 * last_pass_cost_;
  double wait = last_pass_end_ + gap - net::mono_seconds();
  sched_timer_.expires_after(std::chrono::microseconds(static_cast<int64_t>(std::max(0.0, wait) * 1e6)));
  sched_timer_.async_wait([this](const asio::error_code& ec) {
    schedule_posted_ = false;
    if (ec) return;
    double t0 = net::mono_seconds();
    run_schedule();
    last_pass_end_ = net::mono_seconds();
    last_pass_cost_ = last_pass_end_ - t0;
  });
}

void Controller::run_schedule() {
  if (state_.pending.empty()) return;
  Plan plan = scheduler_->schedule(state_, now());
  for (const auto& [id, reason] : plan.reasons) state_.jobs.at(id).reason = reason;
  for (auto& start : plan.starts) {
    JobId id = start.job;
    record(JobStarted{id, now(), std::move(start.alloc)}, [this, id](const Status&) { launch(id); });
  }
}

void Controller::launch(JobId id) {
  const Job* job = find_job(state_, id);
  if (!job || job->state != JobState::kRunning || job->alloc.empty()) return;
  const std::string& batch_node = job->alloc.front().node;
  auto it = agents_.find(batch_node);
  if (it == agents_.end() || !it->second->is_open()) {
    log::warn("job " + std::to_string(id.value) + ": batch node " + batch_node + " is not connected; requeued");
    record(JobRequeued{id, now(), "None"});
    request_schedule();
    return;
  }
  std::vector<std::string> names;
  for (const auto& a : job->alloc) names.push_back(a.node);
  pb::Envelope env;
  auto* l = env.mutable_launch();
  *l->mutable_job() = net::to_pb(*job);
  l->set_nodelist(compress_hostlist(names));
  l->set_node_index(0);
  l->set_cluster(config_.name);
  l->set_kill_wait(config_.kill_wait);
  it->second->send(env);
}

void Controller::send_kill(const Job& job, const std::string& reason) {
  if (job.alloc.empty()) return;
  auto it = agents_.find(job.alloc.front().node);
  if (it == agents_.end() || !it->second->is_open()) return;
  pb::Envelope env;
  env.mutable_kill()->set_job_id(job.id.value);
  env.mutable_kill()->set_reason(reason);
  it->second->send(env);
}

pb::CancelReply Controller::cancel(const pb::CancelRequest& req, const net::Identity& who) {
  pb::CancelReply out;
  bool admin = is_admin(who);
  for (uint64_t raw : req.job_ids()) {
    auto it = state_.jobs.find(JobId{raw});
    if (it == state_.jobs.end()) {
      out.add_errors("Kill job error on job id " + std::to_string(raw) + ": Invalid job id specified");
      continue;
    }
    Job& job = it->second;
    if (!admin && job.spec.uid != who.uid) {
      log::warn("denied: uid " + std::to_string(who.uid) + " may not cancel job " + std::to_string(raw) +
                " of uid " + std::to_string(job.spec.uid));
      out.add_errors("Kill job error on job id " + std::to_string(raw) + ": Access/permission denied");
      continue;
    }
    if (is_terminal(job.state)) {
      out.add_errors("Kill job error on job id " + std::to_string(raw) + ": Job/step already completing or completed");
      continue;
    }
    if (job.state == JobState::kPending) {
      record(JobEnded{job.id, now(), JobState::kCancelled, 0, 0, "None"});
    } else {
      job.cancel_requested = true;
      send_kill(job, "cancel");
    }
    out.add_cancelled(raw);
  }
  request_schedule();
  return out;
}

pb::QueueReply Controller::queue(const pb::QueueRequest& req, const net::Identity& who) const {
  pb::QueueReply out;
  out.set_now(now());
  std::set<uint64_t> ids(req.job_ids().begin(), req.job_ids().end());
  bool admin = is_admin(who);
  for (const auto& [id, job] : state_.jobs) {
    if (!ids.empty() && !ids.count(id.value)) continue;
    if (ids.empty() && !req.include_finished() && is_terminal(job.state)) continue;
    if (!req.user().empty() && job.spec.user != req.user()) continue;
    bool mine = admin || job.spec.uid == who.uid;
    if (!mine && config_.private_jobs) continue;
    pb::Job* pj = out.add_jobs();
    *pj = net::to_pb(job);
    if (!mine) {  // scripts and environments may hold secrets: owners and admins only
      pj->mutable_spec()->clear_script();
      pj->mutable_spec()->clear_env();
      pj->mutable_spec()->clear_argv();
    }
  }
  return out;
}

pb::NodesReply Controller::nodes() const {
  pb::NodesReply out;
  out.set_now(now());
  out.set_cluster(config_.name);
  for (const auto& [name, node] : state_.nodes) *out.add_nodes() = net::to_pb(node);
  for (const auto& p : config_.partitions) {
    auto* pp = out.add_partitions();
    pp->set_name(p.name);
    pp->set_nodes(compress_hostlist(p.nodes));
    pp->set_is_default(&p == default_partition(config_));
    pp->set_max_time(p.max_time);
    pp->set_default_time(p.default_time);
    pp->set_total_nodes(static_cast<int32_t>(p.nodes.size()));
  }
  return out;
}

}  // namespace hq::cmd
