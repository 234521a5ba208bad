// The cluster configuration as a plain value (loaded from TOML by cmd/config_toml.cpp),
// plus semantic validation that needs no file access. Immutable after load.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/hardware.hpp"
#include "core/sched_config.hpp"
#include "core/status.hpp"
#include "core/time.hpp"
#include "core/topology.hpp"

namespace hq {

// Slurm's partition State=: UP runs and accepts; DOWN accepts but starts nothing;
// DRAIN runs what is queued but accepts nothing new; INACTIVE does neither.
enum class PartitionState { kUp, kDown, kDrain, kInactive };
std::string_view partition_state_name(PartitionState s);
bool parse_partition_state(std::string_view name, PartitionState& out);

enum class PreemptMode { kOff, kCancel, kRequeue };
std::string_view preempt_mode_name(PreemptMode m);
bool parse_preempt_mode(std::string_view name, PreemptMode& out);

struct PartitionConfig {
  std::string name;
  std::string nodes_expr;              // as written: hostlists, feature{NAME}, ALL
  std::vector<std::string> nodes;      // expanded names (in a ClusterState: every member now)
  std::vector<std::string> node_features;  // feature{NAME}: nodes with that feature join
  std::vector<std::string> node_blocks, node_switches;  // block{NAME}, switch{NAME}: by the agents' labels
  bool all_nodes = false;              // ALL: every node joins, dynamic ones too
  bool is_default = false;
  PartitionState state = PartitionState::kUp;
  Duration max_time = kUnlimited;
  Duration default_time = kUnlimited;  // kUnlimited: use max_time
  int32_t max_nodes = 0;               // 0: unlimited
  int32_t min_nodes = 1;
  int32_t priority_tier = 1;           // scheduling and preemption order (higher first)
  int32_t priority_job_factor = 1;     // the partition priority factor (normalised)
  std::vector<std::string> allow_accounts;  // empty: all
  std::vector<std::string> allow_groups;    // group names; empty: all
  int64_t def_mem_per_cpu_mib = 0;     // memory for jobs that ask for none; 0: none
  bool exclusive = false;              // OverSubscribe=EXCLUSIVE: whole nodes per job
  bool exclusive_topo = false;         // ExclusiveTopo=YES: every job as with --exclusive=topo
  std::string topology;                // Topology=NAME (Slurm 25.05): its jobs are placed by that topology ("" the default)
  PreemptMode preempt_mode = PreemptMode::kOff;  // what happens to this partition's jobs when preempted
  Duration grace_time = 0;             // preempted jobs get SIGTERM, then this long before SIGKILL
  std::string qos;                     // QOS=: a QOS whose limits apply to every job here ("" none)
  bool operator==(const PartitionConfig&) const = default;
};

struct NodeConfig {
  std::string names_expr;
  std::vector<std::string> names;      // expanded
  int32_t cpus = 0;                    // 0: take what the agent reports
  int64_t mem_mib = 0;                 // 0: take what the agent reports
  std::vector<std::string> features;
  int32_t weight = 1;                  // lower weights are allocated first
  // The layout `hq node -C --toml` prints (0: not given); cpus must match when given.
  int32_t boards = 0, sockets = 0, cores_per_socket = 0, threads_per_core = 0;
  std::vector<GresCount> gres;         // GPUs by type ("gres = \"gpu:h100:8\"")
  int32_t restricted_cores_per_gpu = 0;  // RestrictedCoresPerGPU: cores per GPU kept for GPU jobs
  bool operator==(const NodeConfig&) const = default;
};

// What node agents take from the controller at registration (configless: `[agents]`).
// Programs are paths on the controller host; their contents are sent to the agents.
struct AgentSettings {
  std::string health_check, prolog, epilog;  // "" = none
  Duration health_interval = 60;
  Duration helper_timeout = 60;
  int64_t job_pids_max = 0;
};

struct ControllerConfig {
  std::string host = "127.0.0.1";
  int32_t port = 6817;                 // 0: pick a free port (written to state_dir)
  std::string state_dir = "/var/lib/hq";
  std::string auth_socket;             // token service; empty: <state_dir>/auth.sock
  // Clients on the controller's host: the kernel says who asks (no TLS, no token); empty:
  // <state_dir>/client.sock, "none": not served.
  std::string client_socket;
  // HTTP (docs/observability.md): /metrics, probes, REST. -1: off; 0: any free port (written
  // to <state_dir>/http.addr). HTTPS with the controller's certificate, or plain HTTP when
  // `http_plain` (then only on 127.0.0.1). `metrics_public`: /metrics needs no token.
  int32_t http_port = -1;
  std::string http_host;               // "" the controller's host
  bool http_plain = false;
  bool metrics_public = false;
  bool operator==(const ControllerConfig&) const = default;
};

// [accounting]: where job records go (docs/accounting.md). "internal": an SQLite store
// inside the controller process (`path`, default <state_dir>/accounting.db); "remote": an
// `hq accounting` daemon at host:port (which itself keeps `path`); "none": no accounting
// (sacct says so). `enforce`: associations, limits, qos (docs/accounting.md).
struct AccountingConfig {
  std::string storage = "internal";
  std::string path;
  std::string host;     // "remote": where the store listens (the daemon: its address to listen on)
  int32_t port = 6819;  // Slurm's AccountingStoragePort default
  std::string enforce;  // Slurm's AccountingStorageEnforce words (core/acct_policy.hpp); "": none
  bool operator==(const AccountingConfig&) const = default;
};

struct ClusterConfig {
  std::string name = "hq";
  std::string keys_dir = "/etc/hq";    // ca.pem, ca.key, controller.pem/.key, secret
  std::vector<std::string> operators;  // user names that may act on every job (root always may)
  bool allow_root_jobs = false;        // may jobs run as uid 0?
  bool private_jobs = false;           // users see only their own jobs (root/operators see all)
  ControllerConfig controller;
  Duration node_timeout = 300;         // Slurm's SlurmdTimeout default
  bool dynamic_nodes = true;           // agents the config does not declare may join
  int32_t return_to_service = 1;       // Slurm's ReturnToService: 0 = a silent node stays DOWN until resumed
  AgentSettings agents;                // [agents]: served to every node agent
  std::string text;                    // the file as read (served to agents, who cache it)
  Duration handshake_timeout = 10;     // TLS + protocol handshake must finish within this
  Duration client_idle_timeout = 300;  // a client connection silent this long is closed
  int32_t max_connections = 20000;     // all connections at once (agents included)
  int32_t max_connections_per_peer = 1024;  // from one address
  Duration heartbeat_interval = 30;
  // An agent that has heard nothing from the controller this long kills its jobs, so that a
  // partitioned node cannot run a job the controller requeued elsewhere (node_timeout).
  // 0: off (Slurm's behaviour: jobs outlive any controller outage). See docs/robustness.md.
  Duration fence_timeout = 0;
  Duration kill_wait = 30;             // grace between SIGTERM and SIGKILL
  // Slurm's InactiveLimit: an allocation of srun or salloc (outside a job) whose holder has
  // not been heard from this long ends TIMEOUT (reason InactiveLimit). 0: never (Slurm's
  // default); at most 65533.
  Duration inactive_limit = 0;
  Duration min_job_age = 300;          // finished jobs stay visible this long
  int32_t snapshot_every = 10000;      // journal events between snapshots
  int32_t max_array_size = 1001;       // array indices must be below this
  std::string mail_prog = "/usr/sbin/sendmail";  // job mail, `MAILPROG -t` with headers on stdin
  SchedulerConfig scheduler;
  AccountingConfig accounting;
  std::vector<PartitionConfig> partitions;
  std::vector<NodeConfig> nodes;
  TopologyConfig topology;             // [topology], or the cluster default [[topology]] (docs/topology.md)
  std::vector<TopologyConfig> other_topologies;  // the other [[topology]] tables, in config order
};

// What `scontrol reconfigure` cannot change in a running controller, named ("nodes",
// "partitions", "[controller]", ...): those are read when it starts. Empty: `to` may
// replace `from` live.
std::vector<std::string> settings_needing_restart(const ClusterConfig& from, const ClusterConfig& to);

// Cross-field checks: partitions name known nodes, one default, unique names.
Status validate_config(const ClusterConfig& c);

// Parses a partition's `nodes`: comma-separated hostlists, `feature{NAME}`,
// `block{NAME}`, `switch{NAME}` and `ALL`.
Status parse_partition_nodes(std::string_view expr, PartitionConfig& p);
// Whether a node of this name, features and topology labels belongs to the partition.
bool partition_wants(const PartitionConfig& p, const std::string& node, const std::vector<std::string>& features,
                     const std::string& block = "", const std::string& switch_name = "");
// The same without the name: ALL, feature{}, block{}, switch{} only.
bool partition_wants_by_function(const PartitionConfig& p, const std::vector<std::string>& features,
                                 const std::string& block = "", const std::string& switch_name = "");

const PartitionConfig* find_partition(const ClusterConfig& c, const std::string& name);
const PartitionConfig* find_partition(const std::vector<PartitionConfig>& parts, const std::string& name);
const PartitionConfig* default_partition(const ClusterConfig& c);
const NodeConfig* find_node_config(const ClusterConfig& c, const std::string& node);

// One group of identical nodes and one default partition over them (tests, benchmarks).
ClusterConfig uniform_cluster_config(const std::vector<std::string>& names, int32_t cpus, int64_t mem_mib,
                                     const std::string& partition);

}  // namespace hq
