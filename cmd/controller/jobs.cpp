// Controller side of job requests: admission (partitions, limits, dependencies,
// arrays), submit and --test-only, hold/release/requeue, and explain.
// Runs on the controller's event-loop thread.
#include <algorithm>

#include "cmd/controller/controller.hpp"
#include "cmd/users.hpp"
#include "core/admission.hpp"
#include "core/array_spec.hpp"
#include "core/dependency.hpp"
#include "core/explain.hpp"
#include "core/hostlist.hpp"
#include "core/hostlist_functions.hpp"
#include "core/submit_options.hpp"
#include "core/units.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

// AllowGroups: the submitter's primary or a supplementary group must be listed.
// root may use every partition, as in Slurm.
bool in_allowed_group(const PartitionConfig& p, const JobSpec& spec) {
  if (p.allow_groups.empty() || spec.uid == 0) return true;
  for (const auto& name : p.allow_groups) {
    auto gid = group_id(name);
    if (gid && (*gid == spec.gid || std::find(spec.groups.begin(), spec.groups.end(), *gid) != spec.groups.end()))
      return true;
  }
  return false;
}

}  // namespace

Result<Job> Controller::admit(const JobSpec& spec) const {
  if (Status s = validate_spec(spec); !s) return s;
  if (spec.is_batch()) {
    if (Status s = check_script(*spec.script); !s) return s;
  } else if (!spec.array.empty() || !spec.dependency.empty()) {
    return invalid("an allocation (srun, salloc) takes no --array or --dependency here");
  }
  if (spec.ntasks < 1 || spec.cpus_per_task < 1 || spec.nodes_min < 1)
    return invalid("task, CPU and node counts must be at least 1");
  Job job;
  job.spec = spec;
  if (spec.switches > 0) {  // the wait for them, capped as Slurm does at submit
    Duration most = config_.scheduler.max_switch_wait;
    job.spec.switch_wait = spec.switch_wait < 0 ? most : std::min(spec.switch_wait, most);
  }
  // Hostlist functions (block{B}, blockwith{N}, feature{F}, ...) are answered now, as
  // Slurm does at submit: the job keeps the nodes they meant then.
  for (Text* list : {&job.spec.nodelist, &job.spec.exclude}) {
    std::string given(list->view());
    if (!has_hostlist_function(given)) continue;
    auto plain = resolve_hostlist_functions(state_, given);
    if (!plain) return plain.status().with_context("Invalid node name specified");
    if (list == &job.spec.nodelist && plain->empty()) return invalid("Invalid node name specified: " + given + " names no node");
    *list = *plain;
  }
  if (spec.partition.empty()) {
    const PartitionConfig* def = default_partition(config_);
    if (!def) return invalid("no partitions are configured");
    job.partitions = {def->name};
  } else {
    job.partitions = split_list(spec.partition);
  }
  for (const auto& name : job.partitions)
    if (!find_partition(state_.partitions, name)) return invalid("Invalid partition name specified: " + name);
  if (Status s = enforce_at_submit(job.spec, job.partitions); !s) return s;  // the default account, QOS
  for (const auto& name : job.partitions) {
    const PartitionConfig* p = find_partition(state_.partitions, name);  // as updated (scontrol)
    if (!p->allow_accounts.empty() &&
        std::find(p->allow_accounts.begin(), p->allow_accounts.end(), job.spec.account) == p->allow_accounts.end())
      return denied("Job's account not permitted to use this partition (" + name + " allows accounts " +
                    compress_hostlist(p->allow_accounts) + ")");
    if (!in_allowed_group(*p, spec))
      return denied("User's group not permitted to use this partition (" + name + " allows groups " +
                    compress_hostlist(p->allow_groups) + ")");
    if (p->state == PartitionState::kDrain || p->state == PartitionState::kInactive)
      return invalid("Partition " + name + " is " + std::string(partition_state_name(p->state)) +
                     ": it accepts no new jobs (Requested partition configuration not available now)");
  }
  if (const std::string& name = spec.extra->reservation; !name.empty()) {
    auto r = state_.reservations.find(name);
    if (r == state_.reservations.end() || !r->second.admits(spec.user, job.spec.account))
      return invalid("Requested reservation is invalid");
  }
  job.partition = job.partitions.front();
  const PartitionConfig& first = *find_partition(state_.partitions, job.partition);
  Duration def = first.default_time != kUnlimited ? first.default_time : first.max_time;
  if (acct_policy_) def = acct_policy_->default_limit(job.spec, job.partition, def);
  job.time_limit = spec.time_limit == kTimeUnset ? def : spec.time_limit;
  if (Duration tmin = spec.extra->time_min; tmin > 0 && job.time_limit != kUnlimited && tmin > job.time_limit)
    return invalid("Invalid time-min specification (exceeds job's time or other limits)");
  if (Time deadline = spec.extra->deadline; deadline > 0) {  // Slurm's checks at submission
    Time earliest = std::max<Time>(spec.begin_time, now());
    if (deadline < earliest) return invalid("Requested time limit is invalid (missing or exceeds some limit)");
    if (spec.extra->time_min > 0 && deadline < earliest + spec.extra->time_min)
      return invalid("Invalid time-min specification (exceeds job's time or other limits)");
  }
  if (!job.spec.nodelist.empty()) {  // -w with more nodes than -N asks for raises the node count
    auto names = expand_hostlist(job.spec.nodelist);
    if (!names) return names.status().with_context("Invalid node name specified");
    if (!spec.ntasks_set || spec.nodes_set)
      job.spec.nodes_min = std::max<int32_t>(job.spec.nodes_min, static_cast<int32_t>(names->size()));
    if (job.spec.nodes_max && job.spec.nodes_max < job.spec.nodes_min) job.spec.nodes_max = job.spec.nodes_min;
  }
  if (!spec.dependency.empty()) {
    auto dep = parse_dependency(spec.dependency);
    if (!dep) return dep.status();
    for (uint64_t target : dependency_targets(*dep))
      if (!find_job(state_, JobId{target})) return invalid("Job dependency problem: job " + std::to_string(target) + " is not known");
    job.dep_state = DepState::kWaiting;
  }
  job.id = JobId{state_.next_job_id};
  job.submit_time = now();
  job.eligible_time = std::max(job.submit_time, spec.begin_time);
  job.hold = spec.hold ? HoldKind::kUser : HoldKind::kNone;
  job.reason = spec.hold ? JobReason::kJobHeldUser : JobReason::kNone;
  if (Status s = check_ever_runnable(state_, job); !s) return s;
  return job;
}

// Expands --array into tasks with consecutive ids from the array's id.
Result<std::vector<Job>> Controller::expand_array(Job job) const {
  std::vector<Job> out;
  if (job.spec.array.empty()) {
    out.push_back(std::move(job));
    return out;
  }
  auto spec = parse_array(job.spec.array, config_.max_array_size);
  if (!spec) return spec.status();
  uint64_t first = job.id.value;
  for (size_t i = 0; i < spec->indices.size(); ++i) {
    Job task = job;
    task.id = JobId{first + i};
    task.array_job_id = first;
    task.array_task_id = spec->indices[i];
    task.array_throttle = spec->throttle;
    task.array_task_count = static_cast<int32_t>(spec->indices.size());
    task.array_task_min = spec->indices.front();
    task.array_task_max = spec->indices.back();
    task.array_task_step = spec->step;
    out.push_back(std::move(task));
  }
  return out;
}

// sbatch --uid/--gid: root may submit a job that runs as another user (with that user's
// groups from /etc/group here) or group; anyone else is refused, whatever the client said.
Status Controller::run_as(const pb::SubmitRequest& req, const net::Identity& who, JobSpec& spec) const {
  if (!req.has_as_uid() && !req.has_as_gid()) return Status::ok();
  if (who.uid != 0) return denied(req.has_as_uid() ? "--uid only permitted by root user" : "--gid only permitted by root user");
  if (req.has_as_uid()) {
    auto user = passwd_by_uid(req.as_uid());
    if (!user) return invalid("Invalid --uid specification: no user " + std::to_string(req.as_uid()) + " on the controller");
    spec.uid = user->uid;
    spec.user = user->name;
    spec.gid = user->gid;
    spec.groups = groups_of(user->name, user->gid);
  }
  if (req.has_as_gid()) spec.gid = req.as_gid();
  return Status::ok();
}

void Controller::submit(const pb::SubmitRequest& req, const net::Identity& who,
                        std::function<void(Result<pb::SubmitReply>)> reply) {
  if (req.spec().alloc_kind() != 0) return reply(invalid("an allocation (srun, salloc) is asked for with AllocateRequest"));
  submit_job(req, who, std::move(reply));
}

void Controller::submit_job(const pb::SubmitRequest& req, const net::Identity& who,
                            std::function<void(Result<pb::SubmitReply>)> reply) {
  JobSpec spec = net::from_pb(req.spec());
  spec.uid = who.uid;  // who runs the job comes from the verified token, never the request
  spec.gid = who.gid;
  spec.groups = who.groups;
  spec.user = user_name(who.uid);
  if (Status s = run_as(req, who, spec); !s) return reply(s);
  if (spec.uid == 0 && !config_.allow_root_jobs)
    return reply(denied("jobs may not run as root on this cluster (set [cluster] allow_root_jobs = true to allow it)"));
  if (spec.nice < 0 && !is_admin(who)) return reply(denied("only administrators may set a negative nice value"));
  if (spec.extra->priority > 0 && !is_admin(who)) {  // Slurm 22.05 takes a user's --priority and ignores it
    JobExtras extras = *spec.extra;
    extras.priority = 0;
    spec.extra = std::move(extras);
  }
  const std::string& key = req.request_key();
  if (Status s = check_request_key(key); !s) return reply(s);
  if (const Job* made = key.empty() || req.test_only() ? nullptr : find_submission(state_, key, spec.uid)) {
    pb::SubmitReply out = submit_reply(*made);  // a retry: the first submission's answer
    return when_durable([reply = std::move(reply), out](const Status&) { reply(out); });
  }
  auto job = admit(spec);
  if (!job) return reply(job.status());
  if (req.test_only()) return reply(test_only(*job));
  Job first = std::move(job).value();
  first.submit_key = key;
  auto expanded = expand_array(std::move(first));
  if (!expanded) return reply(expanded.status());
  std::vector<Job> tasks = std::move(expanded).value();
  if (Status s = check_submit_limits(tasks.front(), tasks.size()); !s) return reply(s);
  for (size_t i = 1; i < tasks.size(); ++i) tasks[i].submit_key.clear();  // the first task answers for all
  pb::SubmitReply out;
  out.set_job_id(tasks.front().id.value);
  if (!tasks.front().spec.array.empty()) out.set_array_tasks(static_cast<int32_t>(tasks.size()));
  // Held jobs (sbatch -H) are not in a pass's queue: a pass would find nothing new to do.
  bool schedulable = std::any_of(tasks.begin(), tasks.end(), [](const Job& t) { return in_queue(t); });
  for (size_t i = 0; i + 1 < tasks.size(); ++i) record(JobSubmitted{std::move(tasks[i])});
  record(JobSubmitted{std::move(tasks.back())}, [reply = std::move(reply), out](const Status&) { reply(out); });
  if (schedulable) request_schedule();
}

Status check_request_key(const std::string& key) {
  if (key.size() > 64) return invalid("request key longer than 64 characters");
  for (char c : key)
    if (c <= ' ' || c > '~') return invalid("request key with a character that is not printable ASCII");
  return Status::ok();
}

pb::SubmitReply Controller::submit_reply(const Job& job) const {
  pb::SubmitReply out;
  out.set_job_id(job.id.value);
  if (job.array_job_id != 0) {
    int32_t tasks = 0;
    for_each_array_task(state_, job.array_job_id, [&](const Job&) { ++tasks; });
    out.set_array_tasks(tasks);
  }
  return out;
}

// sbatch --test-only: one scheduling pass with the job added; nothing is recorded.
pb::SubmitReply Controller::test_only(const Job& job) const {
  Plan plan = scheduler_.schedule(state_, now(), &job);
  pb::SubmitReply out;
  out.set_job_id(job.id.value);
  for (const auto& s : plan.starts) {
    if (s.job != job.id) continue;
    out.set_start_time(now());
    out.set_nodes(alloc_hostlist(s.alloc));
    out.set_partition(s.partition);
  }
  for (const auto& p : plan.pending) {
    if (p.job != job.id) continue;
    out.set_start_time(p.expected_start);
    const Reservation* r = p.reservation >= 0 ? &plan.reservations[static_cast<size_t>(p.reservation)] : nullptr;
    out.set_nodes(r ? alloc_hostlist(r->alloc) : "");
    out.set_partition(r ? r->partition : job.partition.str());
  }
  return out;
}

std::vector<JobId> Controller::resolve(const std::string& text) const {
  std::vector<JobId> out;
  auto us = text.find('_');
  auto id = parse_int(text.substr(0, us), 1, INT64_MAX);
  if (!id) return out;
  uint64_t raw = static_cast<uint64_t>(*id);
  if (us != std::string::npos) {
    auto task = parse_int(text.substr(us + 1), 0, INT32_MAX);
    if (!task) return out;
    for_each_array_task(state_, raw, [&](const Job& t) { if (t.array_task_id == *task) out.push_back(t.id); });
    return out;
  }
  const Job* head = find_job(state_, JobId{raw});
  if (head && head->array_job_id == raw) {
    for_each_array_task(state_, raw, [&](const Job& t) { out.push_back(t.id); });
  } else if (head) {
    out.push_back(JobId{raw});
  }
  return out;
}

void Controller::job_control(const pb::JobControlRequest& req, const net::Identity& who,
                             std::function<void(Result<pb::JobControlReply>)> reply) {
  pb::JobControlReply out;
  bool admin = is_admin(who);
  const std::string& action = req.action();
  if (action == "suspend" || action == "resume" || action == "notify") return suspend_control(req, who, std::move(reply));
  if (action != "hold" && action != "uhold" && action != "release" && action != "requeue" && action != "requeuehold") {
    out.add_errors("unknown action '" + action + "' (expected hold, uhold, release, requeue or requeuehold)");
    return reply(out);
  }
  for (const auto& text : req.jobs()) {
    std::vector<JobId> ids = resolve(text);
    if (ids.empty()) out.add_errors("Invalid job id specified for job " + text);  // Slurm's line
    for (JobId id : ids) {
      Job& job = state_.jobs.at(id);
      std::string err = may_act(job, who, admin, action) ? control_one(action, job, admin) : control_denied(action);
      if (!err.empty()) out.add_errors(err + " for job " + display_id(job));
      else out.add_done(id.value);
    }
  }
  request_schedule();
  when_durable([reply = std::move(reply), out = std::move(out)](const Status&) { reply(out); });
}

// Slurm's refusal of another user's job: hold and release go through slurm_suspend's
// update path (ESLURM_USER_ID_MISSING), requeue through its own (ESLURM_ACCESS_DENIED).
std::string Controller::control_denied(const std::string& action) {
  return action == "requeue" || action == "requeuehold" ? "Access/permission denied" : "Invalid user id";
}

// One job's hold, uhold, release, requeue or requeuehold; "" done, else Slurm's reason.
std::string Controller::control_one(const std::string& action, Job& job, bool admin) {
  JobId id = job.id;
  if (action == "hold" || action == "uhold") {
    if (is_terminal(job.state)) return "Job has already finished";  // running: held once requeued (Slurm's)
    HoldKind kind = action == "hold" && admin ? HoldKind::kAdmin : HoldKind::kUser;
    record(JobHoldChanged{id, now(), kind});
    return "";
  }
  if (action == "release") {
    if (is_terminal(job.state)) return "Job has already finished";
    if (!job.held()) return "";  // Slurm's: nothing to do, no error
    if (job.hold == HoldKind::kAdmin && !admin) return "Access/permission denied";
    record(JobHoldChanged{id, now(), HoldKind::kNone});
    return "";
  }
  return requeue_one(action, job);
}

// requeue / requeuehold: a running job is stopped and queued again with the same id; a
// finished batch job is queued again at once (Slurm's); a pending one is refused.
std::string Controller::requeue_one(const std::string& action, Job& job) {
  JobId id = job.id;
  if (job.state == JobState::kPending) return "Job is pending execution";
  if (job.spec.requeue == 0) return "Requested operation is presently disabled";  // --no-requeue
  if (is_terminal(job.state)) {
    if (!job.spec.is_batch()) return "Job has already finished";  // srun/salloc: nothing to run again
    record(JobRequeued{id, now(), JobReason::kNone});
    if (action == "requeuehold") record(JobHoldChanged{id, now(), HoldKind::kUser});
    return "";
  }
  if (job.cancel_requested || job.stop_intent != StopIntent::kNone) return "Job is already being stopped";
  // Slurm's rule: a suspended job that is requeued is held.
  StopIntent intent = action == "requeuehold" || job.suspended ? StopIntent::kRequeueHold : StopIntent::kRequeue;
  record_then_kill(JobStopRequested{id, now(), intent}, id, KillReason::kRequeue);
  return "";
}

pb::ExplainReply Controller::explain(const pb::ExplainRequest& req, const net::Identity& who) const {
  pb::ExplainReply out;
  const Job* job = find_job(state_, JobId{req.job_id()});
  if (!job || (config_.private_jobs && !is_admin(who) && job->spec.uid != who.uid)) {
    out.add_lines("Invalid job id specified: " + std::to_string(req.job_id()));
    return out;
  }
  std::string head = "job " + display_id(*job) + " is " + std::string(job_state_name(job->state));
  if (job->state != JobState::kPending) {
    out.add_lines(head + (job->alloc.empty() ? "" : " on " + net::to_pb(*job).nodelist()));
    return out;
  }
  out.add_lines(head + ", reason " + std::string(to_string(job->reason)));
  PriorityFactors f = job_priority(state_, config_.scheduler, *job, now(), acct_policy_.get());
  const PriorityWeights& w = config_.scheduler.weights;
  char buf[256];
  std::snprintf(buf, sizeof buf, "priority %lld = age %.0f + size %.0f + partition %.0f + qos %.0f + fairshare %.0f - nice %lld",
                static_cast<long long>(f.total), w.age * f.age, w.job_size * f.job_size, w.partition * f.partition,
                w.qos * f.qos, w.fairshare * f.fairshare, static_cast<long long>(f.nice));
  out.add_lines(buf);
  if (job->expected_start)
    out.add_lines("expected to start at " + format_timestamp(job->expected_start) + " on " + job->sched_nodes +
                  " (a backfill reservation)");
  else
    out.add_lines("no expected start yet (not reserved within the backfill window, or not yet tested)");
  for (auto& line : explain_job(state_, *job, now())) out.add_lines(std::move(line));
  return out;
}

}  // namespace hq::cmd
