// hq's own REST routes, for what Slurm's API lacks (GET only, JSON, for an authenticated
// caller, with the CLI's permissions and redaction):
//   /hq/v1/jobs[?user=NAME&state=LIST]  the queue with expected starts and planned nodes
//   /hq/v1/jobs/{id}                    one job, the same record
//   /hq/v1/jobs/{id}/explain            hq explain's lines
//   /hq/v1/topology[/{name}]            scheduling topology: lines, base blocks' use, score
// Runs on the controller's loop.
#include "cmd/client/json_stream.hpp"
#include "cmd/client/queue_format.hpp"
#include "cmd/controller/controller.hpp"
#include "cmd/controller/http_util.hpp"
#include "cmd/rest/v0043.hpp"

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

net::HttpResponse problem(int status, const std::string& message) {
  RestError e;
  e.http = status;
  e.error = e.description = message;
  return http_json(status, rest_error_json({e}, RestMeta{}));
}

}  // namespace

void Controller::hq_api(const net::HttpRequest& req, const net::Identity& who, net::HttpRespond respond) {
  std::vector<std::string> p;
  if (!split_path(req.path, p) || p.size() < 3 || p[1] != "v1") return respond(problem(404, "Unable to find path " + req.path));
  if (req.method != "GET" && req.method != "HEAD") return respond(problem(405, "Method " + req.method + " not allowed: /hq/v1 is read-only"));
  JsonStream j(true);
  if (p[2] == "jobs" && p.size() <= 5) {
    pb::QueueRequest q;
    if (p.size() >= 4) {
      if (p[3].empty() || p[3].size() > 19 || p[3].find_first_not_of("0123456789") != std::string::npos)
        return respond(problem(404, "Invalid job id specified: " + p[3]));
      q.add_job_ids(std::stoull(p[3]));
    }
    if (p.size() == 5) {
      if (p[4] != "explain") return respond(problem(404, "Unable to find path " + req.path));
      pb::ExplainRequest er;
      er.set_job_id(q.job_ids(0));
      pb::ExplainReply r = explain(er, who);
      j.object().integer("job_id", static_cast<int64_t>(er.job_id())).array("lines");
      for (const auto& line : r.lines()) j.item(line);
      return respond(http_json(200, j.end().end().take()));
    }
    q.set_user(query_value(req.query, "user"));
    q.set_state_filter(query_value(req.query, "state"));
    pb::QueueReply r = queue(q, who);
    if (p.size() == 4 && r.jobs_size() == 0) return respond(problem(404, "Invalid job id specified: " + p[3]));
    j.object().integer("now", r.now()).boolean("more", r.more()).array("jobs");
    for (const pb::Job& job : r.jobs()) job_record(j, job, r.now());
    return respond(http_json(200, j.end().end().take()));
  }
  if (p[2] == "topology" && p.size() <= 4) {
    if (p.size() == 4 && !topology_named(state_, p[3])) return respond(problem(404, "No topology named " + p[3]));
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
  respond(problem(404, "Unable to find path " + req.path));
}

}  // namespace hq::cmd
