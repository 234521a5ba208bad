// Controller side of the node-agent protocol: registration and reconciliation of
// running jobs after either side restarts, heartbeats, job ends, and liveness.
// Runs on the controller's event-loop thread.
#include <algorithm>
#include <cctype>
#include <set>

#include "cmd/controller/controller.hpp"
#include "cmd/paths.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"
#include "net/token.hpp"

namespace hq::cmd {


namespace {

// Host-name characters only, 1-64 of them: a node name is used in paths and hostlists.
bool valid_node_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

// The config's [agents] for a registering node: settings and the programs' contents
// (read now, so an edited script reaches agents at their next registration).
void Controller::fill_agent_settings(pb::AgentSettings& out) const {
  const AgentSettings& a = config_.agents;
  for (auto [path, body] : {std::pair{&a.health_check, out.mutable_health_check()},
                            std::pair{&a.prolog, out.mutable_prolog()}, std::pair{&a.epilog, out.mutable_epilog()}}) {
    if (path->empty()) continue;
    *body = read_small_file(*path);
    if (body->empty()) log::warn("[agents] program " + *path + " is empty or unreadable; not sent");
  }
  out.set_health_interval(a.health_interval);
  out.set_helper_timeout(a.helper_timeout);
  out.set_job_pids_max(a.job_pids_max);
  out.set_fence_timeout(config_.fence_timeout);
}

Result<pb::CaReply> Controller::ca_for(const pb::CaRequest& req) const {
  std::string ca = read_small_file(config_.keys_dir + "/ca.pem");
  if (ca.empty()) return unavailable("this controller has no CA certificate to give (" + config_.keys_dir + "/ca.pem)");
  uint32_t key = keyring().signing_id();
  auto mac = net::ca_mac(keyring(), key, req.nonce(), ca);
  if (!mac) return mac.status();
  pb::CaReply out;
  out.set_ca_pem(ca);
  out.set_key_id(key);
  out.set_mac(*mac);
  return out;
}

namespace {
// The features an agent registers with (a dynamic node's own; `--feature`), checked.
Result<std::vector<std::string>> registered_features(const pb::RegisterNode& reg) {
  std::vector<std::string> out;
  for (const auto& f : reg.features()) {
    if (f.empty() || f.size() > 64 || f.find_first_of("{}[],&|*() ") != std::string::npos)
      return invalid("node '" + reg.name() + "': bad feature '" + f + "'");
    out.push_back(f);
  }
  return out;
}
}  // namespace

Status Controller::join_dynamic(const pb::RegisterNode& reg, std::vector<std::string> features) {
  if (!config_.dynamic_nodes)
    return invalid("unknown node '" + reg.name() + "': declare it in a [[node]] section of the config "
                   "(dynamic_nodes = false)");
  if (!valid_node_name(reg.name())) return invalid("bad node name '" + reg.name() + "'");
  Node n;
  n.name = reg.name();
  n.dynamic = true;
  n.block = reg.block();
  n.switch_name = reg.switch_name();
  n.features = std::move(features);
  add_node(state_, std::move(n));
  Node& added = state_.nodes.at(reg.name());
  update_memberships(state_, added, config_.partitions);  // the config's lists, even after a delete
  std::string parts;
  for (const auto& p : added.partitions) parts += (parts.empty() ? "" : ",") + p;
  log::info("node " + reg.name() + " joined (not in the config); partitions: " + (parts.empty() ? "none" : parts));
  return Status::ok();
}

Result<pb::RegisterAck> Controller::register_agent(const ConnPtr& conn, const pb::RegisterNode& reg) {
  if (reg.cpus() < 1 || reg.mem_mib() < 0) return invalid("node '" + reg.name() + "' reported no CPUs");
  for (const std::string* label : {&reg.block(), &reg.switch_name()})
    if (!label->empty() && !valid_node_name(*label)) return invalid("node '" + reg.name() + "': bad topology label '" + *label + "'");
  auto registered = registered_features(reg);
  if (!registered) return registered.status();
  if (!state_.nodes.count(reg.name()))
    if (Status s = join_dynamic(reg, registered.value()); !s) return s;
  auto it = state_.nodes.find(reg.name());
  Node& node = it->second;
  if (auto old = agents_.find(reg.name()); old != agents_.end() && old->second != conn)
    old->second->close("replaced by a new registration");
  agents_[reg.name()] = conn;
  const NodeConfig* nc = find_node_config(config_, reg.name());
  if (!nc || nc->cpus == 0) node.cpus = reg.cpus();        // config sizes win when given
  if (!nc || nc->mem_mib == 0) node.mem_mib = reg.mem_mib();
  std::vector<NodeGpu> found;
  for (const auto& g : reg.gpus()) found.push_back({g.type(), g.cpus()});
  auto gpus = reconcile_gpus(nc ? nc->gres : std::vector<GresCount>{}, found);
  bool stays_down = node.down && node.reason == kNotResponding && config_.return_to_service == 0;
  node.registered = true;
  node.responding = true;
  node.down = !gpus || stays_down;
  if (!node.drain && !stays_down) node.reason = gpus ? "" : gpus.status().message();
  if (gpus) node.gpus = std::move(gpus).value();
  else log::warn("node " + reg.name() + ": " + gpus.status().message() + "; node set DOWN");
  node.last_heard = now();
  node.boot_time = reg.boot_time();
  // A dynamic node's features are its agent's, which may have restarted with others.
  std::vector<std::string> features = node.dynamic ? std::move(registered).value() : node.features;
  if (node.block != reg.block() || node.switch_name != reg.switch_name() || node.features != features) {
    node.block = reg.block();  // features and labels decide partitions
    node.switch_name = reg.switch_name();
    node.features = std::move(features);
    update_memberships(state_, node, config_.partitions);
  }
  log::info("node " + reg.name() + " registered from " + conn->peer() + " (" + std::to_string(node.cpus) +
            " CPUs, " + std::to_string(node.mem_mib) + " MiB, " + std::to_string(node.gpus.size()) + " GPUs, " +
            std::to_string(reg.running_jobs_size()) +
            " running jobs)");
  request_schedule();
  pb::RegisterAck ack;
  ack.set_heartbeat_interval(config_.heartbeat_interval);
  ack.set_cluster(config_.name);
  fill_agent_settings(*ack.mutable_settings());
  ack.set_config_toml(config_.text);
  return ack;
}

bool Controller::agent_register(const ConnPtr& conn, uint64_t seq, const pb::RegisterNode& reg) {
  auto ack = register_agent(conn, reg);
  if (!ack) {
    log::warn("refused registration from " + conn->peer() + ": " + ack.status().message());
    conn->send(net::error_reply(seq, ack.status()));
    return false;
  }
  pb::Envelope env;
  *env.mutable_register_ack() = std::move(ack).value();
  env.set_seq(seq);
  conn->send(env);  // first: what reconciliation sends below comes after it
  reconcile_agent(reg.name(), conn, reg);
  return true;
}

// After a restart of either side: deliver buffered ends, kill what the controller does
// not know, and fail what the agent no longer has.
void Controller::reconcile_agent(const std::string& name, const ConnPtr& conn, const pb::RegisterNode& reg) {
  std::set<uint64_t> seen(reg.running_jobs().begin(), reg.running_jobs().end());
  for (const auto& ended : reg.finished()) {
    seen.insert(ended.job_id());
    agent_job_ended(name, conn, ended);
  }
  for (uint64_t raw : reg.running_jobs()) {
    const Job* job = find_job(state_, JobId{raw});
    if (job && job->state == JobState::kRunning && job->alloc.front().node == name) {
      resend_stop(*job);  // a cancel's or requeue's kill may have died with a controller
      continue;
    }
    pb::Envelope env;
    env.mutable_kill()->set_job_id(raw);
    env.mutable_kill()->set_reason(std::string(to_string(KillReason::kUnknown)));
    conn->send(env);
  }
  std::vector<JobId> lost;
  for (const auto& [id, job] : state_.jobs) {
    if (job.state == JobState::kRunning && job.alloc.front().node == name && !seen.count(id.value))
      lost.push_back(id);
  }
  for (JobId id : lost) {
    // Not running and no end buffered: it never launched (e.g. the controller died between
    // journaling the start and sending it) or its agent restarted. Run it again.
    log::warn("job " + std::to_string(id.value) + " is not on node " + name + "; requeued");
    record(JobRequeued{id, now(), JobReason::kNone});
  }
}

void Controller::agent_heartbeat(const std::string& name, const pb::Heartbeat& hb) {
  auto it = state_.nodes.find(name);
  if (it == state_.nodes.end()) return;
  Node& node = it->second;
  node.last_heard = now();
  node.responding = true;
  if (node.down && node.reason == kNotResponding && config_.return_to_service > 0) {  // ReturnToService=1
    node.down = false;
    auto drained = state_.drained.find(name);
    node.reason = drained == state_.drained.end() ? "" : drained->second;
    log::info("node " + name + " is responding again; returned to service");
    request_schedule();
  }
  // Jobs the controller already ended or requeued (e.g. while the node was silent) must stop
  // here, also when they run again elsewhere by now.
  auto conn = agents_.find(name);
  for (uint64_t raw : hb.running_jobs()) {
    const Job* job = find_job(state_, JobId{raw});
    if (job && job->state == JobState::kRunning && job->alloc.front().node == name) continue;
    if (conn == agents_.end()) break;
    pb::Envelope env;
    env.mutable_kill()->set_job_id(raw);
    env.mutable_kill()->set_reason(std::string(to_string(KillReason::kUnknown)));
    conn->second->send(env);
  }
}

void Controller::agent_job_ended(const std::string& name, const ConnPtr& conn, const pb::JobEnded& msg) {
  auto ended = net::from_pb(msg);
  uint64_t raw = msg.job_id();
  int32_t run = msg.restart_count();
  auto ack = [conn, raw, run](const Status&) {
    pb::Envelope env;
    env.mutable_job_ended_ack()->set_job_id(raw);
    env.mutable_job_ended_ack()->set_restart_count(run);
    conn->send(env);
  };
  if (!ended) {
    log::warn("node " + name + " sent a bad JobEnded: " + ended.status().message());
    return ack(Status::ok());
  }
  const Job* job = find_job(state_, ended->id);
  // The agent's clock: an end before the job started or in the future is taken as now.
  if (job && (ended->time < job->start_time || ended->time > now() + 60)) ended->time = now();
  if (job && job->restart_count != run) {  // an earlier run, requeued since (e.g. its node was silent)
    log::info("node " + name + ": end of an earlier run of job " + std::to_string(raw) + " ignored");
    return ack(Status::ok());
  }
  if (job && job->cancel_requested && ended->state == JobState::kFailed) ended->state = JobState::kCancelled;
  if (job && msg.prolog_failed() && job->spec.requeue != 0 && !job->cancel_requested) {  // it never ran: again
    log::info("job " + std::to_string(raw) + " requeued: the prolog failed on " + name);
    record(JobRequeued{ended->id, ended->time, JobReason::kNone}, ack);
    return request_schedule();
  }
  if (job && ended->reason == JobReason::kNodeFenced && job->spec.requeue != 0 && !job->cancel_requested &&
      job->stop_intent == StopIntent::kNone) {  // its agent lost the controller and killed it
    log::info("job " + std::to_string(raw) + " requeued: its agent on " + name + " fenced it");
    record(JobRequeued{ended->id, ended->time, JobReason::kNone}, ack);
    return request_schedule();
  }
  StopIntent intent = job ? job->stop_intent : StopIntent::kNone;
  if (intent == StopIntent::kRequeue || intent == StopIntent::kPreemptRequeue) {
    JobReason why = intent == StopIntent::kPreemptRequeue ? JobReason::kPreempted : JobReason::kNone;
    record(JobRequeued{ended->id, ended->time, why}, ack);
  } else if (intent == StopIntent::kRequeueHold) {
    record(JobRequeued{ended->id, ended->time, JobReason::kNone});
    record(JobHoldChanged{ended->id, ended->time, HoldKind::kUser}, ack);
  } else {
    if (intent == StopIntent::kPreemptCancel) {
      ended->state = JobState::kPreempted;
      ended->reason = JobReason::kPreempted;
    }
    record(*ended, ack);
  }
  request_schedule();
}

void Controller::agent_disconnected(const std::string& name, const ConnPtr& conn) {
  auto it = agents_.find(name);
  if (it == agents_.end() || it->second != conn) return;
  agents_.erase(it);
  if (auto n = state_.nodes.find(name); n != state_.nodes.end()) n->second.responding = false;
  log::warn("node " + name + " disconnected: " + conn->close_reason());
}

// Jobs whose batch node failed: requeued with the same id when they may be (--requeue, the
// default for batch jobs), else ended with `state`.
void Controller::end_jobs_on_node(const std::string& name, JobState state, JobReason reason) {
  std::vector<JobId> ids;  // the node's own index, not a walk over every job
  for (JobId id : state_.nodes.at(name).jobs) {
    const Job* job = find_job(state_, id);
    if (job && job->state == JobState::kRunning && !job->alloc.empty() && job->alloc.front().node == name)
      ids.push_back(id);
  }
  for (JobId id : ids) {
    const Job& job = state_.jobs.at(id);
    if (job.cancel_requested) {  // it was being cancelled: that is how it ends
      record(JobEnded{id, now(), JobState::kCancelled, 0, 0, JobReason::kNone});
    } else if (job.spec.requeue != 0) {
      log::info("job " + std::to_string(id.value) + " requeued: its node " + name + " failed");
      record(JobRequeued{id, now(), JobReason::kNone});
    } else {
      record(JobEnded{id, now(), state, 0, 0, reason});
    }
  }
  if (!ids.empty()) request_schedule();
}

void Controller::check_nodes() {
  Time t = now();
  for (auto& [name, node] : state_.nodes) {
    if (node.down) continue;
    bool silent = node.registered ? t - node.last_heard > config_.node_timeout
                                  : !node.jobs.empty() && t - started_at_ > config_.node_timeout;
    if (!silent) continue;
    node.down = true;
    node.responding = false;
    node.reason = kNotResponding;  // a drain stays recorded (state_.drained) for the return
    log::warn("node " + name + " is DOWN: not responding for " + std::to_string(config_.node_timeout) + " s");
    end_jobs_on_node(name, JobState::kNodeFail, JobReason::kNodeDown);
  }
}

void Controller::check_time_limits() {
  Time t = now();
  for (const auto& [id, job] : state_.jobs) {
    if (job.state != JobState::kRunning || job.time_limit <= 0) continue;
    // The agent enforces limits itself; this is the backstop if its kill went missing.
    if (t > job.start_time + job.time_limit + config_.kill_wait + 30) send_kill(job, KillReason::kTimeout);
  }
}

}  // namespace hq::cmd
