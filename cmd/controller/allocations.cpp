// Controller side of srun and salloc outside a job: an allocation is a job without a
// script (JobSpec.alloc_kind srun or salloc). AllocateRequest makes it as a submission does
// (same admission and idempotency key) and answers when it waits and when it starts;
// JobComplete from its srun/salloc ends it. Every node of such a job only holds its share
// (LaunchJob alloc_only, the first with every node's step address), so nothing on a node
// reports its end: the controller records it (JobComplete, cancel, time limit).
// Runs on the controller's event-loop thread.
#include "cmd/controller/controller.hpp"
#include "core/hostlist.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {

pb::AllocateReply Controller::allocation_reply(const Job& job) const {
  pb::AllocateReply out;
  out.set_job_id(job.id.value);
  if (job.state != JobState::kRunning) {
    if (is_terminal(job.state)) out.set_error("Job allocation " + std::to_string(job.id.value) + " has been revoked.");
    return out;
  }
  out.set_granted(true);
  out.set_nodelist(alloc_hostlist(job.alloc));
  out.set_time_limit(job.time_limit > 0 ? job.time_limit : 0);
  out.set_partition(job.partition);
  out.set_job_name(job.spec.name);
  out.set_keepalive_s(holder_keepalive());
  pb::Job full = net::to_pb(job, false);
  *out.mutable_alloc() = full.alloc();
  if (auto it = step_addresses_.find(job.alloc.front().node); it != step_addresses_.end())
    *out.mutable_stepmgr() = it->second;
  out.mutable_stepmgr()->set_node(job.alloc.front().node);
  return out;
}

Result<pb::AllocateReply> Controller::stepmgr_of(const pb::StepMgrQuery& req, const net::Identity& who) const {
  const Job* job = find_job(state_, JobId{req.job_id()});
  if (!job) return not_found("Invalid job id specified");
  if (!may_act(*job, who, is_admin(who), "use")) return denied("Access/permission denied");
  // Slurm 22.05's words: srun prints them after "Unable to confirm allocation for job N: ",
  // except the "Slurm job N has expired" of an ended job, which it prints alone.
  if (is_terminal(job->state)) return invalid("Slurm job " + std::to_string(job->id.value) + " has expired");
  if (job->state != JobState::kRunning || job->alloc.empty()) return unavailable("Job is pending execution");
  return allocation_reply(*job);
}

void Controller::allocate(const pb::AllocateRequest& req, const net::Identity& who,
                          std::function<void(Result<pb::AllocateReply>)> reply) {
  if (req.spec().alloc_kind() != static_cast<int32_t>(AllocKind::kSrun) &&
      req.spec().alloc_kind() != static_cast<int32_t>(AllocKind::kSalloc))
    return reply(invalid("an allocation is for srun or salloc (alloc_kind 1 or 2)"));
  pb::SubmitRequest sub;
  *sub.mutable_spec() = req.spec();
  sub.mutable_spec()->clear_script();
  if (sub.spec().requeue() < 0) sub.mutable_spec()->set_requeue(0);  // as Slurm: an interactive job is not requeued
  sub.set_request_key(req.request_key());
  submit_job(sub, who, [this, reply](Result<pb::SubmitReply> made) {
    if (!made) return reply(made.status());
    JobId id{made->job_id()};
    const Job* job = find_job(state_, id);
    if (!job) return reply(not_found("Job allocation " + std::to_string(id.value) + " is gone"));
    if (job->state == JobState::kRunning) {
      // Started (in this group commit, or a retry): its launch has been sent by now, as
      // the launch runs when its start is durable, before this.
      return when_durable([this, id, reply](const Status&) {
        if (const Job* j = find_job(state_, id)) reply(allocation_reply(*j));
      });
    }
    if (is_terminal(job->state)) return reply(allocation_reply(*job));
    alloc_waiters_[id].push_back({reply, false});
    request_schedule();
  });
}

void Controller::allocation_started(JobId id) {
  auto it = alloc_waiters_.find(id);
  if (it == alloc_waiters_.end()) return;
  std::vector<AllocWaiter> waiters = std::move(it->second);
  alloc_waiters_.erase(it);
  const Job* job = find_job(state_, id);
  if (!job) return;
  pb::AllocateReply out = allocation_reply(*job);
  for (auto& w : waiters) w.reply(out);
}

// After a pass: those still pending learn their job id and that they wait.
void Controller::allocations_after_pass() {
  for (auto& [id, waiters] : alloc_waiters_) {
    const Job* job = find_job(state_, id);
    if (!job || job->state != JobState::kPending) continue;
    for (auto& w : waiters) {
      if (w.told) continue;
      w.told = true;
      w.reply(allocation_reply(*job));
    }
  }
}

// Jobs that ended while they waited (cancelled, or never able to run).
void Controller::allocations_revoked() {
  for (auto it = alloc_waiters_.begin(); it != alloc_waiters_.end();) {
    const Job* job = find_job(state_, it->first);
    if (job && !is_terminal(job->state)) {
      ++it;
      continue;
    }
    std::vector<AllocWaiter> waiters = std::move(it->second);
    JobId id = it->first;
    it = alloc_waiters_.erase(it);
    when_durable([this, id, waiters = std::move(waiters)](const Status&) {
      pb::AllocateReply out;
      out.set_job_id(id.value);
      out.set_error("Job allocation " + std::to_string(id.value) + " has been revoked.");
      for (auto& w : waiters) w.reply(out);
    });
  }
}

void Controller::complete(const pb::JobCompleteRequest& req, const net::Identity& who,
                          std::function<void(Result<pb::JobCompleteReply>)> reply) {
  JobId id{req.job_id()};
  const Job* job = find_job(state_, id);
  std::string head = "Job " + std::to_string(id.value) + ": ";
  if (!job) return reply(not_found(head + "Invalid job id specified"));
  if (!may_act(*job, who, is_admin(who), "complete")) return reply(denied(head + "Access/permission denied"));
  if (job->spec.is_batch()) return reply(invalid(head + "a batch job ends with its script"));
  auto answer = [this, id, reply](const Status&) {
    pb::JobCompleteReply out;
    if (const Job* j = find_job(state_, id)) out.set_state(std::string(job_state_name(j->state)));
    reply(out);
  };
  if (is_terminal(job->state)) return when_durable(answer);
  if (job->state == JobState::kPending) {
    record(JobCancelRequested{id, now(), "", who.uid}, answer);
    return;
  }
  int32_t code = req.exit_code();
  JobState end = job->cancel_requested ? JobState::kCancelled : code == 0 ? JobState::kCompleted : JobState::kFailed;
  JobReason why = end == JobState::kFailed ? JobReason::kNonZeroExitCode : JobReason::kNone;
  if (is_preemption(job->stop_intent)) {  // its srun or salloc ended because it was preempted
    end = JobState::kPreempted;
    why = JobReason::kPreempted;
  }
  log::info("job " + std::to_string(id.value) + ": its " +
            (job->spec.alloc_kind == AllocKind::kSalloc ? std::string("salloc") : std::string("srun")) +
            " ended it (exit code " + std::to_string(code) + ")");
  preempted_alloc_deadline_.erase(id);
  record(JobEnded{id, now(), end, code, 0, why}, answer);
  request_schedule();
}

void Controller::forget_unless_running(std::map<JobId, Time>& by_job) const {
  std::erase_if(by_job, [this](const auto& kv) {
    const Job* job = find_job(state_, kv.first);
    return !job || job->state != JobState::kRunning;
  });
}

int32_t Controller::holder_keepalive() const {
  if (config_.inactive_limit <= 0) return kHolderDefaultKeepalive;
  return static_cast<int32_t>(std::max<Duration>(1, config_.inactive_limit / 3));
}

Result<pb::AllocationAliveReply> Controller::allocation_alive(const pb::AllocationAlive& req, const net::Identity& who) {
  pb::AllocationAliveReply out;
  out.set_keepalive_s(holder_keepalive());
  const Job* job = find_job(state_, JobId{req.job_id()});
  if (!job) return out;  // purged long ago: the state is unknown
  if (!may_act(*job, who, is_admin(who), "use")) return denied("Access/permission denied");
  if (job->state == JobState::kRunning && !job->spec.is_batch()) holder_heard_[job->id] = now();
  out.set_state(std::string(job_state_name(job->state)));
  return out;
}

void Controller::end_inactive_allocations() {
  forget_unless_running(holder_heard_);
  if (config_.inactive_limit <= 0) return;
  Time t = now();
  std::vector<JobId> silent;
  for_each_job_in(state_, state_.running, [&](const Job& job) {  // every second: the running ones only
    if (job.state != JobState::kRunning || job.spec.is_batch() || job.cancel_requested || is_preemption(job.stop_intent))
      return;
    Time heard = std::max(job.start_time, holders_heard_floor_);
    if (auto it = holder_heard_.find(job.id); it != holder_heard_.end()) heard = std::max(heard, it->second);
    // Granted by an earlier controller: its holder learns this one's InactiveLimit at its
    // next keepalive, which may come as late as the interval it had (30 s without a limit).
    if (job.start_time < started_at_) heard = std::max(heard, started_at_ + kHolderDefaultKeepalive);
    if (t - heard >= config_.inactive_limit) silent.push_back(job.id);
  });
  for (JobId id : silent) {
    log::info("job " + std::to_string(id.value) + ": inactivity time limit reached (its srun/salloc silent for " +
              std::to_string(config_.inactive_limit) + " s); its allocation ends");
    holder_heard_.erase(id);
    record(JobEnded{id, t, JobState::kTimeout, 0, 0, JobReason::kInactiveLimit});
  }
  if (!silent.empty()) request_schedule();
}

void Controller::end_preempted_allocations() {
  std::vector<JobId> over;
  Time t = now();
  for_each_job_in(state_, state_.running, [&](const Job& job) {  // every second: the running ones only
    if (job.state != JobState::kRunning || job.spec.is_batch() || !is_preemption(job.stop_intent)) return;
    auto it = preempted_alloc_deadline_.find(job.id);
    if (it == preempted_alloc_deadline_.end() || t >= it->second) over.push_back(job.id);
  });
  for (JobId id : over) {
    preempted_alloc_deadline_.erase(id);
    log::info("job " + std::to_string(id.value) + ": preempted; its allocation ends");
    record(JobEnded{id, now(), JobState::kPreempted, 0, 0, JobReason::kPreempted});
  }
  if (!over.empty()) request_schedule();
  forget_unless_running(preempted_alloc_deadline_);
}

}  // namespace hq::cmd
