// Controller side of job step views: what agents report of the steps they manage (a step
// starting, ending; everything on registration), kept per job for scontrol show step,
// squeue -s and hq show job. Soft state, like a node's load: not journaled, rebuilt from
// the agents' full reports after a restart (running steps, and the ended ones whose
// records the controller had not acknowledged). Ended steps' records go to the accounting
// outbox; the agent is acknowledged once they are durable.
// A running batch job shows a J.batch step, made up here as Slurm shows it.
// Runs on the controller's event-loop thread.
#include <algorithm>
#include <set>

#include "cmd/controller/controller.hpp"
#include "core/step_exit.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

constexpr size_t kEndedKept = 100;          // per job: the most recent ended steps

pb::StepRecord batch_step(const Job& job) {
  pb::StepRecord r;
  r.set_job_id(job.id.value);
  r.set_step_id(kBatchStepId);
  r.set_name("batch");
  r.set_state("RUNNING");
  r.set_nodelist(job.alloc.front().node);
  r.set_ntasks(1);
  r.set_nnodes(1);
  r.set_start_time(job.start_time);
  r.set_uid(job.spec.uid);
  return r;
}

}  // namespace

void Controller::agent_steps(const std::string& node, const ConnPtr& conn, const pb::StepReport& report) {
  if (report.full())
    for (auto& [id, views] : step_views_)
      if (views.node == node) views.running.clear();  // what it still runs comes next
  pb::Envelope ack;
  std::vector<std::pair<const Job*, const pb::StepRecord*>> ended;  // to journal
  for (const pb::StepRecord& r : report.steps()) {
    bool running = r.state() == "RUNNING";
    if (!running) {
      pb::StepRef* ref = ack.mutable_step_report_ack()->add_steps();
      ref->set_job_id(r.job_id());
      ref->set_step_id(r.step_id());
      ref->set_start_time(r.start_time());
    }
    const Job* job = find_job(state_, JobId{r.job_id()});
    if (!job || job->alloc.empty() || job->alloc.front().node != node) {
      log::warn("node " + node + " reported a step of job " + std::to_string(r.job_id()) + " it does not manage; ignored");
      continue;
    }
    JobStepViews& views = step_views_[r.job_id()];
    views.node = node;
    views.running.erase(r.step_id());
    if (running) {
      views.running[r.step_id()] = r;
      continue;
    }
    // Sent again (its ack was lost): listed once, journaled again all the same, since the
    // first copy may not be durable yet (the store keeps one of a record shipped twice).
    // A requeued job's next run numbers its steps from 0 again: the start tells them apart.
    auto same = [&r](const pb::StepRecord& seen) {
      return seen.step_id() == r.step_id() && seen.start_time() == r.start_time();
    };
    if (std::none_of(views.ended.begin(), views.ended.end(), same)) {
      views.ended.push_back(r);
      if (views.ended.size() > kEndedKept) views.ended.pop_front();
    }
    ended.emplace_back(job, &r);
  }
  if (!ack.has_step_report_ack()) return;
  acknowledge_when_durable(conn, std::move(ack), ended);
}

// Sends `ack` once every record of `ended` is durable; not when one failed (the agent sends
// them again on its next registration).
void Controller::acknowledge_when_durable(const ConnPtr& conn, pb::Envelope ack,
                                          const std::vector<std::pair<const Job*, const pb::StepRecord*>>& ended) {
  auto message = std::make_shared<const pb::Envelope>(std::move(ack));
  if (ended.empty()) return conn->send(*message);
  auto left = std::make_shared<size_t>(ended.size());
  auto failed = std::make_shared<bool>(false);
  for (const auto& [job, record] : ended)
    record_step_end(*job, *record, [conn, message, left, failed](const Status& s) {
      *failed = *failed || !s;
      if (--*left == 0 && !*failed) conn->send(*message);
    });
}

// An ended step's record, for the accounting store (sacct's J.S lines). Steps are soft
// state: the record goes into the journal's outbox without an event.
void Controller::record_step_end(const Job& job, const pb::StepRecord& r, std::function<void(const Status&)> done) {
  if (config_.accounting.storage == "none") {
    if (done) done(Status::ok());
    return;
  }
  pb::StepRecord rec = r;
  rec.set_job_submit_time(job.submit_time);
  rec.set_partition(job.partition);
  rec.set_user(job.spec.user);
  journal_->append_outbox(store::OutboxKind::kStep, rec.SerializeAsString(), std::move(done));
  if (acct_) acct_->ship_soon();
}

void Controller::forget_step_views() {
  for (auto it = step_views_.begin(); it != step_views_.end();) {
    if (find_job(state_, JobId{it->first})) ++it;
    else it = step_views_.erase(it);
  }
}

pb::StepQueryReply Controller::steps(const pb::StepQueryRequest& req) const {
  pb::StepQueryReply out;
  out.set_now(now());
  std::vector<const Job*> jobs;
  if (req.job_ids_size() == 0) {  // running jobs, and those with step views (the indexes, not every job)
    std::set<JobId> ids(state_.running.begin(), state_.running.end());
    for (const auto& [id, views] : step_views_) ids.insert(JobId{id});
    for (JobId id : ids)
      if (const Job* job = find_job(state_, id)) jobs.push_back(job);
  }
  for (uint64_t id : req.job_ids()) {
    const Job* job = find_job(state_, JobId{id});
    if (job) jobs.push_back(job);
    else out.add_unknown_jobs(id);
  }
  for (const Job* job : jobs) {
    int first = out.steps_size();
    add_job_steps(*job, req.include_ended(), out);
    for (int i = first; i < out.steps_size(); ++i) {
      out.mutable_steps(i)->set_partition(job->partition);
      out.mutable_steps(i)->set_user(job->spec.user);
    }
  }
  return out;
}

// The job's steps in display order: J.batch (a running batch job), ended ones (oldest
// first), running ones.
void Controller::add_job_steps(const Job& job, bool include_ended, pb::StepQueryReply& out) const {
  bool running = job.state == JobState::kRunning;
  if (running && job.spec.is_batch() && !job.alloc.empty()) *out.add_steps() = batch_step(job);
  auto views = step_views_.find(job.id.value);
  if (views == step_views_.end()) return;
  if (include_ended)
    for (const auto& r : views->second.ended) *out.add_steps() = r;
  for (const auto& [step_id, r] : views->second.running) {
    if (running) {
      *out.add_steps() = r;
    } else if (include_ended) {  // the job ended and its node never said: ended with it
      pb::StepRecord gone = r;
      gone.set_state("CANCELLED");
      gone.set_end_time(job.end_time);
      *out.add_steps() = gone;
    }
  }
}

}  // namespace hq::cmd
