#include "core/metrics.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace hq {
namespace {

// Job counts in Slinky's order: base states, flag states, hold.
enum JobCol { kBootFail, kCancelled, kCompleted, kDeadline, kFailed, kPending, kPreempted, kRunning, kSuspended,
              kTimeout, kNodeFail, kOutOfMemory, kCompleting, kConfiguring, kPowerUpNode, kStageOut, kHold, kJobCols };
constexpr std::array<const char*, kJobCols> kJobWords = {
    "bootfail", "cancelled", "completed", "deadline", "failed", "pending", "preempted", "running", "suspended",
    "timeout", "nodefail", "outofmemory", "completing", "configuring", "powerupnode", "stageout", "hold"};
constexpr std::array<const char*, kJobCols> kJobHelp = {
    "in BootFail state", "in Cancelled state", "in Completed state", "in Deadline state", "in Failed state",
    "in Pending state", "in Preempted state", "in Running state", "in Suspended state", "in Timeout state",
    "in NodeFail state", "in OutOfMemory state", "with Completing flag", "with Configuring flag",
    "with PowerUpNode flag", "with StageOut flag", "with Hold flag"};

struct JobCounts {
  int64_t total = 0;
  std::array<int64_t, kJobCols> by{};
  int64_t cpus = 0, mem_mib = 0;  // allocated to running jobs
  int64_t pending_max_nodes = 0;  // partitions only
};

// Node counts in Slinky's order: base states, then flags.
enum NodeCol { kAllocated, kDown, kError, kFuture, kIdle, kMixed, kUnknown, kNCompleting, kDrain, kFail, kMaintenance,
               kNotResponding, kPlanned, kRebootRequested, kReserved, kNodeCols };
constexpr std::array<const char*, kNodeCols> kNodeWords = {
    "allocated", "down", "error", "future", "idle", "mixed", "unknown", "completing", "drain", "fail", "maintenance",
    "notresponding", "planned", "rebootrequested", "reserved"};
constexpr std::array<const char*, kNodeCols> kNodeHelp = {
    "in Allocated state", "in Down state", "in Error state", "in Future state", "in Idle state", "in Mixed state",
    "in Unknown state", "with Completing flag", "with Drain flag", "with Fail flag", "with Maintenance flag",
    "with NotResponding flag", "with Planned flag", "with RebootRequested flag", "with Reserved flag"};

struct NodeCounts {
  int64_t total = 0;
  std::array<int64_t, kNodeCols> by{};
  int64_t cpus = 0, cpus_alloc = 0, mem = 0, mem_alloc = 0;
};

JobCol base_column(const Job& j) {
  switch (j.state) {
    case JobState::kPending: return kPending;
    case JobState::kRunning: return j.suspended ? kSuspended : kRunning;
    case JobState::kCompleted: return kCompleted;
    case JobState::kCancelled: return kCancelled;
    case JobState::kFailed: return kFailed;
    case JobState::kTimeout: return kTimeout;
    case JobState::kNodeFail: return kNodeFail;
    case JobState::kOutOfMemory: return kOutOfMemory;
    case JobState::kPreempted: return kPreempted;
    case JobState::kDeadline: return kDeadline;
  }
  return kFailed;
}

void count_job(JobCounts& c, const Job& j, JobCol col) {
  ++c.total;
  ++c.by[col];
  if (j.held()) ++c.by[kHold];
  if (j.state != JobState::kRunning) return;
  for (const NodeAlloc& a : j.alloc) {
    c.cpus += a.cpus;
    c.mem_mib += a.mem_mib;
  }
}

// A node's base state (Slurm's: DOWN before the allocation, a drained node is idle or
// busy underneath) and its flags.
void count_node(NodeCounts& c, const Node& n, bool reserved) {
  ++c.total;
  if (n.down) ++c.by[kDown];
  else if (!n.registered) ++c.by[kUnknown];
  else if (n.alloc_cpus == 0 && n.alloc_gpus == 0 && n.alloc_mem_mib == 0) ++c.by[kIdle];
  else if (n.alloc_cpus >= n.cpus) ++c.by[kAllocated];
  else ++c.by[kMixed];
  if (n.drain) ++c.by[kDrain];
  if (n.registered && !n.responding) ++c.by[kNotResponding];
  if (reserved) ++c.by[kReserved];
  c.cpus += n.cpus;
  c.cpus_alloc += std::min(n.alloc_cpus, n.cpus);
  c.mem += n.mem_mib;
  c.mem_alloc += std::min(n.alloc_mem_mib, n.mem_mib);
}

// Writes the page: families with # HELP / # TYPE once, samples with escaped labels.
class Page {
 public:
  explicit Page(size_t expected) { out_.reserve(expected); }  // grown once, not copied as it grows
  void family(const std::string& name, const std::string& help, const char* type = "gauge") {
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  void sample(const std::string& name, int64_t value) { line(name, {}, value); }
  void sample(const std::string& name, std::initializer_list<std::pair<const char*, std::string_view>> labels, int64_t value) {
    line(name, labels, value);
  }
  void sample_double(const std::string& name, std::initializer_list<std::pair<const char*, std::string_view>> labels, double v) {
    head(name, labels);
    number(v);
  }
  std::string done() { return std::move(out_) + "# EOF\n"; }

 private:
  void head(const std::string& name, std::initializer_list<std::pair<const char*, std::string_view>> labels) {
    out_ += name;
    if (labels.size() > 0) {
      out_ += '{';
      bool first = true;
      for (const auto& [k, v] : labels) {
        if (!first) out_ += ',';
        first = false;
        out_ += k;
        out_ += "=\"";
        if (v.find_first_of("\\\"\n") == std::string_view::npos) {
          out_ += v;  // nearly always: nothing to escape
        } else {
          for (char ch : v) {  // OpenMetrics label escapes
            if (ch == '\\' || ch == '"') out_ += '\\', out_ += ch;
            else if (ch == '\n') out_ += "\\n";
            else out_ += ch;
          }
        }
        out_ += '"';
      }
      out_ += '}';
    }
    out_ += ' ';
  }
  void line(const std::string& name, std::initializer_list<std::pair<const char*, std::string_view>> labels, int64_t v) {
    head(name, labels);
    number(v);
  }
  template <typename T>
  void number(T v) {  // the value, and the line's end
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
    out_ += '\n';
  }
  std::string out_;
};

// Unlabelled gauges, a family and its one sample each, in the order given.
struct Gauge {
  const char* name;
  const char* help;
  int64_t value;
};
void gauges(Page& page, std::initializer_list<Gauge> list) {
  for (const Gauge& g : list) {
    page.family(g.name, g.help);
    page.sample(g.name, g.value);
  }
}

// One label set of a grouped family: its label values and its counts.
template <typename Counts>
struct Group {
  std::vector<std::pair<const char*, std::string>> labels;
  Counts counts;
};

// One sample of a group (no labels, or one or two).
template <typename Counts>
void group_sample(Page& page, const std::string& name, const Group<Counts>& g, int64_t value) {
  const auto& l = g.labels;
  if (l.empty()) page.sample(name, value);
  else if (l.size() == 1) page.sample(name, {{l[0].first, l[0].second}}, value);
  else page.sample(name, {{l[0].first, l[0].second}, {l[1].first, l[1].second}}, value);
}

template <typename Counts>
void each_group_sample(Page& page, const std::string& name, const std::vector<Group<Counts>>& groups,
                       int64_t (*value)(const Counts&)) {
  for (const auto& g : groups) group_sample(page, name, g, value(g.counts));
}

// The job families of one scope: `prefix` "slurm_jobs", "slurm_partition_jobs", ...;
// `what` the HELP's noun ("jobs", "user jobs", ...), `where` its tail (" in the partition").
void job_families(Page& page, const std::string& prefix, const std::string& what, const std::string& where,
                  const std::vector<Group<JobCounts>>& groups, bool max_nodes) {
  std::string total_help = "Total number of " + what + where;
  if (what == "jobs" && where.empty()) total_help = "Total number of jobs";
  page.family(prefix + "_total", total_help);
  each_group_sample<JobCounts>(page, prefix + "_total", groups, [](const JobCounts& c) { return c.total; });
  for (size_t col = 0; col < kJobCols; ++col) {
    std::string name = prefix + "_" + kJobWords[col] + "_total";
    page.family(name, "Number of " + what + " " + kJobHelp[col] + where);
    for (const auto& g : groups) group_sample(page, name, g, g.counts.by[col]);
  }
  std::string among = what == "jobs" ? "jobs" : what;
  page.family(prefix + "_cpus_alloc_total", "Number of Allocated CPUs among " + among + where);
  each_group_sample<JobCounts>(page, prefix + "_cpus_alloc_total", groups, [](const JobCounts& c) { return c.cpus; });
  page.family(prefix + "_memory_alloc_bytes", "Amount of Allocated Memory (MB) among " + among + where);
  each_group_sample<JobCounts>(page, prefix + "_memory_alloc_bytes", groups, [](const JobCounts& c) { return c.mem_mib; });
  if (max_nodes) {
    page.family(prefix + "_pending_maxnodecount_total", "Largest number of nodes required among pending jobs" + where);
    each_group_sample<JobCounts>(page, prefix + "_pending_maxnodecount_total", groups,
                                 [](const JobCounts& c) { return c.pending_max_nodes; });
  }
}

void node_state_families(Page& page, const std::string& prefix, const std::vector<Group<NodeCounts>>& groups) {
  page.family(prefix + "_total", prefix == "slurm_nodes" ? "Total number of nodes" : "Total number of slurm nodes");
  each_group_sample<NodeCounts>(page, prefix + "_total", groups, [](const NodeCounts& c) { return c.total; });
  for (size_t col = 0; col < kNodeCols; ++col) {
    std::string name = prefix + "_" + kNodeWords[col] + "_total";
    page.family(name, std::string("Number of nodes ") + kNodeHelp[col]);
    for (const auto& g : groups) group_sample(page, name, g, g.counts.by[col]);
  }
}

}  // namespace

void PassTally::add(int64_t micros, int64_t depth) {
  ++count;
  last_us = micros;
  max_us = std::max(max_us, micros);
  sum_us += micros;
  depth_last = depth;
  depth_sum += depth;
}

// What the page says, taken from the state (counts, and each node's values, with their own
// copies of the text): the text is written from it later, on any thread.
struct MetricsSnapshot {
  struct NodeRow {
    std::string name;
    int32_t cpus = 0, alloc_cpus = 0;
    int64_t mem = 0, alloc_mem = 0, gpus = 0, alloc_gpus = 0;
  };
  JobCounts all;
  std::vector<Group<JobCounts>> parts, users, accounts;
  NodeCounts nodes;
  std::vector<Group<NodeCounts>> part_nodes;
  std::vector<NodeRow> node_rows;
  int64_t gpus = 0, gpus_alloc = 0, pending = 0, running = 0;
  size_t partitions = 0;
  SchedulerCounters sched;
  std::map<std::string, RequestCount> rpcs;
  RequestCount journal_commits;
  Time now = 0;
};

namespace {

// Jobs: every job the controller still shows (finished ones for min_job_age), as Slinky
// counts slurmrestd's /jobs; by partition, user and account.
void take_jobs(const ClusterState& s, MetricsSnapshot& out) {
  // Keyed by views of the jobs' own text (the state outlives this call); sorted for output.
  std::unordered_map<std::string_view, JobCounts> by_part, by_account;
  std::unordered_map<uint32_t, std::pair<std::string_view, JobCounts>> by_uid;
  // Neighbouring jobs mostly share a partition and an account: the last lookup is kept
  // (references into an unordered_map stay valid as it grows).
  std::string_view last_part, last_account;
  JobCounts *part = nullptr, *account = nullptr;
  for (const auto& [id, j] : s.jobs) {
    JobCol col = base_column(j);
    count_job(out.all, j, col);
    if (!part || j.partition.view() != last_part) part = &by_part[last_part = j.partition.view()];
    JobCounts& p = *part;
    count_job(p, j, col);
    if (j.state == JobState::kPending) p.pending_max_nodes = std::max<int64_t>(p.pending_max_nodes, j.spec.nodes_min);
    auto& user = by_uid[j.spec.uid];
    if (user.first.empty()) user.first = j.spec.user.view();
    count_job(user.second, j, col);
    if (!account || j.spec.account.view() != last_account) account = &by_account[last_account = j.spec.account.view()];
    count_job(*account, j, col);
  }
  for (const auto& p : s.partitions) out.parts.push_back({{{"partition", p.name}}, by_part[p.name]});
  std::map<uint32_t, std::pair<std::string_view, JobCounts>> users(by_uid.begin(), by_uid.end());
  std::map<std::string_view, JobCounts> accounts(by_account.begin(), by_account.end());
  for (const auto& [uid, user] : users)
    out.users.push_back({{{"userid", std::to_string(uid)}, {"username", std::string(user.first)}}, user.second});
  for (const auto& [account, c] : accounts) out.accounts.push_back({{{"account", std::string(account)}}, c});
}

// Nodes: by state, per partition, and each node's CPUs, memory and GPUs.
void take_nodes(const ClusterState& s, Time now, MetricsSnapshot& out) {
  std::set<std::string> reserved;
  for (const auto& [name, r] : s.reservations)
    if (r.active(now)) reserved.insert(r.nodes.begin(), r.nodes.end());
  std::unordered_map<std::string_view, NodeCounts> by_part_nodes;
  out.node_rows.reserve(s.nodes.size());
  for (const auto& [name, n] : s.nodes) {
    bool res = reserved.count(name) > 0;
    count_node(out.nodes, n, res);
    for (const auto& p : n.partitions) count_node(by_part_nodes[p], n, res);
    int64_t gpus = static_cast<int64_t>(n.gpus.size());
    out.gpus += gpus;
    out.gpus_alloc += std::min<int64_t>(n.alloc_gpus, gpus);
    out.node_rows.push_back({name, n.cpus, n.alloc_cpus, n.mem_mib, n.alloc_mem_mib, gpus, n.alloc_gpus});
  }
  for (const auto& p : s.partitions) out.part_nodes.push_back({{{"partition", p.name}}, by_part_nodes[p.name]});
}

}  // namespace

std::shared_ptr<const MetricsSnapshot> metrics_snapshot(const MetricsInput& in) {
  auto out = std::make_shared<MetricsSnapshot>();
  const ClusterState& s = *in.state;
  take_jobs(s, *out);
  take_nodes(s, in.now, *out);
  out->pending = static_cast<int64_t>(s.pending_jobs);
  out->running = static_cast<int64_t>(s.running.size());
  out->partitions = s.partitions.size();
  out->sched = in.sched;
  out->rpcs = in.rpcs;
  out->journal_commits = in.journal_commits;
  out->now = in.now;
  return out;
}

std::string metrics_text(const MetricsInput& in) { return metrics_text(*metrics_snapshot(in)); }

std::string metrics_text(const MetricsSnapshot& in) {
  using NodeRow = MetricsSnapshot::NodeRow;
  // About 450 bytes a node (its ten per-node samples), a few KiB a partition, user, account.
  Page page((64 << 10) + in.node_rows.size() * 512 + in.partitions * (8 << 10));
  job_families(page, "slurm_jobs", "jobs", "", {{{}, in.all}}, false);
  job_families(page, "slurm_partition_jobs", "jobs", " in the partition", in.parts, true);
  job_families(page, "slurm_user_jobs", "user jobs", "", in.users, false);
  job_families(page, "slurm_account_jobs", "account jobs", "", in.accounts, false);

  // Nodes.
  node_state_families(page, "slurm_nodes", {{{}, in.nodes}});
  struct NodeTres {
    const char* suffix;
    const char* help;
    int64_t (*value)(const NodeRow&);
  };
  const std::array<NodeTres, 8> tres = {{
      {"cpus_total", "Total number of CPUs on the node", [](const NodeRow& n) { return int64_t{n.cpus}; }},
      {"cpus_effective_total", "Total number of effective CPUs on the node, excludes CoreSpec", [](const NodeRow& n) { return int64_t{n.cpus}; }},
      {"cpus_alloc_total", "Number of Allocated CPUs on the node", [](const NodeRow& n) { return int64_t{std::min(n.alloc_cpus, n.cpus)}; }},
      {"cpus_idle_total", "Number of Idle CPUs on the node", [](const NodeRow& n) { return int64_t{std::max(0, n.cpus - n.alloc_cpus)}; }},
      {"memory_bytes", "Total amount of Memory (MB) on the node", [](const NodeRow& n) { return n.mem; }},
      {"memory_effective_bytes", "Total amount of effective Memory (MB) on the node, excludes MemSpec", [](const NodeRow& n) { return n.mem; }},
      {"memory_alloc_bytes", "Amount of Allocated Memory (MB) on the node", [](const NodeRow& n) { return std::min(n.alloc_mem, n.mem); }},
      {"memory_free_bytes", "Amount of Free Memory (MB) on the node", [](const NodeRow& n) { return std::max<int64_t>(0, n.mem - n.alloc_mem); }},
  }};
  for (const NodeTres& t : tres) {
    std::string name = std::string("slurm_node_") + t.suffix;
    page.family(name, t.help);
    for (const NodeRow& n : in.node_rows) page.sample(name, {{"node", n.name}}, t.value(n));
  }
  node_state_families(page, "slurm_partition_nodes", in.part_nodes);
  const std::array<std::pair<const char*, int64_t (*)(const NodeCounts&)>, 8> part_tres = {{
      {"cpus_total", [](const NodeCounts& c) { return c.cpus; }},
      {"cpus_effective_total", [](const NodeCounts& c) { return c.cpus; }},
      {"cpus_alloc_total", [](const NodeCounts& c) { return c.cpus_alloc; }},
      {"cpus_idle_total", [](const NodeCounts& c) { return c.cpus - c.cpus_alloc; }},
      {"memory_bytes", [](const NodeCounts& c) { return c.mem; }},
      {"memory_effective_bytes", [](const NodeCounts& c) { return c.mem; }},
      {"memory_alloc_bytes", [](const NodeCounts& c) { return c.mem_alloc; }},
      {"memory_free_bytes", [](const NodeCounts& c) { return c.mem - c.mem_alloc; }},
  }};
  for (size_t i = 0; i < part_tres.size(); ++i) {
    std::string name = std::string("slurm_partition_nodes_") + part_tres[i].first;
    page.family(name, tres[i].help);
    each_group_sample<NodeCounts>(page, name, in.part_nodes, part_tres[i].second);
  }

  // hq's own: cluster CPUs and GPUs.
  gauges(page, {{"hq_cpus_total", "CPUs of every node", in.nodes.cpus},
                {"hq_cpus_alloc_total", "CPUs allocated to jobs", in.nodes.cpus_alloc},
                {"hq_cpus_idle_total", "CPUs not allocated", in.nodes.cpus - in.nodes.cpus_alloc},
                {"hq_gpus_total", "GPUs of every node", in.gpus},
                {"hq_gpus_alloc_total", "GPUs allocated to jobs", in.gpus_alloc},
                {"hq_gpus_idle_total", "GPUs not allocated", in.gpus - in.gpus_alloc}});
  page.family("hq_node_gpus_total", "GPUs on the node");
  for (const NodeRow& n : in.node_rows) page.sample("hq_node_gpus_total", {{"node", n.name}}, n.gpus);
  page.family("hq_node_gpus_alloc_total", "Allocated GPUs on the node");
  for (const NodeRow& n : in.node_rows) page.sample("hq_node_gpus_alloc_total", {{"node", n.name}}, n.alloc_gpus);

  // The scheduler (Slurm's sdiag, as Slinky names it; times in microseconds).
  const SchedulerCounters& c = in.sched;
  const PassTally& all_passes = c.passes;
  const PassTally& bf = c.backfill;
  auto mean = [](int64_t sum, int64_t n) { return n > 0 ? sum / n : 0; };
  Duration up = std::max<Duration>(1, in.now - c.started_at);
  gauges(page, {
      {"slurm_scheduler_cycle_total", "Number of scheduling cycles since last reset", all_passes.count},
      {"slurm_scheduler_cycle_last_seconds", "Time in microseconds for last scheduling cycle", all_passes.last_us},
      {"slurm_scheduler_cycle_max_seconds", "Max time of any scheduling cycle in microseconds since last reset", all_passes.max_us},
      {"slurm_scheduler_cycle_mean_seconds", "Mean time in microseconds for all scheduling cycles since last reset", mean(all_passes.sum_us, all_passes.count)},
      {"slurm_scheduler_cycle_sum_seconds_total", "Total run time in microseconds for all scheduling cycles since last reset", all_passes.sum_us},
      {"slurm_scheduler_cycle_depth_total", "Total number of jobs processed in scheduling cycles", all_passes.depth_sum},
      {"slurm_scheduler_cycle_depth_mean_total", "Mean of the number of jobs processed in a scheduling", mean(all_passes.depth_sum, all_passes.count)},
      {"slurm_scheduler_cycle_perminute_total", "Number of scheduling executions per minute", all_passes.count * 60 / up},
      {"slurm_scheduler_queue_total", "Number of jobs pending in queue", in.pending},
      {"slurm_scheduler_thread_total", "Number of current active slurmctld threads", 1},
      {"slurm_scheduler_jobs_submitted_total", "Number of jobs submitted since last reset", c.jobs_submitted},
      {"slurm_scheduler_jobs_started_total", "Number of jobs started since last reset", c.jobs_started},
      {"slurm_scheduler_jobs_completed_total", "Number of jobs completed since last reset", c.jobs_completed},
      {"slurm_scheduler_jobs_canceled_total", "Number of jobs canceled since the last reset", c.jobs_canceled},
      {"slurm_scheduler_jobs_failed_total", "Number of jobs failed due to slurmd or other internal issues since last reset", c.jobs_failed},
      {"slurm_scheduler_jobs_pending_total", "Number of jobs pending at the time of listed in job_state_ts", in.pending},
      {"slurm_scheduler_jobs_running_total", "Number of jobs running at the time of listed in job_state_ts", in.running},
      {"slurm_scheduler_jobs_stats_timestamp", "When the job state counts were gathered (UNIX timestamp)", in.now},
      {"slurm_bfscheduler_active_bool", "Backfill scheduler currently running", 0},
      {"slurm_bfscheduler_cycle_total", "Number of backfill scheduling cycles since last reset", bf.count},
      {"slurm_bfscheduler_cycle_seconds", "Execution time in microseconds of last backfill scheduling cycle", bf.last_us},
      {"slurm_bfscheduler_cycle_max_seconds", "Execution time in microseconds of longest backfill scheduling cycle", bf.max_us},
      {"slurm_bfscheduler_cycle_mean_seconds", "Mean time in microseconds of backfilling scheduling cycles since last reset", mean(bf.sum_us, bf.count)},
      {"slurm_bfscheduler_cycle_sum_seconds", "Total time in microseconds of backfilling scheduling cycles since last reset", bf.sum_us},
      {"slurm_bfscheduler_backfilledjobs_total", "Number of jobs started through backfilling since last slurm start", c.bf_started},
      {"slurm_bfscheduler_lastdepth_total", "Number of processed jobs during last backfilling scheduling cycle", bf.depth_last},
      {"slurm_bfscheduler_lastcycle_timestamp", "When the last backfill scheduling cycle happened (UNIX timestamp)", c.bf_last_time},
      {"slurm_bfscheduler_depth_mean_total", "Mean number of eligible to run jobs processed during all backfilling scheduling cycles since last reset", mean(bf.depth_sum, bf.count)},
      {"slurm_bfscheduler_depth_sum_total", "Total number of jobs processed during all backfilling scheduling cycles since last reset", bf.depth_sum},
  });

  // hq's own: journal commits and requests.
  page.family("hq_journal_commits", "Durable commits of the controller's journal", "counter");
  page.sample("hq_journal_commits_total", in.journal_commits.count);
  page.family("hq_journal_commit_seconds", "Time spent in durable commits of the journal", "counter");
  page.sample_double("hq_journal_commit_seconds_total", {}, in.journal_commits.seconds);
  page.family("hq_requests", "Requests served, by type", "counter");
  for (const auto& [type, r] : in.rpcs) page.sample("hq_requests_total", {{"type", type}}, r.count);
  page.family("hq_request_seconds", "Time spent serving requests, by type", "counter");
  for (const auto& [type, r] : in.rpcs) page.sample_double("hq_request_seconds_total", {{"type", type}}, r.seconds);
  return page.done();
}

}  // namespace hq
