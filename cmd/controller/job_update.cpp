// Controller side of scontrol update JobId=: each named job is changed whole or not at
// all (core/job_update decides what may change and by whom; a pending job whose request
// changed is admitted again), journaled, and answered once durable. A running job's new
// time limit goes to the node that runs its script. Runs on the controller's event loop.
#include "cmd/controller/controller.hpp"
#include "core/job_update.hpp"
#include "core/slurm_errors.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// StartTime= and Deadline= as scontrol sends them: seconds since the epoch (it resolves
// "now+1hour" and civil times in the user's zone); other forms as UTC.
Result<Time> absolute_time(const std::string& text, Time now) {
  if (auto epoch = parse_int(text, 0, INT64_MAX)) return *epoch;
  return resolve_begin(text, now, 0);
}

}  // namespace

Result<Job> Controller::updated_job(const Job& job, const JobUpdate& u, bool admin) const {
  Time begin = 0, deadline = 0;
  if (u.start_time) {
    auto t = absolute_time(*u.start_time, now());
    if (!t) return invalid("Invalid StartTime value");
    begin = *t;
  }
  if (u.deadline) {
    auto t = absolute_time(*u.deadline, now());
    if (!t) return invalid("Invalid Deadline value");
    deadline = *t;
  }
  auto out = apply_job_update(job, u, admin, begin, deadline);
  if (!out || job.state != JobState::kPending) return out;
  // Admitted again as if submitted so: partitions, limits, sizes, nodes, dependency.
  JobSpec probe = out->spec;
  if (!u.dependency) probe.dependency.clear();  // unchanged: its targets may be gone by now
  auto admitted = admit(probe);
  if (!admitted) return admitted.status();
  out->partitions = admitted->partitions;
  out->partition = admitted->partition;
  out->time_limit = admitted->time_limit;
  out->spec.nodes_min = admitted->spec.nodes_min;
  out->spec.nodes_max = admitted->spec.nodes_max;
  out->spec.nodelist = admitted->spec.nodelist;  // hostlist functions answered, as at submit
  out->spec.exclude = admitted->spec.exclude;
  // The account and QOS as enforcement chose and checked them (an emptied Account= or QOS=
  // gets the defaults back, so no update takes a job out of its limits).
  out->spec.account = admitted->spec.account;
  if (admitted->spec.extra->qos != out->spec.extra->qos) {
    JobExtras extra = *out->spec.extra;
    extra.qos = admitted->spec.extra->qos;
    out->spec.extra = std::move(extra);
  }
  if (u.dependency) out->dep_state = admitted->dep_state;
  return out;
}

void Controller::update_jobs(const pb::JobUpdateRequest& req, const net::Identity& who,
                             std::function<void(Result<pb::JobUpdateReply>)> reply) {
  std::vector<std::string> settings(req.settings().begin(), req.settings().end());
  auto update = parse_job_update(settings);
  if (!update) return reply(update.status());
  pb::JobUpdateReply out;
  bool admin = is_admin(who);
  for (const auto& text : req.jobs()) {
    std::vector<JobId> ids = resolve(text);
    if (ids.empty()) out.add_errors("Invalid job id specified for job " + text);
    for (JobId id : ids) {
      const Job& job = state_.jobs.at(id);
      if (!may_act(job, who, admin, "update")) {
        out.add_errors("Invalid user id for job " + display_id(job));  // Slurm's ESLURM_USER_ID_MISSING
        continue;
      }
      auto changed = updated_job(job, *update, admin);
      if (!changed) {
        out.add_errors(slurm_error_text(changed.status().message()) + " for job " + display_id(job));
        continue;
      }
      bool new_limit = update->time_limit && job.state == JobState::kRunning;
      log::info("job " + display_id(job) + " updated: " + req.settings(0) + (req.settings_size() > 1 ? " ..." : ""));
      record(JobUpdated{id, now(), std::move(changed).value()}, [this, id, new_limit](const Status&) {
        if (new_limit) send_time_limit(id);
      });
      out.add_done(id.value);
    }
  }
  request_schedule();
  when_durable([reply = std::move(reply), out = std::move(out)](const Status&) { reply(out); });
}

void Controller::send_time_limit(JobId id) {
  const Job* job = find_job(state_, id);
  if (!job || job->state != JobState::kRunning || job->alloc.empty() || job->suspended) return;
  pb::Envelope env;
  env.mutable_job_time_limit()->set_job_id(id.value);
  // From its start, so the time it was suspended is added: it does not count.
  env.mutable_job_time_limit()->set_time_limit(job->time_limit > 0 ? job->time_limit + job->suspended_secs : job->time_limit);
  send_to_first_node(*job, env);
}

bool Controller::send_to_first_node(const Job& job, const pb::Envelope& env) {
  if (job.alloc.empty()) return false;
  auto it = agents_.find(job.alloc.front().node);
  if (it == agents_.end() || !it->second->is_open()) return false;
  it->second->send(env);
  return true;
}

}  // namespace hq::cmd
