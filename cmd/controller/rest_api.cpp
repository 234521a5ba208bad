// slurmrestd's REST API, v0.0.43 (what Slinky's slurm-client calls), served by the
// controller for an authenticated caller: GET ping, diag, jobs, job/{id}, nodes,
// node/{name}, partitions, partition/{name}; POST job/submit; POST job/{id} (hold,
// release, scontrol update's settings); DELETE job/{id}; POST
// node/{name} and nodes/ (drain, resume, features); DELETE node/{name}. Each request is
// the same request the CLI sends, made as the token's user (so the same permissions and
// redaction apply); cmd/rest/ writes and reads the JSON. Runs on the controller's loop.
#include <algorithm>

#include "cmd/controller/controller.hpp"
#include "cmd/controller/http_util.hpp"
#include "cmd/rest/v0043.hpp"
#include "cmd/users.hpp"
#include "core/signal_names.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"

namespace hq::cmd {
namespace {

constexpr std::string_view kVersion = "v0.0.43";

RestError rest_not_found(int error_number, std::string error, std::string description) {
  return rest_error(404, error_number, std::move(error), std::move(description));
}

net::HttpResponse error_reply(const RestError& e, const RestMeta& meta) { return http_json(e.http, rest_error_json({e}, meta)); }

net::HttpResponse bad_job_id(const std::string& target, const RestMeta& meta) {
  return error_reply(rest_not_found(slurm_errno::kInvalidJobId, "Invalid job id specified", "Invalid job id: " + target), meta);
}

// The job a path names ("123", "123_4"); false once `respond` has had the 404.
bool path_job(const std::string& target, const RestMeta& meta, uint64_t& id, std::string& task,
              const net::HttpRespond& respond) {
  if (parse_job_target(target, id, task)) return true;
  respond(bad_job_id(target, meta));
  return false;
}

// A Cancel or NodeControl error text as an HTTP status: 404 for what does not exist, 403 denied.
int status_of_error(const std::string& text) {
  if (text.find("Invalid job id") != std::string::npos || text.find("Invalid node name") != std::string::npos) return 404;
  if (text.find("permission denied") != std::string::npos || text.find("Invalid user id") != std::string::npos) return 403;
  return 422;
}

// Slurm's errno for a cancel's error text.
int cancel_errno(const std::string& text) {
  if (text.find("Invalid job id") != std::string::npos) return slurm_errno::kInvalidJobId;
  if (text.find("permission denied") != std::string::npos) return slurm_errno::kAccessDenied;
  if (text.find("already completing or completed") != std::string::npos) return slurm_errno::kAlreadyDone;
  return 0;
}

}  // namespace

pb::QueueReply queue_all_pages(const Controller& c, pb::QueueRequest q, const net::Identity& who) {
  pb::QueueReply all;
  for (bool more = true; more;) {
    pb::QueueReply page = c.queue(q, who);
    more = page.more() && page.jobs_size() > 0;
    if (more) q.set_after_id(page.jobs(page.jobs_size() - 1).job_id());
    all.set_now(page.now());
    for (auto& j : *page.mutable_jobs()) *all.add_jobs() = std::move(j);
  }
  return all;
}

RestMeta Controller::rest_meta(const net::HttpRequest& req, const net::Identity& who) const {
  return RestMeta{user_name(who.uid), group_name(who.gid), req.peer, config_.name};
}

void Controller::rest(const net::HttpRequest& req, const net::Identity& who, net::HttpRespond respond) {
  RestMeta meta = rest_meta(req, who);
  auto fail = [&](RestError e) { respond(http_json(e.http, rest_error_json({e}, meta))); };
  std::vector<std::string> parts;
  if (!split_path(req.path, parts) || parts.size() < 3) return fail(rest_not_found(slurm_errno::kUrlInvalidPath, "Invalid or unknown URL path", "Unable to find path " + req.path));
  if (parts[1] != kVersion)
    return fail(rest_not_found(slurm_errno::kUrlInvalidPath, "Invalid or unknown URL path",
                          "Unsupported version " + parts[1] + ": hq serves slurmrestd's " + std::string(kVersion)));
  const std::string& what = parts[2];
  std::string arg = parts.size() > 3 ? parts[3] : "";
  if (parts.size() > 4) return fail(rest_not_found(slurm_errno::kUrlInvalidPath, "Invalid or unknown URL path", "Unable to find path " + req.path));
  const std::string& m = req.method;
  bool get = m == "GET" || m == "HEAD";
  if (what == "ping" && arg.empty() && get) return respond(http_json(200, rest_ping_json(config_.controller.host, 0, meta)));
  if (what == "diag" && arg.empty() && get) return respond(http_json(200, rest_diag_json(rest_diag(), meta)));
  if (what == "jobs" && arg.empty() && get) return rest_jobs(req, who, "", std::move(respond));
  if (what == "job" && arg == "submit" && m == "POST") return rest_submit(req, who, std::move(respond));
  if (what == "job" && !arg.empty() && arg != "submit" && get) return rest_jobs(req, who, arg, std::move(respond));
  if (what == "job" && !arg.empty() && m == "DELETE") return rest_cancel(req, who, arg, std::move(respond));
  if (what == "job" && !arg.empty() && arg != "submit" && m == "POST") return rest_job_update(req, who, arg, std::move(respond));
  if ((what == "nodes" && arg.empty()) || (what == "node" && !arg.empty())) {
    if (get) {
      pb::NodesReply r = nodes();
      bool known = arg.empty() || std::any_of(r.nodes().begin(), r.nodes().end(), [&](const pb::Node& n) { return n.name() == arg; });
      if (!known) return fail(rest_not_found(slurm_errno::kInvalidNodeName, "Invalid node name specified", "No node named " + arg));
      return respond(http_json(200, rest_nodes_json(r, arg, meta)));
    }
    if (m == "POST" || (m == "DELETE" && !arg.empty())) return rest_node_update(req, who, arg, std::move(respond));
  }
  if ((what == "partitions" && arg.empty()) || (what == "partition" && !arg.empty())) {
    if (get) {
      pb::NodesReply r = nodes();
      bool known = arg.empty() || std::any_of(r.partitions().begin(), r.partitions().end(), [&](const pb::Partition& p) { return p.name() == arg; });
      if (!known) return fail(rest_not_found(slurm_errno::kInvalidPartition, "Invalid partition name specified", "No partition named " + arg));
      return respond(http_json(200, rest_partitions_json(r, arg, meta)));
    }
  }
  static const std::set<std::string> kKnown = {"ping", "diag", "jobs", "job", "nodes", "node", "partitions", "partition"};
  bool needs_name = what == "job" || what == "node" || what == "partition";
  if (kKnown.count(what) && !(needs_name && arg.empty())) {
    RestError e;
    e.http = 405, e.error_number = slurm_errno::kInvalidMethod, e.error = "Invalid HTTP method";
    e.description = "Method " + m + " is not allowed on " + req.path;
    return fail(e);
  }
  fail(rest_not_found(slurm_errno::kUrlInvalidPath, "Invalid or unknown URL path", "Unable to find path " + req.path));
}

RestDiag Controller::rest_diag() const {
  RestDiag d;
  d.sched = sched_counters_;
  d.sched.started_at = started_at_;
  d.requests = requests_;
  d.now = now();
  for (const auto& [id, job] : state_.jobs) {
    if (job.state == JobState::kPending) ++d.jobs_pending;
    else if (job.state == JobState::kRunning) ++d.jobs_running;
  }
  d.queue_length = d.jobs_pending;
  return d;
}

void Controller::rest_jobs(const net::HttpRequest& req, const net::Identity& who, const std::string& one,
                           net::HttpRespond respond) {
  RestMeta meta = rest_meta(req, who);
  pb::QueueRequest q;
  q.set_include_finished(true);
  q.set_state_filter("all");
  std::string task;
  if (!one.empty()) {
    uint64_t id = 0;
    if (!path_job(one, meta, id, task, respond)) return;
    q.add_job_ids(id);
  }
  pb::QueueReply all = queue_all_pages(*this, q, who);
  if (!task.empty()) {  // one task of the array
    pb::QueueReply one;
    one.set_now(all.now());
    for (auto& j : *all.mutable_jobs())
      if (std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id()) == task) *one.add_jobs() = std::move(j);
    all = std::move(one);
  }
  if (!one.empty() && all.jobs_size() == 0)
    return respond(http_json(404, rest_error_json({rest_not_found(slurm_errno::kInvalidJobId, "Invalid job id specified", "No job " + one)}, meta)));
  // The JSON (about 4.6 KiB a job) is written off the loop from the reply, which it owns.
  auto listing = std::make_shared<pb::QueueReply>(std::move(all));
  off_loop_.run([listing, last_backfill = sched_counters_.bf_last_time, meta] { return rest_jobs_json(*listing, last_backfill, meta); },
                [respond](std::string body) { respond(http_json(200, std::move(body))); });
}

void Controller::rest_submit(const net::HttpRequest& req, const net::Identity& who, net::HttpRespond respond) {
  RestMeta meta = rest_meta(req, who);
  RestError error;
  auto parsed = rest_parse_submit(req.body, &error);
  if (!parsed) return respond(error_reply(error, meta));
  // The body's user_id and group_id, when given, must be the caller's own: no one submits as another.
  auto mismatch = [](const std::string& given, uint32_t id, const std::string& name) {
    return !given.empty() && given != std::to_string(id) && given != name;
  };
  if (mismatch(parsed->user_id, who.uid, meta.user) || mismatch(parsed->group_id, who.gid, meta.group))
    return respond(http_json(403, rest_error_json({rest_error_of(denied("job.user_id/group_id: a job runs as the token's user (" + meta.user + ") only"))}, meta)));
  pb::SubmitRequest sub;
  parsed->spec.submit_host = req.peer.substr(0, req.peer.rfind(':'));
  *sub.mutable_spec() = net::to_pb(parsed->spec);
  if (const std::string* key = req.header("x-hq-request-key")) sub.set_request_key(*key);
  submit(sub, who, [respond, meta, warnings = parsed->warnings](Result<pb::SubmitReply> r) {
    if (!r) return respond(error_reply(rest_error_of(r.status()), meta));
    respond(http_json(200, rest_submit_json(r->job_id(), warnings, meta)));
  });
}

void Controller::rest_cancel(const net::HttpRequest& req, const net::Identity& who, const std::string& target,
                             net::HttpRespond respond) {
  RestMeta meta = rest_meta(req, who);
  uint64_t id = 0;
  std::string task;
  if (!path_job(target, meta, id, task, respond)) return;
  pb::CancelRequest c;
  if (task.empty()) c.add_job_ids(id);
  else c.add_tasks(task);
  c.set_uid(who.uid);
  std::string signal = query_value(req.query, "signal");
  if (!signal.empty()) {
    auto sig = signal_number(signal);
    if (!sig) return respond(error_reply(rest_error_of(invalid("signal: " + sig.status().message())), meta));
    c.set_signal(*sig);
  }
  cancel(c, who, [respond, meta, id](Result<pb::CancelReply> r) {
    if (!r) return respond(error_reply(rest_error_of(r.status()), meta));
    std::vector<KillOutcome> outcomes;
    std::vector<RestError> errors;
    for (const std::string& e : r->errors()) {
      int number = cancel_errno(e);
      outcomes.push_back({id, e, number});
      errors.push_back(rest_error(status_of_error(e), number, e, e));
    }
    if (outcomes.empty()) outcomes.push_back({id, "", 0});
    respond(http_json(errors.empty() ? 200 : errors.front().http, rest_kill_json(outcomes, meta, errors)));
  });
}

void Controller::rest_job_update(const net::HttpRequest& req, const net::Identity& who, const std::string& target,
                                 net::HttpRespond respond) {
  RestMeta meta = rest_meta(req, who);
  uint64_t id = 0;
  std::string task;
  if (!path_job(target, meta, id, task, respond)) return;
  RestError error;
  auto parsed = rest_parse_job_update(req.body, &error);
  if (!parsed) return respond(error_reply(error, meta));
  pb::QueueRequest visible;
  visible.add_job_ids(id);
  if (queue(visible, who).jobs_size() == 0) return respond(bad_job_id(target, meta));
  auto answer = [respond, meta, id, warnings = parsed->warnings](const std::vector<std::string>& problems) {
    int status = problems.empty() ? 200 : status_of_error(problems.front());
    respond(http_json(status, rest_job_post_json(id, problems, meta, warnings)));
  };
  // The settings (scontrol update), then the hold or release, each once durable.
  auto then_hold = [this, who, target, hold = parsed->hold, answer](std::vector<std::string> problems) {
    if (!hold || !problems.empty()) return answer(problems);
    pb::JobControlRequest c;
    c.set_action(*hold ? "hold" : "release");
    c.add_jobs(target);
    job_control(c, who, [answer, problems](Result<pb::JobControlReply> r) mutable {
      if (!r) problems.push_back(r.status().message());
      else problems.insert(problems.end(), r->errors().begin(), r->errors().end());
      answer(problems);
    });
  };
  if (parsed->settings.empty()) return then_hold({});
  pb::JobUpdateRequest u;
  u.add_jobs(target);
  for (const auto& s : parsed->settings) u.add_settings(s);
  update_jobs(u, who, [then_hold](Result<pb::JobUpdateReply> r) {
    std::vector<std::string> problems;
    if (!r) problems.push_back(r.status().message());
    else problems.assign(r->errors().begin(), r->errors().end());
    then_hold(problems);
  });
}

void Controller::rest_node_update(const net::HttpRequest& req, const net::Identity& who, const std::string& node,
                                  net::HttpRespond respond) {
  RestMeta meta = rest_meta(req, who);
  if (!is_admin(who))
    return respond(http_json(403, rest_error_json({rest_error_of(denied("only root and operators may change nodes"))}, meta)));
  std::vector<pb::NodeControlRequest> steps;
  std::vector<std::string> warnings;
  if (req.method == "DELETE") {
    steps.emplace_back().set_action("delete");
    steps.back().set_nodes(node);
  } else {
    RestError error;
    auto parsed = rest_parse_node_update(req.body, node, &error);
    if (!parsed) return respond(error_reply(error, meta));
    steps = std::move(parsed->requests);
    warnings = std::move(parsed->warnings);
  }
  run_node_steps(std::move(steps), who, [respond, meta, warnings](pb::NodeControlReply r) {
    if (r.errors_size() == 0) return respond(http_json(200, rest_ok_json(meta, warnings)));
    std::vector<RestError> errors;
    for (const std::string& text : r.errors()) {
      RestError e;
      e.http = status_of_error(text);
      e.error_number = e.http == 404 ? slurm_errno::kInvalidNodeName : 0;
      e.error = e.description = text;
      errors.push_back(e);
    }
    respond(http_json(errors.front().http, rest_error_json(errors, meta)));
  });
}

// The requests in turn, each once the one before is durable; stops at the first with errors.
void Controller::run_node_steps(std::vector<pb::NodeControlRequest> steps, const net::Identity& who,
                                std::function<void(pb::NodeControlReply)> done) {
  if (steps.empty()) return done(pb::NodeControlReply{});
  pb::NodeControlRequest first = std::move(steps.front());
  steps.erase(steps.begin());
  node_control(first, who, [this, steps = std::move(steps), who, done = std::move(done)](pb::NodeControlReply r) mutable {
    if (r.errors_size() > 0 || steps.empty()) return done(std::move(r));
    run_node_steps(std::move(steps), who, std::move(done));
  });
}

}  // namespace hq::cmd
