// scontrol show config: the controller's settings as Slurm's `show config` names them
// ("MinJobAge = 300 sec"), hq's own under hq's names. Runs on the controller's event-loop
// thread (it reads the config only).
#include "cmd/controller/controller.hpp"
#include "cmd/commands.hpp"

namespace hq::cmd {
namespace {

std::string secs(Duration d) { return std::to_string(d) + " sec"; }
std::string or_null(const std::string& s) { return s.empty() ? "(null)" : s; }

}  // namespace

void Controller::add_config(pb::NodesReply& out) const {
  const ClusterConfig& c = config_;
  const SchedulerConfig& s = c.scheduler;
  auto add = [&](const std::string& key, const std::string& value) {
    auto* e = out.add_config();
    e->set_key(key);
    e->set_value(value);
  };
  std::string sched_params = "bf_interval=" + std::to_string(s.bf_interval) +
                             ",bf_window=" + std::to_string(s.bf_window / 60) +
                             ",bf_resolution=" + std::to_string(s.bf_resolution) +
                             ",bf_max_job_test=" + std::to_string(s.bf_max_job_test) +
                             ",default_queue_depth=" + std::to_string(s.default_queue_depth) +
                             ",sched_interval=" + std::to_string(s.sched_interval);
  // Slurm's names, in Slurm's (alphabetical) order
  auto enforce = parse_acct_enforce(c.accounting.enforce);
  add("AccountingStorageEnforce", enforce ? acct_enforce_name(*enforce) : "none");
  add("AccountingStorageType", c.accounting.storage == "none" ? "(null)" : "accounting_storage/hq (internal)");
  add("AuthType", "auth/hq (signed tokens)");
  add("ClusterName", c.name);
  add("Epilog", or_null(c.agents.epilog));
  add("HealthCheckInterval", c.agents.health_check.empty() ? "0 sec" : secs(c.agents.health_interval));
  add("HealthCheckProgram", or_null(c.agents.health_check));
  add("KillWait", secs(c.kill_wait));
  add("MaxArraySize", std::to_string(c.max_array_size));
  add("MinJobAge", secs(c.min_job_age));
  add("PreemptType", s.preempt_partition_prio ? "preempt/partition_prio" : "preempt/none");
  add("PriorityMaxAge", std::to_string(s.weights.max_age / 86400) + "-00:00:00");
  add("PriorityType", "priority/multifactor");
  add("PriorityWeightAge", std::to_string(s.weights.age));
  add("PriorityWeightFairshare", std::to_string(s.weights.fairshare));
  add("PriorityWeightJobSize", std::to_string(s.weights.job_size));
  add("PriorityWeightPartition", std::to_string(s.weights.partition));
  add("PriorityWeightQOS", std::to_string(s.weights.qos));
  add("ProctrackType", "proctrack/cgroup");
  add("Prolog", or_null(c.agents.prolog));
  add("ReturnToService", std::to_string(c.return_to_service));
  add("SchedulerParameters", sched_params);
  add("SchedulerType", s.policy == SchedPolicy::kBackfill ? "sched/backfill" : "sched/builtin");
  add("SelectType", "select/cons_tres");
  add("SlurmctldHost[0]", c.controller.host);
  add("SlurmctldPort", std::to_string(c.controller.port));
  add("SlurmdTimeout", secs(c.node_timeout));
  add("SLURM_VERSION", "22.05.8");
  add("StateSaveLocation", c.controller.state_dir);
  // hq's own
  add("HqVersion", kHqVersion);
  add("HqSchedulerPolicy", std::string(sched_policy_name(s.policy)));
  add("HqDynamicNodes", c.dynamic_nodes ? "yes" : "no");
  add("HqFenceTimeout", secs(c.fence_timeout));
  add("HqHeartbeatInterval", secs(c.heartbeat_interval));
  add("HqPrivateJobs", c.private_jobs ? "yes" : "no");
  add("HqSnapshotEvery", std::to_string(c.snapshot_every));
}

}  // namespace hq::cmd
