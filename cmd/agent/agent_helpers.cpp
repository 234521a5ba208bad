// The agent's operator programs: the periodic health check, and each job's prolog (before
// the batch script; a failure requeues the job and drains the node) and epilog (after
// it; a failure drains the node). Programs run through HelperRunner (helpers.hpp); they
// come from flags, or from the controller's [agents] (apply_settings).
// Agent event-loop thread only.
#include <ctime>
#include <filesystem>
#include <tuple>

#include "cmd/agent/agent.hpp"
#include "cmd/agent/launcher.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "net/clock.hpp"
#include "net/convert.hpp"
#include "net/log.hpp"

namespace hq::cmd {

// What operator programs are told about the job, in Slurm's names and hq's twins.
std::vector<std::string> Agent::helper_env(const Job& job) const {
  std::vector<std::string> env;
  auto both = [&](const std::string& key, const std::string& value) {
    env.push_back("SLURM_" + key + "=" + value);
    env.push_back("HQ_" + key + "=" + value);
  };
  both("JOB_ID", std::to_string(job.id.value));
  both("JOB_USER", job.spec.user);
  both("JOB_UID", std::to_string(job.spec.uid));
  both("JOB_GID", std::to_string(job.spec.gid));
  both("JOB_PARTITION", job.partition);
  both("JOB_NAME", job.spec.name);
  both("RESTART_COUNT", std::to_string(job.restart_count));
  env.push_back("SLURMD_NODENAME=" + opts_.name);
  env.push_back("HQ_NODENAME=" + opts_.name);
  return env;
}

void Agent::apply_settings(const pb::RegisterAck& ack) {
  std::string dir = opts_.spool_dir + "/config";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ack.config_toml().empty()) (void)write_file_atomic(dir + "/config.toml", ack.config_toml(), 0600);
  const pb::AgentSettings& a = ack.settings();
  for (auto [name, body, field] : {std::tuple{"health-check", &a.health_check(), &opts_.health_check},
                                   std::tuple{"prolog", &a.prolog(), &opts_.prolog},
                                   std::tuple{"epilog", &a.epilog(), &opts_.epilog}}) {
    if (opts_.set_locally.count(name)) continue;
    std::string path = dir + "/" + name;
    if (body->empty()) {
      field->clear();
      continue;
    }
    if (Status s = write_file_atomic(path, *body, 0700); !s) {
      log::warn("cannot cache the controller's " + std::string(name) + " program: " + s.message());
      continue;
    }
    *field = path;
  }
  if (!opts_.set_locally.count("health-interval") && a.health_interval() > 0) opts_.health_interval = a.health_interval();
  if (!opts_.set_locally.count("helper-timeout") && a.helper_timeout() > 0) opts_.helper_timeout = a.helper_timeout();
  if (!opts_.set_locally.count("job-pids-max")) opts_.job_pids_max = a.job_pids_max();
  opts_.fence_timeout = a.fence_timeout() > 0 ? a.fence_timeout() : 0;
}

void Agent::prolog_done(uint64_t id, const pb::LaunchJob& l, const HelperOutcome& outcome) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  RunningJob waiting = std::move(it->second);
  running_.erase(it);
  if (waiting.cancelled || !outcome.ok) {
    JobEnded end{JobId{id}, net::wall_now(), waiting.cancelled ? JobState::kCancelled : JobState::kFailed};
    bool failed = !outcome.ok && !waiting.cancelled;
    if (failed) {
      log::warn("job " + std::to_string(id) + ": prolog failed (" + outcome.message + ")");
      end.reason = JobReason::kPrologFailure;
      end.exit_code = 1;
      send_health(false, "prolog", outcome.message);
    }
    pb::JobEnded e = net::to_pb(end);
    e.set_restart_count(waiting.job.restart_count);
    e.set_prolog_failed(failed);
    report(e);
    return clear_run(opts_.spool_dir, id);
  }
  begin_job(std::move(waiting.job), l, RunningJob{});
}

void Agent::run_epilog(const Job& job) {
  if (opts_.epilog.empty()) return;
  uint64_t id = job.id.value;
  helpers_.run(opts_.epilog, helper_env(job), static_cast<int>(opts_.helper_timeout), [this, id](const HelperOutcome& o) {
    if (o.ok) return;
    log::warn("job " + std::to_string(id) + ": epilog failed (" + o.message + ")");
    send_health(false, "epilog", o.message);
  });
}

void Agent::schedule_health_check(int64_t delay_s) {
  health_timer_ = std::make_unique<asio::steady_timer>(io_, std::chrono::seconds(delay_s));
  health_timer_->async_wait([this](const asio::error_code& ec) {
    if (ec || stopping_) return;
    helpers_.run(opts_.health_check, {"SLURMD_NODENAME=" + opts_.name, "HQ_NODENAME=" + opts_.name},
                 static_cast<int>(opts_.helper_timeout), [this](const HelperOutcome& o) {
                   if (!o.ok) log::warn("health check failed: " + o.message);
                   send_health(o.ok, "health check", o.message);
                   schedule_health_check(std::max<int64_t>(1, opts_.health_interval));
                 });
  });
}

void Agent::send_health(bool ok, const std::string& source, const std::string& message) {
  health_ok_ = ok;
  health_at_ = static_cast<int64_t>(std::time(nullptr));
  if (!conn_ || !conn_->is_open()) return;  // the next check reports again
  pb::Envelope env;
  auto* h = env.mutable_node_health();
  h->set_ok(ok);
  h->set_source(source);
  h->set_message(message);
  conn_->send(env);
}

}  // namespace hq::cmd
