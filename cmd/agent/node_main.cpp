// `hq node`: option parsing and wiring for the node agent.
#include <CLI/CLI.hpp>
#include "cmd/cli_parse.hpp"
#include <asio/signal_set.hpp>
#include <cstdio>
#include <filesystem>
#include <set>
#include <unistd.h>

#include "cmd/agent/agent.hpp"
#include "cmd/client/steps.hpp"
#include "cmd/commands.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "core/std_streams.hpp"
#include "net/log.hpp"

namespace hq::cmd {

// This agent's directory name in the cgroup tree: its node name and a short hash of its
// spool directory, so agents sharing a host (tests, several clusters) never meet.
std::string cgroup_subtree(const AgentOptions& opts) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : opts.spool_dir) h = (h ^ c) * 1099511628211ULL;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(h & 0xffffffffu));
  return opts.name + "." + hex;
}

int run_agent(const AgentOptions& opts, const HostInfo& host, const std::string& log_file) {
  log::init("node", log_file);
  std::error_code ec;
  std::filesystem::create_directories(opts.spool_dir, ec);
  if (ec) {
    hq::cerr() << "hq node: cannot create spool dir " << opts.spool_dir << ": " << ec.message() << "\n";
    return 1;
  }
  log::info("node agent " + opts.name + " (" + std::to_string(host.cpus) + " CPUs, " + std::to_string(host.mem_mib) +
            " MiB) starting; controller " + opts.controller.str() + ", pid " + std::to_string(getpid()));
  auto cgroups = Cgroups::open(opts.cgroup_root, opts.cgroup_mode, cgroup_subtree(opts));
  if (!cgroups) {
    hq::cerr() << "hq node: " << cgroups.status().message() << "\n";
    return 1;
  }
  if (cgroups->mode() == CgroupMode::kNone)
    log::warn("no usable cgroup hierarchy under " + opts.cgroup_root +
              ": jobs are tracked by process group only (no CPU or memory confinement, daemonized processes may survive)");
  else log::info("job confinement: " + cgroups->describe());
  asio::io_context io(1);
  Agent agent(io, opts, host, std::move(cgroups).value());
  agent.start();
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const asio::error_code&, int sig) {
    log::info("signal " + std::to_string(sig) + ": stopping");
    agent.stop();
    io.stop();
  });
  io.run();
  return 0;
}

// `hq node -C`: what this node has, as `slurmd -C` prints it (or a [[node]] block).
int print_hardware(bool as_toml) {
  auto hw = probe_hardware(default_probe_root());
  if (!hw) {
    hq::cerr() << "hq node: hardware probe failed: " << hw.status().message() << "\n";
    return 1;
  }
  for (const auto& w : hw->warnings) hq::cerr() << "hq node: warning: " << w << "\n";
  hq::cout() << (as_toml ? node_toml(*hw) : slurmd_report(*hw));
  return 0;
}

int run_node(const Args& args) {
  if (args.size() >= 2 && (args[1] == "list-jobs" || args[1] == "list-steps" || args[1] == "list-pids"))
    return run_node_list(args[1].substr(5), {args.begin() + 2, args.end()});
  forbid_hwloc_plugins();  // before the probe (and PMIx) first use hwloc
  CLI::App app{"hq node: the node agent (probes hardware, registers, launches jobs)"};
  std::string controller, name, spool, log_file, ca, secret;
  app.add_option("--secret", secret, "cluster secret (keyring) file (default: HQ_SECRET_FILE, /etc/hq/secret)");
  bool plaintext = false;
  app.add_option("--ca", ca, "cluster CA certificate (default: HQ_CA_FILE, /etc/hq/ca.pem)");
  app.add_flag("--insecure-plaintext", plaintext, "no TLS (debugging only)");
  app.add_option("--controller", controller, "controller HOST[:PORT] (or HQ_CONTROLLER)");
  app.add_option("--name", name, "node name (default: short hostname)");
  app.add_option("--state-dir", spool, "agent state and spool directory");
  app.add_option("--log-file", log_file, "log to this file instead of stderr");
  bool print_config = false, as_toml = false;
  std::string probe_root;
  app.add_flag("-C", print_config, "print the detected hardware as slurmd -C does, and exit");
  app.add_flag("--toml", as_toml, "with -C: print a [[node]] block for the cluster config");
  std::string cgroup_mode = "auto", cgroup_root = "/sys/fs/cgroup";
  app.add_option("--cgroup", cgroup_mode, "job confinement: auto (v2, else v1, else none), v1, v2 or none")
      ->envname("HQ_CGROUP");
  app.add_option("--cgroup-root", cgroup_root, "where the cgroup hierarchies are mounted")->envname("HQ_CGROUP_ROOT");
  std::string run_dir = geteuid() == 0 ? "/run/hq" : "";
  app.add_option("--run-dir", run_dir, "where clients on this host find a token service, the controller's address "
                                       "and the CA (default /run/hq as root; \"\" for none)")
      ->envname("HQ_RUN_DIR");
  std::string health_check, prolog, epilog;
  int64_t health_interval = 60, helper_timeout = 60;
  app.add_option("--health-check", health_check, "program run every --health-interval; failure drains the node")
      ->envname("HQ_HEALTH_CHECK");
  app.add_option("--health-interval", health_interval, "seconds between health checks")
      ->envname("HQ_HEALTH_INTERVAL")
      ->check(CLI::Range(1, 86400));
  app.add_option("--prolog", prolog, "program run before each job; failure requeues the job and drains the node")
      ->envname("HQ_PROLOG");
  app.add_option("--epilog", epilog, "program run after each job; failure drains the node")->envname("HQ_EPILOG");
  app.add_option("--helper-timeout", helper_timeout, "seconds before a health check, prolog or epilog counts as failed")
      ->check(CLI::Range(1, 86400));
  bool kill_jobs_on_exit = false;
  app.add_flag("--kill-jobs-on-exit", kill_jobs_on_exit,
               "kill running jobs when the agent stops (default: leave them to the next agent, which re-adopts them)")
      ->envname("HQ_KILL_JOBS_ON_EXIT");
  std::string block, switch_name;
  app.add_option("--block", block,
                 "this node's topology block label: BLOCK for the cluster default topology, TOPOLOGY:BLOCK for another, "
                 "comma-separated (partitions may use block{BLOCK})");
  app.add_option("--switch", switch_name,
                 "this node's leaf switch label: SWITCH, or TOPOLOGY:SWITCH, comma-separated (partitions may use switch{SWITCH})");
  std::vector<std::string> features;
  app.add_option("--feature", features, "a feature of this node (repeat, or a,b); used when the config does not declare it")
      ->delimiter(',');
  int64_t job_pids_max = 0;
  app.add_option("--job-pids-max", job_pids_max, "at most this many processes per job (cgroup pids.max; 0: no limit)")
      ->envname("HQ_JOB_PIDS_MAX")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 22));
  uint16_t step_port = 0;
  app.add_option("--step-port", step_port,
                 "port for other nodes' agents starting job steps here (default: any free port; 0: any)")
      ->envname("HQ_STEP_PORT");
  int32_t metrics_port = -1;
  app.add_option("--metrics-port", metrics_port,
                 "serve this node's /metrics on this port (0: any free one, written to SPOOL/metrics.addr; default: off)")
      ->envname("HQ_METRICS_PORT")
      ->check(CLI::Range(-1, 65535));
  std::string metrics_host = "127.0.0.1";
  app.add_option("--metrics-host", metrics_host,
                 "address for /metrics (default 127.0.0.1: plain HTTP; any other: HTTPS with the node's certificate)")
      ->envname("HQ_METRICS_HOST");
  bool metrics_public = false;
  app.add_flag("--metrics-public", metrics_public, "/metrics without a token (else one from hq token)");
  app.add_option("--probe-root", probe_root, "read procfs/sysfs under this directory (or HQ_PROBE_ROOT; for tests)");
  std::vector<std::string> rest(args.rbegin(), args.rend() - 1);
  try {
    app.parse(rest);
  } catch (const CLI::ParseError& e) {
    return cli_parse_failure(app, e, "hq node");
  }
  if (!probe_root.empty()) setenv("HQ_PROBE_ROOT", probe_root.c_str(), 1);
  if (print_config) return print_hardware(as_toml);
  auto ep = find_controller(controller);
  if (!ep) {
    hq::cerr() << "hq node: " << ep.status().message() << "\n";
    return 1;
  }
  auto host = probe_host();
  if (!host) {
    hq::cerr() << "hq node: hardware probe failed: " << host.status().message() << "\n";
    return 1;
  }
  auto transport = find_transport(ca, plaintext, /*from_node_run_dir=*/false);
  std::string node_name = name.empty() ? host->hostname : name;
  if (spool.empty()) spool = geteuid() == 0 ? "/var/spool/hq/" + node_name : hq_home() + "/node/" + node_name;
  if (!transport && ca.empty()) {
    // Configless join: the CA cached by an earlier start, else fetched from the
    // controller and checked against the cluster secret (Agent::fetch_ca).
    transport = net::Transport{};
    transport->ca_pem = read_small_file(spool + "/ca.pem");
    if (transport->ca_pem.empty()) hq::cerr() << "hq node: no cluster CA here; it will be fetched from the controller\n";
  }
  if (!transport) {
    hq::cerr() << "hq node: " << transport.status().message() << "\n";
    return 1;
  }
  if (transport->plaintext) hq::cerr() << "hq node: warning: --insecure-plaintext: traffic is NOT encrypted\n";
  std::string secret_file = find_secret_file(secret);
  if (auto keyring = load_keyring(secret_file); !keyring) {
    hq::cerr() << "hq node: " << keyring.status().message() << "\n";
    return 1;
  }
  std::set<std::string> set_locally;
  for (const char* o : {"health-check", "health-interval", "prolog", "epilog", "helper-timeout", "job-pids-max"})
    if (app.count(std::string("--") + o) > 0) set_locally.insert(o);
  AgentOptions opts{*ep,        *transport,  secret_file, node_name,     spool,
                    cgroup_mode, cgroup_root, job_pids_max, features, block,  switch_name, run_dir,
                    health_check, prolog, epilog, health_interval, helper_timeout, kill_jobs_on_exit, 0, set_locally, step_port};
  opts.metrics_port = metrics_port;
  opts.metrics_host = metrics_host;
  opts.metrics_public = metrics_public;
  keep_freed_heap(8 << 20);  // a step's buffers kept for the next one
  return run_agent(opts, *host, log_file);
}

}  // namespace hq::cmd
