#include "core/cluster_state.hpp"

#include <algorithm>
#include <limits>
#include <unordered_set>
#include <utility>

#include "core/hostlist.hpp"

namespace hq {
namespace {

// `only`: hold on that node alone (a node that joined after its jobs were recorded).
void hold_resources(ClusterState& s, const Job& job, const std::string* only = nullptr) {
  for (const auto& a : job.alloc) {
    if (only && a.node != *only) continue;
    auto it = s.nodes.find(a.node);
    if (it == s.nodes.end()) continue;  // node removed from config: nothing to hold
    Node& n = it->second;
    if (!job.suspended) n.alloc_cpus += a.cpus;  // a suspended job's CPUs are free for others
    n.alloc_mem_mib += a.mem_mib;
    for (int32_t g : a.gpus) {
      if (g < 0) continue;
      if (static_cast<size_t>(g) >= n.gpu_used.size()) n.gpu_used.resize(static_cast<size_t>(g) + 1, 0);
      n.gpu_used[static_cast<size_t>(g)] = 1;
    }
    n.alloc_gpus += static_cast<int32_t>(a.gpus.size());
    n.jobs.insert(job.id);
  }
}

void release_resources(ClusterState& s, const Job& job) {
  for (const auto& a : job.alloc) {
    auto it = s.nodes.find(a.node);
    if (it == s.nodes.end()) continue;
    Node& n = it->second;
    if (!job.suspended) n.alloc_cpus -= a.cpus;
    n.alloc_mem_mib -= a.mem_mib;
    for (int32_t g : a.gpus)
      if (g >= 0 && static_cast<size_t>(g) < n.gpu_used.size()) n.gpu_used[static_cast<size_t>(g)] = 0;
    n.alloc_gpus -= static_cast<int32_t>(a.gpus.size());
    n.jobs.erase(job.id);
  }
}

// A job that ends while suspended: its time suspended is closed at its end.
void end_suspension(Job& job, Time t) {
  if (!job.suspended) return;
  job.suspended_secs += std::max<Duration>(0, t - job.suspend_time);
  job.suspended = false;
}

// Suspended: its CPUs go back to the node (memory and GPUs stay held), its run time stops.
// Resumed: it takes its CPUs again, even where another job uses them now (Slurm's rule).
bool apply_suspended(ClusterState& s, const JobSuspended& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || it->second.state != JobState::kRunning || it->second.suspended == e.suspend) return false;
  Job& job = it->second;
  for (const auto& a : job.alloc)
    if (auto n = s.nodes.find(a.node); n != s.nodes.end()) n->second.alloc_cpus += e.suspend ? -a.cpus : a.cpus;
  if (e.suspend) {
    job.pre_suspend_secs += std::max<Duration>(0, e.time - (job.suspend_time ? job.suspend_time : job.start_time));
  } else {
    job.suspended_secs += std::max<Duration>(0, e.time - job.suspend_time);
  }
  job.suspend_time = e.time;
  job.suspended = e.suspend;
  return true;
}

// The job whose submission had `key` (and `uid`'s if given), and its entry in submit_keys.
template <typename State>  // ClusterState, const or not
auto submission_entry(State& s, std::string_view key, std::optional<uint32_t> uid)
    -> std::pair<const Job*, decltype(s.submit_keys.begin())> {
  auto [it, end] = s.submit_keys.equal_range(submit_key_hash(key));
  for (; it != end; ++it) {
    auto job = s.jobs.find(it->second);
    if (job != s.jobs.end() && job->second.submit_key == key && (!uid || job->second.spec.uid == *uid))
      return {&job->second, it};
  }
  return {nullptr, s.submit_keys.end()};
}

// A later job with the same key takes the key over.
void index_submit_key(ClusterState& s, const Job& job) {
  if (job.submit_key.empty()) return;
  auto [earlier, entry] = submission_entry(s, job.submit_key, std::nullopt);
  if (earlier) s.submit_keys.erase(entry);
  s.submit_keys.emplace(submit_key_hash(job.submit_key), job.id);
}

// A job that may run in one partition only keeps it in `partition` alone (for_each_partition),
// not also in a list of one: 48 bytes less a job.
void drop_single_partition(Job& job) {
  if (job.partitions.size() == 1 && job.partitions.front() == job.partition) job.partitions.clear();
}

// Jobs come in id order (submissions, a snapshot's), so the end of the map and of the id
// indexes is the hint for an insertion: a step instead of a search.
bool apply_submitted(ClusterState& s, Job&& submitted) {
  size_t before = s.jobs.size();
  auto it = s.jobs.try_emplace(s.jobs.end(), submitted.id, std::move(submitted));
  if (s.jobs.size() == before) return false;
  Job& job = it->second;
  s.job_list.add(job);
  drop_single_partition(job);
  job.spec.script = s.scripts.intern(job.spec.script);
  job.spec.env = s.environments.intern(job.spec.env);
  if (job.id.value >= s.next_job_id) s.next_job_id = job.id.value + 1;
  if (job.array_job_id != 0) ++s.arrays[job.array_job_id].tasks;
  if (job.original_sluid == 0) job.original_sluid = job.sluid;
  index_submit_key(s, job);
  if (job.state == JobState::kRunning && job.alloc.empty()) job.state = JobState::kPending;  // malformed record
  if (job.state == JobState::kPending) ++s.pending_jobs;
  if (is_terminal(job.state)) s.finished.insert({job.end_time, job.id});  // snapshot restore
  if (job.state == JobState::kRunning) {  // snapshot restore
    hold_resources(s, job);
    s.running.insert(s.running.end(), job.id);
  }
  return true;
}

bool apply_started(ClusterState& s, const JobStarted& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || it->second.state != JobState::kPending || e.alloc.empty()) return false;
  Job& job = it->second;
  job.state = JobState::kRunning;
  job.start_time = e.time;
  job.alloc = e.alloc;
  job.reason = JobReason::kNone;
  if (!e.partition.empty()) job.partition = e.partition;
  if (e.time_limit > 0) job.time_limit = e.time_limit;
  if (!e.qos.empty() && e.qos != job.spec.extra->qos) {  // one of its --qos list
    JobExtras extra = *job.spec.extra;
    extra.qos_list = extra.qos;
    extra.qos = e.qos;
    job.spec.extra = std::move(extra);
  }
  job.expected_start = 0;
  job.sched_nodes.clear();
  --s.pending_jobs;  // it was pending (checked above)
  s.running.insert(job.id);
  hold_resources(s, job);
  return true;
}

bool apply_ended(ClusterState& s, const JobEnded& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || is_terminal(it->second.state)) return false;
  Job& job = it->second;
  if (job.state == JobState::kRunning) release_resources(s, job);
  end_suspension(job, e.time);
  if (job.state == JobState::kPending) --s.pending_jobs;
  s.running.erase(job.id);
  job.state = e.state;
  job.end_time = e.time;
  job.exit_code = e.exit_code;
  job.peak_mem_bytes = e.peak_mem_bytes;
  job.cpu_time_usec = e.cpu_time_usec;
  job.exit_signal = e.exit_signal;
  job.reason = e.reason;
  job.state_desc = e.detail.substr(0, 256);
  s.finished.insert({job.end_time, job.id});
  return true;
}

bool apply_stop(ClusterState& s, const JobStopRequested& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || it->second.state != JobState::kRunning || it->second.cancel_requested ||
      it->second.stop_intent != StopIntent::kNone || e.intent == StopIntent::kNone)
    return false;
  it->second.stop_intent = e.intent;
  it->second.preempting = is_preemption(e.intent);
  return true;
}

bool apply_updated(ClusterState& s, const JobUpdated& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || is_terminal(it->second.state)) return false;
  Job& job = it->second;
  const Job& to = e.job;
  bool qos_changed = job.spec.extra->qos != to.spec.extra->qos;
  Shared<std::string> script = job.spec.script;
  Shared<std::vector<std::string>> env = job.spec.env;
  uint32_t uid = job.spec.uid, gid = job.spec.gid;
  std::vector<uint32_t> groups = std::move(job.spec.groups);
  std::string user = std::move(job.spec.user);
  job.spec = to.spec;
  job.spec.script = std::move(script);
  job.spec.env = std::move(env);
  job.spec.uid = uid;
  job.spec.gid = gid;
  job.spec.groups = std::move(groups);
  job.spec.user = std::move(user);
  if (qos_changed && !job.spec.extra->qos_list.empty()) {  // an operator's QOS: a requeue keeps it
    JobExtras extra = *job.spec.extra;
    extra.qos_list.clear();
    job.spec.extra = std::move(extra);
  }
  if (job.state == JobState::kPending) {
    if (!to.partition.empty()) {
      job.partitions = to.partitions;
      job.partition = to.partition;
      drop_single_partition(job);
    }
    job.eligible_time = to.eligible_time;
    job.dep_state = to.dep_state;
  }
  job.time_limit = to.time_limit;
  job.array_throttle = to.array_throttle;
  return true;
}

bool apply_cancel(ClusterState& s, const JobCancelRequested& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || is_terminal(it->second.state) || it->second.cancel_requested) return false;
  Job& job = it->second;
  job.cancel_key = e.key;
  job.cancel_uid = e.uid;
  job.stop_intent = StopIntent::kNone;  // a cancel wins over a requeue or preemption under way
  if (job.state == JobState::kRunning) {
    job.cancel_requested = true;
    return true;
  }
  return apply_ended(s, JobEnded{e.id, e.time, JobState::kCancelled, 0, 0, JobReason::kNone});
}

// A running job, or a finished batch job (scontrol requeue, as Slurm's), queued again with
// its id: eligible from the requeue on, or from its begin time while that is ahead.
bool apply_requeued(ClusterState& s, const JobRequeued& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end()) return false;
  Job& job = it->second;
  bool finished = is_terminal(job.state) && job.spec.is_batch();
  if (job.state != JobState::kRunning && !finished) return false;
  if (finished) {
    s.finished.erase({job.end_time, job.id});
    job.end_time = 0;
    job.exit_code = job.exit_signal = 0;
    job.state_desc.clear();
    job.peak_mem_bytes = job.cpu_time_usec = job.cancel_uid = -1;
    job.cancel_key.clear();
  } else {
    release_resources(s, job);
  }
  job.alloc.clear();
  job.state = JobState::kPending;
  job.start_time = 0;
  if (!job.spec.extra->qos_list.empty()) {  // it waits under each of its --qos list again
    JobExtras extra = *job.spec.extra;
    extra.qos = std::move(extra.qos_list);
    extra.qos_list.clear();
    job.spec.extra = std::move(extra);
  }
  job.suspended = false;
  job.suspend_time = job.pre_suspend_secs = job.suspended_secs = 0;
  job.reason = e.reason;
  job.cancel_requested = false;
  job.preempting = false;
  job.stop_intent = StopIntent::kNone;
  job.eligible_time = std::max(e.time, job.spec.begin_time);
  // Slurm's: a requeued job is submitted again, a second later at least, so that its run
  // is a record of its own in the accounting store (sacct -D).
  job.submit_time = std::max(e.time, job.submit_time + 1);
  ++job.restart_count;
  if (e.sluid) job.sluid = e.sluid;
  s.running.erase(job.id);
  ++s.pending_jobs;  // from running or ended (checked above)
  return true;
}

// A running job may be held too (Slurm's): it goes on, and a requeue leaves it held.
bool apply_hold(ClusterState& s, const JobHoldChanged& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || is_terminal(it->second.state) || it->second.hold == e.hold) return false;
  Job& job = it->second;
  job.hold = e.hold;
  if (e.hold == HoldKind::kNone) {
    job.eligible_time = std::max(e.time, job.spec.begin_time);  // a start time set while held still holds
    job.reason = JobReason::kNone;
  } else {
    job.reason = e.hold == HoldKind::kAdmin ? JobReason::kJobHeldAdmin : JobReason::kJobHeldUser;
  }
  return true;
}

bool apply_dependency(ClusterState& s, const JobDependencyChanged& e) {
  auto it = s.jobs.find(e.id);
  if (it == s.jobs.end() || it->second.state != JobState::kPending || it->second.dep_state == e.state) return false;
  it->second.dep_state = e.state;
  if (e.state == DepState::kNone) it->second.eligible_time = std::max(it->second.eligible_time, e.time);
  return true;
}

}  // namespace

bool NaturalLess::operator()(const std::string& a, const std::string& b) const {
  return natural_less(a, b);
}

std::vector<const TopologyConfig*> topologies_of(const ClusterState& s) {
  std::vector<const TopologyConfig*> out{&s.topology};
  for (const auto& t : s.other_topologies) out.push_back(&t);
  return out;
}

const TopologyConfig* topology_named(const ClusterState& s, std::string_view name) {
  if (name.empty() || name == s.topology.name) return &s.topology;
  for (const auto& t : s.other_topologies)
    if (t.name == name) return &t;
  return name == "default" ? &s.topology : nullptr;  // Slurm's name for topology.conf's, whatever it is called here
}

const TopologyConfig& topology_of_partition(const ClusterState& s, const std::string& partition) {
  for (const auto& p : s.partitions)
    if (p.name == partition)
      if (const TopologyConfig* t = topology_named(s, p.topology)) return *t;
  return s.topology;
}

BlockTopology block_topology_of(const ClusterState& s, const TopologyConfig& t) {
  bool is_default = &t == &s.topology;
  std::vector<std::pair<std::string, std::string>> labels;
  labels.reserve(s.nodes.size());
  std::set<std::string> moved;  // placed by an operator: out of their configured blocks
  for (const auto& [name, n] : s.nodes) {
    labels.emplace_back(name, label_unit(n.block, t.name, is_default));
    if (!n.operator_block.empty() && !label_unit(n.operator_block, t.name, is_default).empty()) moved.insert(name);
  }
  return build_block_topology(t, labels, moved);
}

BlockTopology block_topology_of(const ClusterState& s) {
  return block_topology_of(s, s.topology);
}

SwitchTree switch_tree_of(const ClusterState& s, const TopologyConfig& t) {
  bool is_default = &t == &s.topology;
  std::vector<std::pair<std::string, std::string>> labels;
  labels.reserve(s.nodes.size());
  for (const auto& [name, n] : s.nodes) labels.emplace_back(name, label_unit(n.switch_name, t.name, is_default));
  return build_switch_tree(t, labels);
}

SwitchTree switch_tree_of(const ClusterState& s) {
  return switch_tree_of(s, s.topology);
}

ClusterState make_state(const ClusterConfig& config) {
  ClusterState s;
  s.partitions = config.partitions;
  s.topology = config.topology;
  s.other_topologies = config.other_topologies;
  for (const auto& nc : config.nodes) {
    for (const auto& name : nc.names) {
      Node& n = s.nodes[name];
      n.name = name;
      n.cpus = n.config_cpus = nc.cpus;
      n.mem_mib = n.config_mem_mib = nc.mem_mib;
      n.config_gres = nc.gres;
      n.features = nc.features;
      n.weight = nc.weight;
      n.gpus = gpus_from_gres(nc.gres);
      n.restricted_cpus_per_gpu = nc.restricted_cores_per_gpu * std::max(1, nc.threads_per_core);
      n.threads_per_core = std::max(1, nc.threads_per_core);
      n.config_threads_per_core = nc.threads_per_core;
    }
  }
  std::vector<SwitchTree> trees;  // switch{S}: the nodes below configured switch S (of any topology)
  for (const TopologyConfig* t : topologies_of(s))
    if (!t->switches.empty()) trees.push_back(build_switch_tree(*t, {}));
  for (auto& p : s.partitions) {
    // By name from a set (a list search would be quadratic here), else by function.
    std::unordered_set<std::string>& named = s.listed[p.name];
    named.insert(p.nodes.begin(), p.nodes.end());
    for (const auto& sw : p.node_switches)
      for (const SwitchTree& tree : trees)
        if (int32_t at = tree.find(sw); at >= 0) named.insert(tree.switches[static_cast<size_t>(at)].nodes.begin(), tree.switches[static_cast<size_t>(at)].nodes.end());
    std::vector<std::string> members;
    for (auto& [name, n] : s.nodes)
      if (named.count(name) || partition_wants_by_function(p, n.features)) {
        n.partitions.push_back(p.name);
        members.push_back(name);
      }
    p.nodes = std::move(members);
  }
  return s;
}

namespace {

// Puts a node in or out of one partition's member list, kept in natural order so that it
// does not depend on the order nodes joined in (a replay rebuilds it in another order).
void set_member(PartitionConfig& p, const std::string& node, bool in) {
  auto at = std::lower_bound(p.nodes.begin(), p.nodes.end(), node, NaturalLess{});
  bool there = at != p.nodes.end() && *at == node;
  if (in && !there) p.nodes.insert(at, node);
  if (!in && there) p.nodes.erase(at);
}

// Whether a partition's switch{S} takes a node labelled with switch `label`: in some tree,
// S is the leaf the label names there, or a configured switch above it (the lowest switch
// above both is S itself).
bool below_listed_switch(const ClusterState& s, const PartitionConfig& p, const std::string& label) {
  if (label.empty() || p.node_switches.empty()) return false;
  for (const TopologyConfig* t : topologies_of(s)) {
    if (t->switches.empty()) continue;
    SwitchTree tree = build_switch_tree(*t, {});
    int32_t leaf = tree.find(label_unit(label, t->name, t == &s.topology));
    if (leaf < 0) continue;
    if (std::any_of(p.node_switches.begin(), p.node_switches.end(), [&](const std::string& sw) {
          int32_t at = tree.find(sw);
          return at >= 0 && tree.common_ancestor({leaf, at}) == at;
        }))
      return true;
  }
  return false;
}

// A node's partitions from its features and labels, and the config's lists (names listed
// stay members, also a dynamic node that comes back after a delete); in partition order.
void update_memberships(ClusterState& s, Node& node) {
  node.partitions.clear();
  for (auto& p : s.partitions) {
    auto listed = s.listed.find(p.name);
    bool in = (listed != s.listed.end() && listed->second.count(node.name)) ||
              partition_wants_by_function(p, node.features, node.block, node.switch_name) ||
              below_listed_switch(s, p, node.switch_name);
    set_member(p, node.name, in);
    if (in) node.partitions.push_back(p.name);
  }
}

// A node that joined by registering (at `joined`): it enters the partitions that want it,
// takes its recorded drain (drained from its joining on: the span out of service it had
// before was closed when it left), and holds what running jobs have there (after a
// controller restart they were recorded before the node came back).
void add_node(ClusterState& s, Node node, Time joined) {
  std::string name = node.name;
  if (auto d = s.drained.find(name); d != s.drained.end()) {
    d->second.time = joined;
    node.drain = true;
    node.drain_reason = d->second.reason;
    node.drain_time = joined;
    node.drain_uid = d->second.uid;
  }
  update_memberships(s, node);
  s.nodes[name] = std::move(node);
  for (JobId id : s.running) {
    const Job& job = s.jobs.at(id);
    if (std::any_of(job.alloc.begin(), job.alloc.end(), [&](const NodeAlloc& a) { return a.node == name; }))
      hold_resources(s, job, &name);
  }
}

// What a registration makes of a node: the fields NodeRegistered decides.
struct Registration {
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  std::vector<NodeGpu> gpus;
  std::vector<std::string> features;
  std::string block, switch_name;
  Time boot_time = 0;
  int32_t threads_per_core = 1;
  bool operator==(const Registration&) const = default;
};

Registration registration_of(const Node& n) {
  return {n.cpus, n.mem_mib, n.gpus, n.features, n.block, n.switch_name, n.boot_time, n.threads_per_core};
}

// Threads per core: the config's when given, else the agent's when it divides the CPUs.
int32_t threads_of(const Node& n, const NodeRegistered& e, int32_t cpus) {
  if (n.config_threads_per_core > 0) return n.config_threads_per_core;
  if (e.threads_per_core > 1 && e.threads_per_core <= 8 && cpus % e.threads_per_core == 0) return e.threads_per_core;
  return 1;
}

// Configured sizes win; found GPUs count when they cover the configured gres (else the node
// keeps the GPUs it had, and goes DOWN by its own event); a dynamic node's features are its agent's.
Registration resolve(const Node& n, const NodeRegistered& e) {
  int32_t cpus = n.config_cpus > 0 ? n.config_cpus : e.cpus;
  Registration r{cpus, n.config_mem_mib > 0 ? n.config_mem_mib : e.mem_mib, n.gpus,
                 n.dynamic && !n.operator_features ? e.features : n.features,
                 merge_labels(e.block, n.operator_block), e.switch_name, e.boot_time, threads_of(n, e, cpus)};
  if (auto found = reconcile_gpus(n.config_gres, e.gpus)) r.gpus = std::move(found).value();
  return r;
}

void set_registration(Node& n, Registration r) {
  n.cpus = r.cpus;
  n.mem_mib = r.mem_mib;
  n.gpus = std::move(r.gpus);
  n.features = std::move(r.features);
  n.block = std::move(r.block);
  n.switch_name = std::move(r.switch_name);
  n.boot_time = r.boot_time;
  n.threads_per_core = r.threads_per_core;
}

bool apply_registered(ClusterState& s, const NodeRegistered& e) {
  auto it = s.nodes.find(e.node);
  if (it == s.nodes.end()) {
    if (!e.join || e.node.empty()) return false;  // a config node the config no longer has
    Node n;
    n.name = e.node;
    n.dynamic = true;
    set_registration(n, resolve(n, e));
    add_node(s, std::move(n), e.time);
    return true;
  }
  Node& n = it->second;
  Registration next = resolve(n, e);
  if (next == registration_of(n)) return false;
  bool regroup = next.features != n.features || next.block != n.block || next.switch_name != n.switch_name;
  set_registration(n, std::move(next));
  if (regroup) update_memberships(s, n);
  return true;
}

bool apply_node_updated(ClusterState& s, const NodeUpdated& e) {
  auto it = s.nodes.find(e.node);
  if (it == s.nodes.end()) return false;
  Node& n = it->second;
  bool changed = false;
  if (e.features) {
    changed = changed || !n.operator_features || n.features != *e.features;
    n.operator_features = true;
    if (n.features != *e.features) {
      n.features = *e.features;
      update_memberships(s, n);
    }
  }
  if (e.weight) {
    changed = changed || !n.operator_weight || n.weight != *e.weight;
    n.operator_weight = true;
    n.weight = *e.weight;
  }
  if (e.block) {
    // The move's entries replace the node's for their topologies; the others stay.
    std::string moves = merge_labels(n.operator_block, *e.block), labels = merge_labels(n.block, *e.block);
    changed = changed || moves != n.operator_block || labels != n.block;
    n.operator_block = std::move(moves);
    if (n.block != labels) {
      n.block = std::move(labels);
      update_memberships(s, n);  // partitions by block{}
    }
  }
  return changed;
}

bool apply_down(ClusterState& s, const NodeDownChanged& e) {
  auto it = s.nodes.find(e.node);
  if (it == s.nodes.end()) return false;
  Node& n = it->second;
  std::string reason = e.down ? e.reason : "";
  if (n.down == e.down && n.down_reason == reason) return false;
  n.down = e.down;
  n.down_reason = std::move(reason);
  n.down_time = e.down ? e.time : 0;
  return true;
}

bool apply_removed(ClusterState& s, const NodeRemoved& e) {
  if (!check_removable(s, e.node)) return false;
  for (auto& p : s.partitions) std::erase(p.nodes, e.node);
  s.nodes.erase(e.node);
  return true;
}

bool apply_partition(ClusterState& s, const PartitionUpdated& e) {
  auto it = std::find_if(s.partitions.begin(), s.partitions.end(), [&](const PartitionConfig& p) { return p.name == e.partition; });
  if (it == s.partitions.end()) return false;
  if (it->state == e.state && it->max_time == e.max_time && it->default_time == e.default_time) return false;
  it->state = e.state;
  it->max_time = e.max_time;
  it->default_time = e.default_time;
  return true;
}

bool apply_reservation(ClusterState& s, const ReservationChanged& e) {
  if (e.deleted) return s.reservations.erase(e.resv.name) > 0;
  auto [it, added] = s.reservations.try_emplace(e.resv.name, e.resv);
  if (!added && it->second == e.resv) return false;
  it->second = e.resv;
  s.next_resv_id = std::max(s.next_resv_id, e.resv.id + 1);
  return true;
}

bool apply_drain(ClusterState& s, const NodeDrainChanged& e) {
  if (e.drain) {
    DrainMark mark{e.reason, e.time, e.uid};
    auto [d, added] = s.drained.try_emplace(e.node, mark);
    if (!added && d->second.reason == e.reason) return false;
    d->second = mark;
  } else if (!s.drained.erase(e.node)) {
    return false;
  }
  if (auto it = s.nodes.find(e.node); it != s.nodes.end()) {
    it->second.drain = e.drain;
    it->second.drain_reason = e.drain ? e.reason : "";
    it->second.drain_time = e.drain ? e.time : 0;
    it->second.drain_uid = e.drain ? e.uid : 0;
  }
  return true;
}

}  // namespace

Status check_removable(const ClusterState& s, const std::string& name) {
  auto it = s.nodes.find(name);
  if (it == s.nodes.end()) return not_found("no node '" + name + "'");
  if (!it->second.dynamic)
    return invalid("node " + name + " is in the config; remove it there (only dynamic nodes can be deleted)");
  if (!it->second.jobs.empty())
    return invalid("node '" + name + "' runs " + std::to_string(it->second.jobs.size()) + " job(s); drain it first");
  return Status::ok();
}

std::optional<JobId> job_of(const Event& event) {
  return std::visit(
      [](const auto& e) -> std::optional<JobId> {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, JobSubmitted>) return e.job.id;
        else if constexpr (requires { e.id; }) {
          if constexpr (std::is_same_v<std::decay_t<decltype(e.id)>, JobId>) return e.id;
          else return std::nullopt;
        } else {
          return std::nullopt;
        }
      },
      event);
}

bool in_queue(const Job& job) {
  return job.state == JobState::kPending && (job.hold == HoldKind::kNone || job.spec.extra->deadline > 0);
}

namespace {

// After an event about job `id`: a pending held job shows its hold (and no expected
// start), the job is in `queued` exactly when in_queue() says so, its listing key in
// job_list is its own, and its array (if it is a task) has a new stamp.
void reindex_job(ClusterState& state, JobId id) {
  auto it = state.jobs.find(id);
  if (it == state.jobs.end()) return;
  Job& job = it->second;
  if (job.state == JobState::kPending && job.hold != HoldKind::kNone) {
    job.reason = job.hold == HoldKind::kAdmin ? JobReason::kJobHeldAdmin : JobReason::kJobHeldUser;
    job.expected_start = 0;
    job.sched_nodes.clear();
  }
  if (in_queue(job)) state.queued.insert(id);
  else state.queued.erase(id);
  state.job_list.retag(job);
  touch_array(state, job);
}

bool apply_job_event(ClusterState& state, const Event& event) {
  return std::visit(
      [&](const auto& e) -> bool {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, JobSubmitted>) return apply_submitted(state, Job(e.job));
        else if constexpr (std::is_same_v<T, JobStarted>) return apply_started(state, e);
        else if constexpr (std::is_same_v<T, JobEnded>) return apply_ended(state, e);
        else if constexpr (std::is_same_v<T, JobRequeued>) return apply_requeued(state, e);
        else if constexpr (std::is_same_v<T, JobHoldChanged>) return apply_hold(state, e);
        else if constexpr (std::is_same_v<T, JobDependencyChanged>) return apply_dependency(state, e);
        else if constexpr (std::is_same_v<T, JobCancelRequested>) return apply_cancel(state, e);
        else if constexpr (std::is_same_v<T, JobStopRequested>) return apply_stop(state, e);
        else if constexpr (std::is_same_v<T, NodeDrainChanged>) return apply_drain(state, e);
        else if constexpr (std::is_same_v<T, NodeRegistered>) return apply_registered(state, e);
        else if constexpr (std::is_same_v<T, NodeDownChanged>) return apply_down(state, e);
        else if constexpr (std::is_same_v<T, JobUpdated>) return apply_updated(state, e);
        else if constexpr (std::is_same_v<T, PartitionUpdated>) return apply_partition(state, e);
        else if constexpr (std::is_same_v<T, ReservationChanged>) return apply_reservation(state, e);
        else if constexpr (std::is_same_v<T, JobSuspended>) return apply_suspended(state, e);
        else if constexpr (std::is_same_v<T, NodeUpdated>) return apply_node_updated(state, e);
        else {
          static_assert(std::is_same_v<T, NodeRemoved>);
          return apply_removed(state, e);
        }
      },
      event);
}

}  // namespace

bool apply(ClusterState& state, const Event& event) {
  if (!apply_job_event(state, event)) return false;
  touch_listed(state);
  if (auto id = job_of(event)) reindex_job(state, *id);
  return true;
}

bool apply(ClusterState& state, Event&& event) {
  if (auto* submitted = std::get_if<JobSubmitted>(&event)) {
    JobId id = submitted->job.id;
    if (!apply_submitted(state, std::move(submitted->job))) return false;
    touch_listed(state);
    reindex_job(state, id);
    return true;
  }
  return apply(state, std::as_const(event));
}

namespace {
// Erases a job from the map and the indexes every job is in (not the state ones).
void erase_job(ClusterState& state, std::map<JobId, Job>::iterator it) {
  if (!it->second.submit_key.empty()) {
    auto [first, end] = state.submit_keys.equal_range(submit_key_hash(it->second.submit_key));
    for (auto entry = first; entry != end; ++entry)
      if (entry->second == it->first) {
        state.submit_keys.erase(entry);
        break;
      }
  }
  if (it->second.state == JobState::kPending) --state.pending_jobs;  // (ended jobs are what goes)
  if (auto a = state.arrays.find(it->second.array_job_id); a != state.arrays.end()) {  // its array changes
    a->second.stamp = ++state.array_stamps;
    if (a->second.tasks <= 1) state.arrays.erase(a);
    else --a->second.tasks;
  }
  state.job_list.remove(it->first);
  state.jobs.erase(it);
  touch_listed(state);
}
}  // namespace

size_t purge_finished(ClusterState& state, Time cutoff) {
  size_t n = 0;
  while (!state.finished.empty() && state.finished.begin()->first < cutoff) {
    if (auto it = state.jobs.find(state.finished.begin()->second); it != state.jobs.end()) {
      erase_job(state, it);
      ++n;
    }
    state.finished.erase(state.finished.begin());
  }
  if (n > 0) {
    state.scripts.sweep();
    state.environments.sweep();
  }
  return n;
}

void forget_finished(ClusterState& state, JobId id) {
  auto it = state.jobs.find(id);
  if (it == state.jobs.end() || !is_terminal(it->second.state)) return;
  state.finished.erase({it->second.end_time, id});
  erase_job(state, it);
}

void touch_array(ClusterState& state, const Job& job) {
  if (job.array_job_id != 0) state.arrays[job.array_job_id].stamp = ++state.array_stamps;
}

Time listed_line_valid_until(const Job& job, Time now) {
  constexpr Time kNever = std::numeric_limits<Time>::max();
  if (job.start_time > 0) return job.end_time > 0 ? kNever : now + 1;  // its run time
  if (job.state != JobState::kPending) return kNever;
  Time until = kNever;
  if (job.expected_start > 0) until = job.expected_start <= now ? now + 1 : job.expected_start;
  if (job.spec.begin_time > now) until = std::min(until, job.spec.begin_time);
  return until;
}

void reserve_jobs(ClusterState& state, size_t jobs) {
  state.submit_keys.reserve(state.submit_keys.size() + jobs);
  state.scripts.reserve(state.scripts.size() + jobs);
  state.environments.reserve(state.environments.size() + jobs);
}

const Job* find_job(const ClusterState& s, JobId id) {
  auto it = s.jobs.find(id);
  return it == s.jobs.end() ? nullptr : &it->second;
}

size_t submit_key_hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

const Job* find_submission(const ClusterState& s, const std::string& key, uint32_t uid) {
  return submission_entry(s, key, uid).first;
}

}  // namespace hq
