// scontrol show config: the controller's settings under Slurm 22.05's names, in Slurm's
// order (src/api/config_info.c), then hq's own under hq's names. A Slurm key whose plugin
// or setting hq does not have carries the value Slurm prints when it is off ("(null)",
// "*/none"), which is what hq does; keys that would promise a limit hq does not keep
// (MaxJobCount, MaxJobId, MaxStepCount, MaxTasksPerNode) are left out (docs/slurm-compat.md).
// Runs on the controller's event-loop thread (it reads the config and the next job id).
#include <algorithm>
#include <cctype>

#include "cmd/commands.hpp"
#include "cmd/controller/controller.hpp"
#include "core/block_usage.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"

namespace hq::cmd {
namespace {

std::string secs(Duration d) { return std::to_string(d) + " sec"; }
std::string yes_no(bool b) { return b ? "Yes" : "No"; }

using Add = std::function<void(const std::string&, const std::string&)>;

void accounting_keys(const ClusterConfig& c, const Add& add) {
  bool keeps = c.accounting.storage != "none";
  auto enforce = parse_acct_enforce(c.accounting.enforce);
  add("AccountingStorageBackupHost", "(null)");
  add("AccountingStorageEnforce", enforce ? acct_enforce_name(*enforce) : "none");
  bool remote = c.accounting.storage == "remote";
  add("AccountingStorageHost", remote ? c.accounting.host : keeps ? c.controller.host : "localhost");
  add("AccountingStorageExternalHost", "(null)");
  add("AccountingStorageParameters", "(null)");
  add("AccountingStoragePort", remote  ? std::to_string(c.accounting.port)
                               : keeps ? std::to_string(c.controller.port)
                                       : "0");
  add("AccountingStorageTRES", "cpu,mem,node,billing,gres/gpu");
  add("AccountingStorageType", remote ? "accounting_storage/hq (hq accounting)"
                               : keeps ? "accounting_storage/hq (internal)"
                                       : "accounting_storage/none");
  add("AccountingStorageUser", "root");
  add("AccountingStoreFlags", "(null)");
  add("AcctGatherEnergyType", "acct_gather_energy/none");
  add("AcctGatherFilesystemType", "acct_gather_filesystem/none");
  add("AcctGatherInterconnectType", "acct_gather_interconnect/none");
  add("AcctGatherNodeFreq", "0 sec");
  add("AcctGatherProfileType", "acct_gather_profile/none");
}

void early_keys(const ClusterConfig& c, Time boot, const Add& add) {
  add("AllowSpecResourcesUsage", "No");
  add("AuthAltTypes", "(null)");
  add("AuthAltParameters", "(null)");
  add("AuthInfo", "(null)");
  add("AuthType", "auth/hq (signed tokens)");
  add("BatchStartTimeout", "10 sec");
  add("BcastExclude", "/lib,/usr/lib,/lib64,/usr/lib64");
  add("BcastParameters", "(null)");
  add("BOOT_TIME", net::local_time_text(boot));
  add("BurstBufferType", "(null)");
  add("CliFilterPlugins", "(null)");
  add("ClusterName", c.name);
  add("CommunicationParameters", "(null)");
  add("CompleteWait", "0 sec");
  add("CoreSpecPlugin", "core_spec/none");
  add("CpuFreqDef", "Unknown");
  add("CpuFreqGovernors", "OnDemand,Performance,UserSpace");
  add("CredType", "cred/hq (signed tokens)");
  add("DebugFlags", "(null)");
  add("DefMemPerNode", "UNLIMITED");
  add("DependencyParameters", "(null)");
  add("DisableRootJobs", yes_no(!c.allow_root_jobs));
  add("EioTimeout", "60");
  add("EnforcePartLimits", "ALL");
  add("Epilog", or_null(c.agents.epilog));
  add("EpilogMsgTime", "2000 usec");
  add("EpilogSlurmctld", "(null)");
  add("ExtSensorsType", "ext_sensors/none");
  add("ExtSensorsFreq", "0 sec");
  add("FederationParameters", "(null)");
  add("FirstJobId", "1");
  add("GetEnvTimeout", "2 sec");
  add("GresTypes", "gpu");
  add("GpuFreqDef", "high,memory=high");
  add("GroupUpdateForce", "1");
  add("GroupUpdateTime", "600 sec");
  add("HASH_VAL", "Match");
  add("HealthCheckInterval", c.agents.health_check.empty() ? "0 sec" : secs(c.agents.health_interval));
  add("HealthCheckNodeState", "ANY");
  add("HealthCheckProgram", or_null(c.agents.health_check));
  add("InactiveLimit", secs(c.inactive_limit));
  add("InteractiveStepOptions", "--interactive --preserve-env --pty $SHELL");
}

void job_keys(const ClusterConfig& c, uint64_t next_job_id, const Add& add) {
  add("JobAcctGatherFrequency", "30");
  add("JobAcctGatherType", "jobacct_gather/cgroup");
  add("JobAcctGatherParams", "(null)");
  add("JobCompHost", "localhost");
  add("JobCompLoc", "/var/log/slurm_jobcomp.log");
  add("JobCompPort", "0");
  add("JobCompType", "jobcomp/none");
  add("JobCompUser", "root");
  add("JobContainerType", "job_container/none");
  add("JobCredentialPrivateKey", "(null)");
  add("JobCredentialPublicCertificate", "(null)");
  add("JobDefaults", "(null)");
  add("JobFileAppend", "0");
  add("JobRequeue", "1");
  add("JobSubmitPlugins", "(null)");
  add("KillOnBadExit", "0");
  add("KillWait", secs(c.kill_wait));
  add("LaunchParameters", "(null)");
  add("LaunchType", "launch/slurm");
  add("Licenses", "(null)");
  add("LogTimeFormat", "iso8601_ms");
  add("MailDomain", "(null)");
  add("MailProg", c.mail_prog);
  add("MaxArraySize", std::to_string(c.max_array_size));
  add("MaxDBDMsgs", "0");
  add("MaxMemPerNode", "UNLIMITED");
  size_t nodes = 0;
  for (const auto& n : c.nodes) nodes += n.names.size();
  add("MaxNodeCount", std::to_string(nodes));
  add("MCSPlugin", "mcs/none");
  add("MCSParameters", "(null)");
  add("MessageTimeout", "10 sec");
  add("MinJobAge", secs(c.min_job_age));
  add("MpiDefault", "none");
  add("MpiParams", "(null)");
  add("MULTIPLE_SLURMD", "Yes");
  add("NEXT_JOB_ID", std::to_string(next_job_id));
  add("NodeFeaturesPlugins", "(null)");
  add("OverTimeLimit", "0 min");
  add("PluginDir", "(null)");
  add("PlugStackConfig", "(null)");
  add("PowerParameters", "(null)");
  add("PowerPlugin", "");
}

// The cluster's PreemptMode: the first partition's that preempts (hq sets it per partition).
std::string preempt_mode(const ClusterConfig& c) {
  if (!c.scheduler.preempt_partition_prio) return "OFF";
  for (const auto& p : c.partitions)
    if (p.preempt_mode != PreemptMode::kOff) return std::string(preempt_mode_name(p.preempt_mode));
  return "OFF";
}

void priority_keys(const ClusterConfig& c, const Add& add) {
  const SchedulerConfig& s = c.scheduler;
  add("PreemptMode", preempt_mode(c));
  add("PreemptType", s.preempt_partition_prio ? "preempt/partition_prio" : "preempt/none");
  add("PreemptExemptTime", format_limit(s.preempt_exempt_time));
  add("PrEpParameters", "(null)");
  add("PrEpPlugins", "prep/script");
  add("PriorityParameters", "(null)");
  add("PrioritySiteFactorParameters", "(null)");
  add("PrioritySiteFactorPlugin", "(null)");
  const PriorityWeights& w = s.weights;
  add("PriorityDecayHalfLife", format_limit(w.decay_half_life));
  add("PriorityCalcPeriod", format_limit(w.calc_period));
  add("PriorityFavorSmall", yes_no(w.favor_small));
  add("PriorityFlags", w.fair_share_classic ? "NO_FAIR_TREE" : "");
  add("PriorityMaxAge", format_limit(w.max_age));
  std::string reset(usage_reset_name(w.usage_reset));  // Slurm prints it in capitals
  std::transform(reset.begin(), reset.end(), reset.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  add("PriorityUsageResetPeriod", reset);
  add("PriorityType", "priority/multifactor");
  add("PriorityWeightAge", std::to_string(w.age));
  add("PriorityWeightAssoc", "0");
  add("PriorityWeightFairShare", std::to_string(w.fairshare));
  add("PriorityWeightJobSize", std::to_string(w.job_size));
  add("PriorityWeightPartition", std::to_string(w.partition));
  add("PriorityWeightQOS", std::to_string(w.qos));
  add("PriorityWeightTRES", "(null)");
}

void late_keys(const ClusterConfig& c, const Add& add) {
  const SchedulerConfig& s = c.scheduler;
  add("PrivateData", c.private_jobs ? "jobs" : "none");
  add("ProctrackType", "proctrack/cgroup");
  add("Prolog", or_null(c.agents.prolog));
  add("PrologEpilogTimeout", std::to_string(c.agents.helper_timeout));
  add("PrologSlurmctld", "(null)");
  add("PrologFlags", "(null)");
  add("PropagatePrioProcess", "0");
  add("PropagateResourceLimits", "NONE");
  add("PropagateResourceLimitsExcept", "(null)");
  for (const char* k : {"RebootProgram", "ReconfigFlags", "RequeueExit", "RequeueExitHold", "ResumeFailProgram",
                        "ResumeProgram"})
    add(k, "(null)");
  add("ResumeRate", "300 nodes/min");
  add("ResumeTimeout", "60 sec");
  add("ResvEpilog", "(null)");
  add("ResvOverRun", "0 min");
  add("ResvProlog", "(null)");
  add("ReturnToService", std::to_string(c.return_to_service));
  add("RoutePlugin", "route/default");
  add("SchedulerParameters", "bf_interval=" + std::to_string(s.bf_interval) + ",bf_window=" +
                                 std::to_string(s.bf_window / 60) + ",bf_resolution=" + std::to_string(s.bf_resolution) +
                                 ",bf_max_job_test=" + std::to_string(s.bf_max_job_test) +
                                 ",default_queue_depth=" + std::to_string(s.default_queue_depth) +
                                 ",sched_interval=" + std::to_string(s.sched_interval));
  add("SchedulerTimeSlice", "30 sec");
  add("SchedulerType", s.policy == SchedPolicy::kBackfill ? "sched/backfill" : "sched/builtin");
  add("ScronParameters", "(null)");
  add("SelectType", "select/cons_tres");
  add("SelectTypeParameters", "CR_CPU_MEMORY");
}

void daemon_keys(const ClusterConfig& c, const Add& add) {
  add("SlurmUser", "root(0)");
  add("SlurmctldAddr", "(null)");
  add("SlurmctldDebug", "info");
  add("SlurmctldHost[0]", c.controller.host);
  add("SlurmctldLogFile", "(null)");
  add("SlurmctldPort", std::to_string(c.controller.port));
  for (const char* k : {"SlurmctldSyslogDebug", "SlurmctldPrimaryOffProg", "SlurmctldPrimaryOnProg"}) add(k, "(null)");
  add("SlurmctldTimeout", "120 sec");
  add("SlurmctldParameters", "(null)");
  add("SlurmdDebug", "info");
  add("SlurmdLogFile", "(null)");
  add("SlurmdParameters", "(null)");
  add("SlurmdPidFile", "(null)");
  add("SlurmdPort", "0");
  add("SlurmdSpoolDir", "(null)");
  add("SlurmdSyslogDebug", "(null)");
  add("SlurmdTimeout", secs(c.node_timeout));
  add("SlurmdUser", "root(0)");
  add("SlurmSchedLogFile", "(null)");
  add("SlurmSchedLogLevel", "0");
  add("SlurmctldPidFile", "(null)");
  add("SlurmctldPlugstack", "(null)");
  add("SLURM_CONF", "(null)");
  add("SLURM_VERSION", "22.05.8");
  add("SrunEpilog", "(null)");
  add("SrunPortRange", "0-0");
  add("SrunProlog", "(null)");
  add("StateSaveLocation", c.controller.state_dir);
  for (const char* k : {"SuspendExcNodes", "SuspendExcParts", "SuspendProgram"}) add(k, "(null)");
  add("SuspendRate", "60 nodes/min");
  add("SuspendTime", "INFINITE");
  add("SuspendTimeout", "30 sec");
  add("SwitchParameters", "(null)");
  add("SwitchType", "switch/none");
  add("TaskEpilog", "(null)");
  add("TaskPlugin", "task/cgroup,task/affinity");
  add("TaskPluginParam", "(null type)");
  add("TaskProlog", "(null)");
  add("TCPTimeout", "2 sec");
  add("TmpFS", "/tmp");
  add("TopologyParam", "(null)");
  add("TopologyPlugin", "topology/none");
  add("TrackWCKey", "No");
  add("TreeWidth", "50");
  add("UsePam", "No");
  add("UnkillableStepProgram", "(null)");
  add("UnkillableStepTimeout", "60 sec");
  add("VSizeFactor", "0 percent");
  add("WaitTime", "0 sec");
  add("X11Parameters", "(null)");
}

}  // namespace

void Controller::add_config(pb::NodesReply& out) const {
  const ClusterConfig& c = config_;
  Add add = [&](const std::string& key, const std::string& value) {
    auto* e = out.add_config();
    e->set_key(key);
    e->set_value(value);
  };
  accounting_keys(c, add);
  early_keys(c, started_at_, add);
  job_keys(c, state_.next_job_id, add);
  priority_keys(c, add);
  late_keys(c, add);
  daemon_keys(c, add);
  // hq's own
  add("HqVersion", kHqVersion);
  add("HqSchedulerPolicy", std::string(sched_policy_name(c.scheduler.policy)));
  add("HqDynamicNodes", c.dynamic_nodes ? "yes" : "no");
  add("HqFenceTimeout", secs(c.fence_timeout));
  add("HqHeartbeatInterval", secs(c.heartbeat_interval));
  add("HqPrivateJobs", c.private_jobs ? "yes" : "no");
  add("HqSnapshotEvery", std::to_string(c.snapshot_every));
}

void Controller::add_topology(const std::string& name, pb::NodesReply& out) const {
  const TopologyConfig* config = topology_named(state_, name);
  if (!config) config = &state_.topology;
  out.set_topology_name(config->name);
  if (SwitchTree tree = switch_tree_of(state_, *config); tree.active()) {  // topology/tree: its lines, no blocks
    for (auto& line : tree.show_lines()) out.add_topology(std::move(line));
    return;
  }
  BlockTopology topo = block_topology_of(state_, *config);
  for (auto& line : topo.show_lines()) out.add_topology(std::move(line));
  for (const BlockUsage& u : block_usage(topo, state_.nodes)) {
    pb::BlockUsageRec* r = out.add_blocks();
    r->set_name(u.name);
    r->set_nodes(u.nodes);
    r->set_total(u.total);
    r->set_idle(u.idle);
    r->set_busy(u.busy);
    r->set_unavailable(u.unavailable);
  }
  out.set_fragmentation(block_fragmentation(topo, [this](const std::string& name) {
    auto it = state_.nodes.find(name);
    return it != state_.nodes.end() && node_schedulable(it->second) && it->second.alloc_cpus == 0;
  }));
}

}  // namespace hq::cmd
