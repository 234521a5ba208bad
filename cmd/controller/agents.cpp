// Controller side of the node-agent protocol: registration and reconciliation of
// running jobs after either side restarts, heartbeats, job ends, and liveness. What a
// registration or silence changes of a node is journaled (NodeRegistered, NodeDownChanged;
// the rules in core/node_events.hpp); liveness (responding, last_heard) is not.
// Runs on the controller's event-loop thread.
#include <algorithm>
#include <cctype>
#include <set>

#include "cmd/controller/controller.hpp"
#include "cmd/paths.hpp"
#include "core/node_events.hpp"
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

// A topology label: [TOPOLOGY:]UNIT entries, comma-separated, each part a name as above.
bool valid_topology_label(const std::string& label) {
  size_t start = 0;
  while (start <= label.size()) {
    size_t comma = std::min(label.find(',', start), label.size());
    std::string entry = label.substr(start, comma - start);
    size_t colon = entry.find(':');
    if (colon != std::string::npos && !valid_node_name(entry.substr(0, colon))) return false;
    if (!valid_node_name(colon == std::string::npos ? entry : entry.substr(colon + 1))) return false;
    start = comma + 1;
  }
  return true;
}

// The address part of a connection's peer ("10.0.0.5:41000", "::1:41000", "[::1]:41000");
// "" when there is none ("?").
std::string peer_host(const std::string& peer) {
  size_t colon = peer.rfind(':');
  if (colon == std::string::npos || colon == 0) return "";
  std::string host = peer.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return host;
}

// Where a registering agent takes step traffic: its own step_host, else the address the
// controller sees it at.
pb::AgentAddress step_address(const pb::RegisterNode& reg, const std::string& peer) {
  pb::AgentAddress a;
  a.set_node(reg.name());
  a.set_host(reg.step_host().empty() ? peer_host(peer) : reg.step_host());
  a.set_port(reg.step_port());
  a.set_fingerprint(reg.cert_fingerprint());
  return a;
}

bool in_alloc(const Job& job, const std::string& node) {
  return std::any_of(job.alloc.begin(), job.alloc.end(), [&](const NodeAlloc& a) { return a.node == node; });
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

// A registration as the event that records it, once its fields are checked.
Result<NodeRegistered> registration_event(const pb::RegisterNode& reg, Time t, bool join) {
  if (reg.cpus() < 1 || reg.mem_mib() < 0) return invalid("node '" + reg.name() + "' reported no CPUs");
  for (const std::string* label : {&reg.block(), &reg.switch_name()})
    if (!label->empty() && !valid_topology_label(*label))
      return invalid("node '" + reg.name() + "': bad topology label '" + *label + "' (UNIT or TOPOLOGY:UNIT, comma-separated)");
  auto features = registered_features(reg);
  if (!features) return features.status();
  NodeRegistered e{reg.name(), t, reg.cpus(), reg.mem_mib(), {}, std::move(features).value(), reg.block(),
                   reg.switch_name(), reg.boot_time(), join, reg.threads_per_core()};
  for (const auto& g : reg.gpus()) e.gpus.push_back({g.type(), g.cpus()});
  return e;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
  return out.empty() ? "none" : out;
}
}  // namespace

Result<std::vector<Event>> Controller::registration(const pb::RegisterNode& reg) const {
  bool join = !state_.nodes.count(reg.name());
  if (join && !config_.dynamic_nodes)
    return invalid("unknown node '" + reg.name() + "': declare it in a [[node]] section of the config "
                   "(dynamic_nodes = false)");
  if (join && !valid_node_name(reg.name())) return invalid("bad node name '" + reg.name() + "'");
  auto report = registration_event(reg, now(), join);
  if (!report) return report.status();
  return registration_events(state_, *report, config_.return_to_service);
}

void Controller::log_registration(const ConnPtr& conn, const pb::RegisterNode& reg, bool joined_now) const {
  const Node& node = state_.nodes.at(reg.name());
  if (joined_now)
    log::info("node " + reg.name() + " joined (not in the config); partitions: " + joined(node.partitions));
  if (node.down) log::warn("node " + reg.name() + " is DOWN: " + node.down_reason);
  log::info("node " + reg.name() + " registered from " + conn->peer() + " (" + std::to_string(node.cpus) +
            " CPUs, " + std::to_string(node.mem_mib) + " MiB, " + std::to_string(node.gpus.size()) + " GPUs, " +
            std::to_string(reg.running_jobs_size()) + " running jobs)");
}

pb::RegisterAck Controller::register_ack() const {
  pb::RegisterAck ack;
  ack.set_heartbeat_interval(config_.heartbeat_interval);
  ack.set_cluster(config_.name);
  fill_agent_settings(*ack.mutable_settings());
  ack.set_config_toml(config_.text);
  return ack;
}

bool Controller::agent_register(const ConnPtr& conn, uint64_t seq, const pb::RegisterNode& reg) {
  auto events = registration(reg);
  if (!events) {
    log::warn("refused registration from " + conn->peer() + ": " + events.status().message());
    conn->send(net::error_reply(seq, events.status()));
    return false;
  }
  const std::string& name = reg.name();
  if (auto old = agents_.find(name); old != agents_.end() && old->second != conn)
    old->second->close("replaced by a new registration");
  agents_[name] = conn;
  step_addresses_[name] = step_address(reg, conn->peer());
  bool joins = std::get<NodeRegistered>(events->front()).join;
  for (auto& e : *events) record(std::move(e));
  Node& node = state_.nodes.at(name);  // liveness: not journaled
  node.registered = node.responding = true;
  node.last_heard = now();
  log_registration(conn, reg, joins);
  request_schedule();
  // The ack, then what reconciliation sends, once the registration is durable; not for a
  // session replaced or gone meanwhile.
  when_durable([this, conn, seq, reg = std::make_shared<pb::RegisterNode>(reg)](const Status&) {
    auto current = agents_.find(reg->name());
    if (current == agents_.end() || current->second != conn) return;
    pb::Envelope env;
    *env.mutable_register_ack() = register_ack();
    env.set_seq(seq);
    conn->send(env);  // first: what reconciliation sends below comes after it
    reconcile_agent(reg->name(), conn, *reg);
  });
  return true;
}

// After a restart of either side: deliver buffered ends, kill what the controller does
// not know, and fail what the agent no longer has. A job is on a node when the node is in
// its alloc: the first runs its script, the others hold its share (alloc_only).
void Controller::reconcile_agent(const std::string& name, const ConnPtr& conn, const pb::RegisterNode& reg) {
  std::set<uint64_t> seen(reg.running_jobs().begin(), reg.running_jobs().end());
  for (const auto& ended : reg.finished()) {
    // Only an end of the job's current run accounts for it: an earlier run's end (requeued
    // since) says nothing of whether the current one, launched there, ever started.
    const Job* job = find_job(state_, JobId{ended.job_id()});
    if (!job || job->restart_count == ended.restart_count()) seen.insert(ended.job_id());
    agent_job_ended(name, conn, ended);
  }
  for (uint64_t raw : reg.running_jobs()) {
    const Job* job = find_job(state_, JobId{raw});
    if (job && job->state == JobState::kRunning && in_alloc(*job, name)) {
      // A cancel's or requeue's kill may have died with a controller; the other nodes are
      // released when the first one's end is recorded.
      if (job->alloc.front().node == name) {
        resend_stop(*job);
        // An update's new limit, or a suspend or resume, may not have reached it.
        if (job->suspend_time) send_suspension(job->id);
        else send_time_limit(job->id);
      }
      continue;
    }
    pb::Envelope env;
    env.mutable_kill()->set_job_id(raw);
    env.mutable_kill()->set_reason(std::string(to_string(KillReason::kUnknown)));
    conn->send(env);
  }
  std::vector<JobId> lost;
  for_each_job_in(state_, state_.running, [&](const Job& job) {
    if (job.state != JobState::kRunning || seen.count(job.id.value)) return;
    auto at = std::find_if(job.alloc.begin(), job.alloc.end(), [&](const NodeAlloc& a) { return a.node == name; });
    if (at == job.alloc.begin() && job.spec.is_batch()) {
      lost.push_back(job.id);
    } else if (at != job.alloc.end()) {
      // Its agent restarted (an alloc-only share is not kept across restarts) or the launch
      // never arrived: the share is held again; the job goes on.
      log::info("job " + std::to_string(job.id.value) + ": node " + name + " does not hold its share; sent again");
      conn->send(launch_message(job, static_cast<size_t>(at - job.alloc.begin())));
    }
  });
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
  if (returns_to_service(node, config_.return_to_service)) {
    log::info("node " + name + " is responding again; returned to service");
    record(NodeDownChanged{name, now(), false, ""});
    request_schedule();
  }
  // Jobs the controller already ended or requeued (e.g. while the node was silent) must stop
  // here, also when they run again elsewhere by now; a share an alloc-only node holds after
  // its job ended (its release was lost) goes too.
  auto conn = agents_.find(name);
  for (uint64_t raw : hb.running_jobs()) {
    const Job* job = find_job(state_, JobId{raw});
    if (job && job->state == JobState::kRunning && in_alloc(*job, name)) continue;
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
  if (job && !job->alloc.empty() && job->alloc.front().node != name) {
    // Only the node of the script reports a job's end; a share held elsewhere never ends it.
    log::info("node " + name + ": end of job " + std::to_string(raw) + " ignored (not its first node)");
    return ack(Status::ok());
  }
  // The agent's clock: an end before the job started or in the future is taken as now.
  if (job && (ended->time < job->start_time || ended->time > now() + 60)) ended->time = now();
  if (job && job->restart_count != run) {  // an earlier run, requeued since (e.g. its node was silent)
    log::info("node " + name + ": end of an earlier run of job " + std::to_string(raw) + " ignored");
    return ack(Status::ok());
  }
  // Killed after a cancel (by the cancel's kill, or fenced before it arrived): CANCELLED.
  if (job && job->cancel_requested && (ended->state == JobState::kFailed || ended->state == JobState::kNodeFail))
    ended->state = JobState::kCancelled;
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
  step_addresses_.erase(name);
  if (auto n = state_.nodes.find(name); n != state_.nodes.end()) n->second.responding = false;
  log::warn("node " + name + " disconnected: " + conn->close_reason());
}

// Jobs whose batch node failed: requeued with the same id when they may be (--requeue, the
// default for batch jobs), else ended with `state`. Their other nodes are released once that
// is durable (record). A failed node other than the first leaves its jobs running for now
// (Slurm ends them NODE_FAIL or requeues them: later work, docs/design/steps-plan.md stage 2).
// Every running job holding `name` ends (or is requeued) as Slurm does for a failed node
// of its allocation. Where the failed node is not the job's first, the script (or an
// allocation's steps) still runs elsewhere: its nodes are told to kill it once the end is
// durable.
void Controller::end_jobs_on_node(const std::string& name, JobState state, JobReason reason, bool reachable) {
  std::vector<JobId> ids;  // the node's own index, not a walk over every job
  for (JobId id : state_.nodes.at(name).jobs) {
    const Job* job = find_job(state_, id);
    if (job && job->state == JobState::kRunning && in_alloc(*job, name)) ids.push_back(id);
  }
  for (JobId id : ids) {
    const Job& job = state_.jobs.at(id);
    bool elsewhere = job.alloc.front().node != name;
    bool requeue = !job.cancel_requested && job.spec.requeue != 0;
    std::function<void(const Status&)> after;
    if (elsewhere || reachable)
      after = [this, held = job, requeue](const Status&) {
        send_kill(held, requeue ? KillReason::kRequeue : KillReason::kUnknown);
      };
    if (job.cancel_requested) {  // it was being cancelled: that is how it ends
      record(JobEnded{id, now(), JobState::kCancelled, 0, 0, JobReason::kNone}, after);
    } else if (requeue) {
      log::info("job " + std::to_string(id.value) + " requeued: its node " + name + " failed");
      record(JobRequeued{id, now(), JobReason::kNone}, after);
    } else {
      if (elsewhere) log::info("job " + std::to_string(id.value) + " ends NODE_FAIL: its node " + name + " failed");
      record(JobEnded{id, now(), state, 0, 0, reason}, after);
    }
  }
  if (!ids.empty()) request_schedule();
}

void Controller::check_nodes() {
  Time t = now();
  std::vector<std::string> silent;
  for (const auto& [name, node] : state_.nodes)
    if (fell_silent(node, t, started_at_, config_.node_timeout)) silent.push_back(name);
  for (const auto& name : silent) {
    state_.nodes.at(name).responding = false;
    log::warn("node " + name + " is DOWN: not responding for " + std::to_string(config_.node_timeout) + " s");
    record(NodeDownChanged{name, t, true, kNotResponding});  // a drain stays as it was
    end_jobs_on_node(name, JobState::kNodeFail, JobReason::kNodeDown);
  }
}

void Controller::check_time_limits() {
  Time t = now();
  std::vector<JobId> ended;
  // The running jobs' index, not every job: this runs every second, and a queue of 100,000
  // pending jobs made a walk of them all cost the event loop ~10 ms each time.
  for_each_job_in(state_, state_.running, [&](const Job& job) {
    if (job.state != JobState::kRunning || job.time_limit <= 0 || job.suspended) return;
    if (!job.spec.is_batch()) {  // an allocation of srun or salloc: no node enforces its limit
      if (t >= limit_end(job)) ended.push_back(job.id);
      return;
    }
    // The agent enforces limits itself; this is the backstop if its kill went missing.
    if (t > limit_end(job) + config_.kill_wait + 30) send_kill(job, KillReason::kTimeout);
  });
  for (JobId id : ended) {
    log::info("job " + std::to_string(id.value) + " reached its time limit; its allocation ends");
    record(JobEnded{id, t, JobState::kTimeout, 0, 0, JobReason::kTimeLimit});
  }
}

}  // namespace hq::cmd
