// hq's own REST routes, for what Slurm's API lacks (GET only, JSON, for an authenticated
// caller, with the CLI's permissions and redaction):
//   /hq/v1/jobs[?user=NAME&state=LIST]  the queue with expected starts and planned nodes
//   /hq/v1/jobs/{id}                    one job, the same record
//   /hq/v1/jobs/{id}/explain            hq explain's lines
//   /hq/v1/jobs/{id}/output[?stream=err] the last 16 KiB of its output, for its owner and admins
//                                       (read as the job's user off the loop: output_tail)
//   /hq/v1/topology[/{name}]            scheduling topology: lines, base blocks' use, score
//   /hq/v1/scheduler                    the recent scheduling passes
//   /hq/v1/whoami                       the caller, and whether an administrator
// Runs on the controller's loop.
#include "cmd/client/json_stream.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/controller/controller.hpp"
#include "cmd/client/output.hpp"
#include "cmd/controller/http_util.hpp"
#include "cmd/controller/output_tail.hpp"
#include "cmd/rest/v0043.hpp"
#include "cmd/users.hpp"

namespace hq::cmd {
namespace {

void job_record(JsonStream& j, const pb::Job& job, int64_t now) {
  const pb::JobSpec& s = job.spec();
  j.object().integer("job_id", static_cast<int64_t>(job.job_id()));
  if (job.array_job_id()) j.integer("array_job_id", static_cast<int64_t>(job.array_job_id())).integer("array_task_id", job.array_task_id());
  j.str("name", s.name()).str("user", s.user()).str("account", s.account()).str("partition", job.partition());
  j.str("state", job_state(job)).str("reason", job.reason()).integer("priority", job_priority(job));
  j.integer("submit_time", job.submit_time()).integer("start_time", job_start_time(job, now));
  j.integer("expected_start", job.expected_start()).integer("end_time", job_end_time(job));
  j.integer("time_limit", job.time_limit()).str("nodes", job.nodelist()).str("sched_nodes", job.sched_nodes());
  j.integer("node_count", job_node_count(job)).integer("cpus", job_cpu_count(job));
  j.integer("hold", job.hold()).boolean("suspended", job.suspended());
  j.integer("exit_code", job.exit_code()).integer("exit_signal", job.exit_signal()).end();
}

// The jobs of `r` that `task` ("123_4") names; all of them for "".
void keep_task(pb::QueueReply& r, const std::string& task) {
  if (task.empty()) return;
  pb::QueueReply kept;
  kept.set_now(r.now());
  for (auto& j : *r.mutable_jobs())
    if (std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id()) == task) *kept.add_jobs() = std::move(j);
  r = std::move(kept);
}

}  // namespace

void Controller::hq_output(const pb::Job& job, const std::string& stream, const net::Identity& who,
                           net::HttpRespond respond) const {
  if (job.spec().uid() != who.uid && !is_admin(who))
    return respond(http_error(403, "Access/permission denied: a job's output is for its user and administrators"));
  TailRequest t;
  t.path = job_stdio(job, stream == "err" ? 'e' : 'o');
  if (t.path.empty()) return respond(http_error(404, "job " + std::to_string(job.job_id()) + " has no output file"));
  t.uid = job.spec().uid();
  t.gid = job.spec().gid();
  t.groups.assign(job.spec().groups().begin(), job.spec().groups().end());
  read_tail_as_user(io_, t, [respond, id = job.job_id(), path = t.path](Result<TailResult> r) {
    if (!r) return respond(http_error(404, r.status().message()));
    JsonStream j(true);
    j.object().integer("job_id", static_cast<int64_t>(id)).str("path", path).integer("size", r->size);
    j.str("tail", utf8_or_replacement(r->tail)).end();
    respond(http_json(200, j.take()));
  });
}

void Controller::hq_api(const net::HttpRequest& req, const net::Identity& who, net::HttpRespond respond) {
  std::vector<std::string> p;
  if (!split_path(req.path, p) || p.size() < 3 || p[1] != "v1") return respond(http_error(404, "Unable to find path " + req.path));
  if (req.method != "GET" && req.method != "HEAD") return respond(http_error(405, "Method " + req.method + " not allowed: /hq/v1 is read-only"));
  JsonStream j(true);
  if (p[2] == "jobs" && p.size() <= 5) {
    pb::QueueRequest q;
    std::string task;
    if (p.size() >= 4) {
      uint64_t id = 0;
      if (!parse_job_target(p[3], id, task)) return respond(http_error(404, "Invalid job id specified: " + p[3]));
      q.add_job_ids(id);
    }
    if (p.size() == 5 && p[4] == "output") {
      q.set_include_finished(true);
      pb::QueueReply r = queue_all_pages(*this, q, who);
      keep_task(r, task);
      if (r.jobs_size() == 0) return respond(http_error(404, "Invalid job id specified: " + p[3]));
      return hq_output(r.jobs(0), query_value(req.query, "stream"), who, std::move(respond));
    }
    if (p.size() == 5) {
      if (p[4] != "explain") return respond(http_error(404, "Unable to find path " + req.path));
      q.set_include_finished(true);
      pb::QueueReply r = queue_all_pages(*this, q, who);
      keep_task(r, task);
      if (r.jobs_size() == 0) return respond(http_error(404, "Invalid job id specified: " + p[3]));
      pb::ExplainRequest er;
      er.set_job_id(r.jobs(0).job_id());
      pb::ExplainReply said = explain(er, who);
      j.object().integer("job_id", static_cast<int64_t>(er.job_id())).array("lines");
      for (const auto& line : said.lines()) j.item(line);
      return respond(http_json(200, j.end().end().take()));
    }
    q.set_user(query_value(req.query, "user"));
    q.set_state_filter(query_value(req.query, "state"));
    pb::QueueReply r = queue_all_pages(*this, q, who);
    keep_task(r, task);
    if (p.size() == 4 && r.jobs_size() == 0) return respond(http_error(404, "Invalid job id specified: " + p[3]));
    j.object().integer("now", r.now()).boolean("more", r.more()).array("jobs");
    for (const pb::Job& job : r.jobs()) job_record(j, job, r.now());
    return respond(http_json(200, j.end().end().take()));
  }
  if (p[2] == "topology" && p.size() <= 4) {
    if (p.size() == 4 && !topology_named(state_, p[3])) return respond(http_error(404, "No topology named " + p[3]));
    pb::NodesReply r;
    add_topology(p.size() == 4 ? p[3] : "", r);
    j.object().str("name", r.topology_name()).integer("fragmentation", r.fragmentation()).array("lines");
    for (const auto& line : r.topology()) j.item(line);
    j.end().array("blocks");
    for (const auto& b : r.blocks()) {
      j.object().str("name", b.name()).str("nodes", b.nodes()).integer("total", b.total()).integer("idle", b.idle());
      j.integer("busy", b.busy()).integer("unavailable", b.unavailable()).end();
    }
    return respond(http_json(200, j.end().end().take()));
  }
  if (p[2] == "scheduler" && p.size() == 3) {
    j.object().array("passes");
    for (const PassRecord& r : recent_passes_) {
      j.object().integer("at", r.at).boolean("full", r.full).integer("micros", r.micros);
      j.integer("considered", r.considered).integer("started", r.started).integer("reserved", r.reserved);
      j.integer("preempted", r.preempted).end();
    }
    const SchedulerCounters& c = sched_counters_;
    j.end().object("totals").integer("passes", c.passes.count).integer("backfill_passes", c.backfill.count);
    j.integer("jobs_submitted", c.jobs_submitted).integer("jobs_started", c.jobs_started);
    j.integer("jobs_completed", c.jobs_completed).integer("jobs_canceled", c.jobs_canceled);
    j.integer("jobs_failed", c.jobs_failed).end();
    return respond(http_json(200, j.end().take()));
  }
  if (p[2] == "whoami" && p.size() == 3) {
    j.object().str("user", user_name(who.uid)).integer("uid", who.uid).integer("gid", who.gid);
    j.boolean("admin", is_admin(who)).str("cluster", config_.name).end();
    return respond(http_json(200, j.take()));
  }
  respond(http_error(404, "Unable to find path " + req.path));
}

}  // namespace hq::cmd
