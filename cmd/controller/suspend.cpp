// Controller side of scontrol suspend, resume and notify. Suspend and resume are for root
// and operators, journaled (JobSuspended) and sent to the job's first node once durable:
// its agent stops (SIGSTOP) or continues (SIGCONT) the batch shell's group and every step,
// and holds the time limit while the job is suspended (a resumed job's limit comes back
// longer by the time suspended). Notify puts a line into a running job's stderr; nothing is
// journaled. Errors are Slurm's words, whole lines as scontrol prints them. Runs on the
// controller's event loop.
#include "cmd/controller/controller.hpp"
#include "net/log.hpp"

namespace hq::cmd {
void Controller::suspend_control(const pb::JobControlRequest& req, const net::Identity& who,
                                 std::function<void(Result<pb::JobControlReply>)> reply) {
  pb::JobControlReply out;
  bool admin = is_admin(who);
  bool notify = req.action() == "notify";
  for (const auto& text : req.jobs()) {
    std::vector<JobId> ids = resolve(text);
    if (ids.empty()) {
      // Slurm 22.05's scontrol words for an unknown id (its suspend RPC answers so).
      out.add_errors(notify ? "job notify failure: Invalid job id specified"
                            : "Unexpected message received for job " + text);
      continue;
    }
    for (JobId id : ids) {
      Job& job = state_.jobs.at(id);
      std::string err;
      if (notify) {
        err = may_act(job, who, admin, "notify") ? notify_one(job, req.message()) : "Access/permission denied";
        if (!err.empty()) out.add_errors("job notify failure: " + err);
      } else {
        err = admin ? suspend_one(job, req.action() == "suspend") : "Access/permission denied";
        if (!admin) log::warn("uid " + std::to_string(who.uid) + " may not " + req.action() + " job " + display_id(job));
        if (!err.empty()) out.add_errors(err + " for job " + display_id(job));
      }
      if (err.empty()) out.add_done(id.value);
    }
  }
  when_durable([reply = std::move(reply), out = std::move(out)](const Status&) { reply(out); });
}

// Slurm's rules: only a running job is suspended (again: nothing to do), only a suspended
// one resumed.
std::string Controller::suspend_one(Job& job, bool suspend) {
  if (job.state == JobState::kPending) return "Job is pending execution";
  if (is_terminal(job.state) || job.cancel_requested || job.stop_intent != StopIntent::kNone)
    return "Job/step already completing or completed";
  if (!suspend && !job.suspended) return "Job is not suspended";
  if (suspend && job.suspended) return "";
  JobId id = job.id;
  record(JobSuspended{id, now(), suspend}, [this, id](const Status& s) {
    if (s) send_suspension(id);
  });
  request_schedule();  // a suspended job's CPUs are free
  return "";
}

// To the job's first node: stop or continue it as it now stands; a resumed job's limit
// follows (the time suspended added).
void Controller::send_suspension(JobId id) {
  const Job* job = find_job(state_, id);
  if (!job || job->state != JobState::kRunning || job->alloc.empty()) return;
  pb::Envelope env;
  env.mutable_kill()->set_job_id(id.value);
  env.mutable_kill()->set_reason(job->suspended ? "suspend" : "resume");
  if (!send_to_first_node(*job, env)) return;  // sent again when it registers
  if (!job->suspended) send_time_limit(id);
}

std::string Controller::notify_one(const Job& job, const std::string& message) {
  if (job.state == JobState::kPending || !job.spec.is_batch()) return "Requested operation is presently disabled";
  if (is_terminal(job.state)) return "Job/step already completing or completed";
  pb::Envelope env;
  env.mutable_kill()->set_job_id(job.id.value);
  env.mutable_kill()->set_reason("notify");
  env.mutable_kill()->set_message(message.substr(0, 4096));
  return send_to_first_node(job, env) ? "" : "Node " + job.alloc.front().node + " is not responding";
}

}  // namespace hq::cmd
