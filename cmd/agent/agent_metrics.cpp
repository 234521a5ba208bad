// A node agent's own /metrics (hq node --metrics-port): OpenMetrics about this node as its
// agent sees it (CPUs, memory, GPUs, whether it reaches the controller, its last health
// check) and each job here with its cgroup's usage (CPU time, peak memory, OOM kills),
// plus /healthz and /livez. Plain HTTP on 127.0.0.1, else HTTPS with the node's own
// certificate (the step listener's); a token from `hq token` (checked with the cluster
// keyring, as the controller checks it) unless --metrics-public. Runs on the agent's loop.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "cmd/agent/agent.hpp"
#include "cmd/agent/peer_net.hpp"
#include "cmd/commands.hpp"
#include "cmd/users.hpp"
#include "cmd/paths.hpp"
#include "net/log.hpp"
#include "net/stream.hpp"

namespace hq::cmd {
namespace {

net::HttpResponse text(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// A label value as OpenMetrics quotes it.
std::string label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

// A value: whole numbers as integers (bytes and counts stay exact), others with 6 decimals.
std::string number(double v) {
  char buf[64];
  if (std::floor(v) == v && std::fabs(v) < 9e15) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else std::snprintf(buf, sizeof buf, "%.6f", v);
  return buf;
}

// One sample line: name{node="n1"[,job="12",user="alice"]} value.
class Page {
 public:
  explicit Page(const std::string& node) : node_(label(node)) {}
  void family(const char* name, const char* type, const char* help) {
    out_ << "# TYPE " << name << " " << type << "\n# HELP " << name << " " << help << "\n";
  }
  void node(const char* name, double v) { out_ << name << "{node=\"" << node_ << "\"} " << number(v) << "\n"; }
  void job(const char* name, uint64_t id, const std::string& user, double v) {
    out_ << name << "{node=\"" << node_ << "\",job=\"" << id << "\",user=\"" << label(user) << "\"} " << number(v) << "\n";
  }
  std::string done() {
    out_ << "# EOF\n";
    return out_.str();
  }

 private:
  std::string node_;
  std::ostringstream out_;
};

// The token a request carries (X-SLURM-USER-TOKEN or Bearer), "" none.
std::string token_of(const net::HttpRequest& req) {
  if (const std::string* t = req.header("x-slurm-user-token")) return *t;
  if (const std::string* a = req.header("authorization"); a && a->rfind("Bearer ", 0) == 0) return a->substr(7);
  return "";
}

}  // namespace

void Agent::start_metrics() {
  if (opts_.metrics_port < 0) return;
  bool plain = opts_.metrics_host == "127.0.0.1" || opts_.metrics_host == "localhost";
  if (!plain) {
    auto cert = node_certificate(opts_.spool_dir, opts_.name);
    auto ctx = cert ? net::make_tls_server_context(cert->cert_pem, cert->key_pem) : Result<std::shared_ptr<net::TlsContext>>(cert.status());
    if (!ctx) return log::warn("no /metrics: " + ctx.status().message());
    metrics_tls_ = *ctx;
  }
  asio::error_code ec;
  auto addr = asio::ip::make_address(opts_.metrics_host == "localhost" ? "127.0.0.1" : opts_.metrics_host, ec);
  if (ec) return log::warn("no /metrics: bad --metrics-host " + opts_.metrics_host);
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(io_);
  asio::ip::tcp::endpoint at(addr, static_cast<uint16_t>(opts_.metrics_port));
  acceptor->open(at.protocol(), ec);
  if (!ec) acceptor->set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor->bind(at, ec);
  if (!ec) acceptor->listen(64, ec);
  if (ec) return log::warn("no /metrics on " + opts_.metrics_host + ":" + std::to_string(opts_.metrics_port) + ": " + ec.message());
  std::string where = opts_.metrics_host + ":" + std::to_string(acceptor->local_endpoint(ec).port());
  if (Status s = write_file_atomic(opts_.spool_dir + "/metrics.addr", where + "\n", 0644); !s) log::warn(s.message());
  log::info(std::string("/metrics over ") + (plain ? "HTTP" : "HTTPS") + " on " + where);
  metrics_acceptor_ = std::move(acceptor);
  asio::co_spawn(io_, [this]() -> asio::awaitable<void> {
    constexpr int kMostConnections = 32;  // scrapers are few; a flood of sockets is refused
    auto open = std::make_shared<int>(0);
    while (metrics_acceptor_ && metrics_acceptor_->is_open()) {
      asio::error_code aec;
      auto socket = co_await metrics_acceptor_->async_accept(asio::redirect_error(asio::use_awaitable, aec));
      if (aec == asio::error::operation_aborted) break;
      if (aec) continue;
      if (*open >= kMostConnections) {
        socket.close(aec);
        continue;
      }
      ++*open;
      auto stream = metrics_tls_ ? net::make_tls_stream(std::move(socket), metrics_tls_) : net::make_tcp_stream(std::move(socket));
      net::HttpHandler handler = [this](const net::HttpRequest& req, net::HttpRespond respond) { serve_metrics(req, std::move(respond)); };
      asio::co_spawn(io_, net::serve_http(std::move(stream), std::move(handler)), [open](std::exception_ptr) { --*open; });
    }
  }, asio::detached);
}

void Agent::serve_metrics(const net::HttpRequest& req, net::HttpRespond respond) {
  if (req.method != "GET" && req.method != "HEAD") return respond(text(405, "Method not allowed: GET\n"));
  if (req.path == "/healthz" || req.path == "/livez") return respond(text(200, "ok\n"));
  if (req.path != "/metrics") return respond(text(404, "Not found: " + req.path + "\n"));
  if (!opts_.metrics_public) {
    std::string token = token_of(req);
    auto raw = net::token_from_text(token);
    auto who = raw ? net::verify_token(keys_.keys(), *raw, static_cast<int64_t>(std::time(nullptr)))
                   : Result<net::Identity>(raw.status());
    if (token.empty() || !who || who->role != "http")
      return respond(text(401, "Authentication required: a token from hq token as X-SLURM-USER-TOKEN\n"));
  }
  net::HttpResponse r = text(200, metrics_page());
  r.content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
  respond(std::move(r));
}

std::string Agent::metrics_page() const {
  Page p(opts_.name);
  p.family("hq_node_info", "gauge", "The agent's version (1)");
  p.node("hq_node_info", 1);
  p.family("hq_node_cpus", "gauge", "CPUs of this node");
  p.node("hq_node_cpus", host_.cpus);
  p.family("hq_node_memory_bytes", "gauge", "Memory of this node (MB, as Slinky's memory metrics)");
  p.node("hq_node_memory_bytes", static_cast<double>(host_.mem_mib));
  p.family("hq_node_gpus", "gauge", "GPUs of this node");
  p.node("hq_node_gpus", static_cast<double>(host_.gpus.size()));
  p.family("hq_node_controller_connected", "gauge", "Whether the agent is connected to the controller (1) or not (0)");
  p.node("hq_node_controller_connected", conn_ && conn_->is_open() ? 1 : 0);
  p.family("hq_node_health_ok", "gauge", "Whether the last health check, prolog or epilog passed (1) or failed (0)");
  p.node("hq_node_health_ok", health_ok_ ? 1 : 0);
  p.family("hq_node_health_timestamp_seconds", "gauge", "When the last health check, prolog or epilog ran (0: none yet)");
  p.node("hq_node_health_timestamp_seconds", static_cast<double>(health_at_));
  int64_t cpus = 0;
  for (const auto& [id, rj] : running_) cpus += static_cast<int64_t>(rj.cpus.size());
  for (const auto& [id, hj] : held_) cpus += static_cast<int64_t>(hj.cpus.size());
  p.family("hq_node_jobs", "gauge", "Jobs whose batch script runs here");
  p.node("hq_node_jobs", static_cast<double>(running_.size()));
  p.family("hq_node_job_shares", "gauge", "Jobs whose script runs on another node and hold a share here (for their steps)");
  p.node("hq_node_job_shares", static_cast<double>(held_.size()));
  p.family("hq_node_cpus_alloc", "gauge", "CPUs this node's jobs hold");
  p.node("hq_node_cpus_alloc", static_cast<double>(cpus));
  struct Row {
    uint64_t id;
    std::string user;
    size_t cpus;
    CgroupUsage use;
  };
  std::vector<Row> rows;
  for (const auto& [id, rj] : running_) rows.push_back({id, rj.job.spec.user.str(), rj.cpus.size(), rj.cgroup.usage()});
  for (const auto& [id, hj] : held_) rows.push_back({id, hj.job.spec.user.str(), hj.cpus.size(), hj.cgroup.usage()});
  p.family("hq_job_cpus", "gauge", "CPUs a job holds on this node");
  for (const Row& r : rows) p.job("hq_job_cpus", r.id, r.user, static_cast<double>(r.cpus));
  p.family("hq_job_cgroup_cpu_seconds", "counter", "CPU time of a job's processes on this node (its cgroup's)");
  for (const Row& r : rows)
    if (r.use.cpu_time_usec >= 0) p.job("hq_job_cgroup_cpu_seconds_total", r.id, r.user, r.use.cpu_time_usec / 1e6);
  p.family("hq_job_cgroup_memory_peak_bytes", "gauge", "Peak memory of a job's processes on this node (its cgroup's, bytes)");
  for (const Row& r : rows)
    if (r.use.peak_mem_bytes >= 0) p.job("hq_job_cgroup_memory_peak_bytes", r.id, r.user, static_cast<double>(r.use.peak_mem_bytes));
  p.family("hq_job_cgroup_oom_kills", "counter", "Processes of a job the kernel killed for memory on this node");
  for (const Row& r : rows) p.job("hq_job_cgroup_oom_kills_total", r.id, r.user, static_cast<double>(r.use.oom_kills));
  return p.done();
}

}  // namespace hq::cmd
