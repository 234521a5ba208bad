// Controller side of HTTP (net/http_server serves the connections): the probes /healthz,
// /livez and /readyz (no token), /metrics (OpenMetrics, core/metrics; a token unless
// [controller] metrics_public), /slurm/v0.0.43/... (rest_api.cpp) and /hq/v1/...
// (hq_api.cpp) for the token's user, and errors in slurmrestd's JSON shape.
// Tokens: hq's own (net/token), as X-SLURM-USER-TOKEN or "Authorization: Bearer".
// Runs on the controller's event-loop thread.
#include "cmd/controller/controller.hpp"
#include "cmd/controller/http_util.hpp"
#include "cmd/controller/web_ui.hpp"
#include "cmd/rest/v0043.hpp"
#include "cmd/users.hpp"
#include "net/clock.hpp"
#include "net/log.hpp"

namespace hq::cmd {
namespace {

net::HttpResponse text(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// The token a request carries: X-SLURM-USER-TOKEN, else a bearer token; "" none.
std::string token_of(const net::HttpRequest& req) {
  if (const std::string* t = req.header("x-slurm-user-token")) return *t;
  if (const std::string* a = req.header("authorization"); a && a->rfind("Bearer ", 0) == 0) return a->substr(7);
  return "";
}

}  // namespace

Result<pb::TokenReply> Controller::http_token(const pb::TokenRequest& req, const net::Identity& who) const {
  constexpr Duration kDefault = 1800, kMost = 86400;  // scontrol token's default lifespan; a day at most
  Duration lifespan = req.lifespan() == 0 ? kDefault : req.lifespan();
  if (lifespan < 1 || lifespan > kMost)
    return invalid("Invalid lifespan: " + std::to_string(req.lifespan()) + " (1 to " + std::to_string(kMost) + " seconds)");
  net::Identity holder = who;
  holder.role = "http";  // good for HTTP requests only: RPC logins refuse it
  auto token = net::mint_token(keyring(), holder, now(), lifespan);
  if (!token) return token.status();
  pb::TokenReply out;
  out.set_token(net::token_text(*token));
  out.set_expires(now() + lifespan);
  out.set_dashboard(dashboard_url_);
  return out;
}

void Controller::count_request(const std::string& type, double seconds) {
  RequestCount& c = requests_[type];
  ++c.count;
  c.seconds += seconds;
}

void Controller::count_event(const Event& event) {
  SchedulerCounters& c = sched_counters_;
  if (std::holds_alternative<JobSubmitted>(event)) ++c.jobs_submitted;
  else if (std::holds_alternative<JobStarted>(event)) ++c.jobs_started;
  else if (const auto* e = std::get_if<JobEnded>(&event)) {
    if (e->state == JobState::kCompleted) ++c.jobs_completed;
    else if (e->state == JobState::kCancelled) ++c.jobs_canceled;
    else if (e->state == JobState::kFailed || e->state == JobState::kNodeFail) ++c.jobs_failed;
  }
}

void Controller::count_pass(bool full, int64_t micros, const Plan& plan) {
  SchedulerCounters& c = sched_counters_;
  c.passes.add(micros, plan.stats.considered);
  constexpr size_t kRecentPasses = 100;
  if (recent_passes_.size() == kRecentPasses) recent_passes_.pop_front();
  recent_passes_.push_back({now(), full, micros, plan.stats.considered, static_cast<int32_t>(plan.starts.size()),
                            static_cast<int32_t>(plan.reservations.size()), static_cast<int32_t>(plan.preemptions.size())});
  if (!full) return;
  c.backfill.add(micros, plan.stats.considered);
  c.bf_started += static_cast<int64_t>(plan.starts.size());
  c.bf_last_time = now();
}

void Controller::metrics_page(std::function<void(const std::string&)> done) {
  if (!metrics_building_ && metrics_made_at_ >= 0 && net::mono_seconds() - metrics_made_at_ < 1.0) return done(metrics_cache_);
  metrics_waiters_.push_back(std::move(done));
  if (metrics_building_) return;
  metrics_building_ = true;
  MetricsInput in;
  in.state = &state_;
  in.sched = sched_counters_;
  in.sched.started_at = started_at_;
  in.rpcs = requests_;
  in.journal_commits = journal_commits_;
  in.now = now();
  std::shared_ptr<const MetricsSnapshot> snapshot = metrics_snapshot(in);  // the part that reads the state
  off_loop_.run([snapshot] { return metrics_text(*snapshot); },
                [this](std::string text) { metrics_built(std::move(text)); });
}

void Controller::metrics_built(std::string text) {
  metrics_cache_ = std::move(text);
  metrics_made_at_ = net::mono_seconds();
  metrics_building_ = false;
  auto waiters = std::move(metrics_waiters_);
  metrics_waiters_.clear();
  for (auto& w : waiters) w(metrics_cache_);
}

void Controller::http(const net::HttpRequest& req, net::HttpRespond respond) {
  double t0 = net::mono_seconds();
  auto done = [this, t0, &respond](const std::string& route, net::HttpResponse r) {
    count_request("http " + route, net::mono_seconds() - t0);
    respond(std::move(r));
  };
  const std::string& path = req.path;
  bool probe = path == "/healthz" || path == "/livez" || path == "/readyz";
  if (probe && req.method != "GET" && req.method != "HEAD") return done(path, http_error(405, "Method not allowed: probes take GET"));
  // Live while the loop answers; ready too: the listener opens only once the state is recovered.
  if (probe) return done(path, text(200, "ok\n"));
  if (path == "/metrics") {
    if (req.method != "GET" && req.method != "HEAD") return done(path, http_error(405, "Method not allowed: /metrics takes GET"));
    if (!config_.controller.metrics_public) {
      net::Identity who;
      if (auto refused = http_caller(req, who)) return done(path, std::move(*refused));
      // Per-user and per-account counts: with private_jobs, for root and operators only.
      if (config_.private_jobs && !is_admin(who))
        return done(path, http_error(403, "Access denied: private_jobs is on: /metrics is for root and operators"));
    }
    return metrics_page([this, t0, respond = std::move(respond)](const std::string& page) {
      net::HttpResponse r;
      r.content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
      r.body = page;
      count_request("http /metrics", net::mono_seconds() - t0);
      respond(std::move(r));
    });
  }
  if (path == "/" || path == "/ui" || path.rfind("/ui/", 0) == 0) return done("ui", web_ui_response(req));
  bool slurm = path.rfind("/slurm/", 0) == 0, hq = path.rfind("/hq/", 0) == 0;
  if (!slurm && !hq) return done("other", http_error(404, "Unable to find path " + path));
  net::Identity who;
  const char* route = slurm ? "slurm" : "hq";
  if (auto refused = http_caller(req, who)) return done(route, std::move(*refused));
  // Answered now or later (once durable): counted when answered.
  net::HttpRespond answer = [this, t0, route, respond = std::move(respond)](net::HttpResponse r) {
    count_request(std::string("http ") + route, net::mono_seconds() - t0);
    respond(std::move(r));
  };
  if (slurm) rest(req, who, std::move(answer));
  else hq_api(req, who, std::move(answer));
}

std::optional<net::HttpResponse> Controller::http_caller(const net::HttpRequest& req, net::Identity& who) const {
  std::string token = token_of(req);
  if (token.empty()) return http_error(401, "Authentication required: a token (hq token) as X-SLURM-USER-TOKEN");
  auto raw = net::token_from_text(token);
  auto verified = raw ? net::verify_token(keyring(), *raw, now()) : Result<net::Identity>(raw.status());
  if (!verified || verified->role != "http") return http_error(401, "Authentication failure: not a valid token from hq token");
  who = *verified;
  // X-SLURM-USER-NAME, when sent, must name the token's own user: no one acts as another.
  if (const std::string* name = req.header("x-slurm-user-name"); name && *name != user_name(who.uid))
    return http_error(403, "Access denied: X-SLURM-USER-NAME " + *name + " is not the token's user");
  return std::nullopt;
}

}  // namespace hq::cmd
