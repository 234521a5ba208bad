#include "core/scheduler.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>

#include "core/acct_policy.hpp"
#include "core/block_usage.hpp"
#include "core/constraint.hpp"
#include "core/dependency.hpp"
#include "core/gpu_select.hpp"
#include "core/hostlist.hpp"
#include "core/job_shape.hpp"
#include "core/placement.hpp"
#include "core/sched_snapshot.hpp"
#include "core/topo_view.hpp"

namespace hq {
namespace {

// One way to run a job: a partition, one constraint alternative, and the shape there.
struct Pool {
  int32_t part = 0;
  const ConstraintAlternative* alt = nullptr;
  JobShape shape;
  std::string gpu_type;       // "" any
  // By node type: whether the pool may use it. A pool of one block gets it from the pool it
  // was split from (`parent_ok`) when first read (mask()): a level of a thousand blocks
  // would otherwise copy a mask per block for every job.
  mutable std::vector<char> type_ok;
  std::shared_ptr<const std::vector<char>> parent_ok;
  // A pool of one block (topology): at least this many of its nodes must have free CPUs for
  // the job to start now (-1: no such bound), so that find() skips blocks too full.
  int64_t free_now = -1, nodes_now = 0;
  int32_t block = -1;         // the topology block it is confined to (-1: none, or every block)
  int32_t segment = 0;        // --segment: nodes per segment, each in one block of its own level
  int32_t topo = 0;           // the topology its partition places by (SchedSnapshot::topos)
};

// A pool of one block (or switch) made from `pool`: the mask from its parent when first read.
Pool block_pool(const Pool& pool, std::shared_ptr<const std::vector<char>> parent, int64_t free_now, int64_t nodes_now,
                int32_t block) {
  Pool out{pool.part, pool.alt, pool.shape, pool.gpu_type, {}, std::move(parent), free_now, nodes_now, block};
  out.topo = pool.topo;
  return out;
}

// A pending job in the pass's order, with what lets consider() decide most jobs without
// reading the Job again (after sorting by priority, Jobs are read in random memory order).
struct Candidate {
  const Job* job;
  int64_t priority;
  uint64_t id;                   // the job's, here so that sorting reads no Job
  int32_t tier;
  int32_t part = -1;             // simple jobs: their one usable partition
  uint32_t uid = 0;
  JobReason early = JobReason::kNone;  // simple jobs: a reason known without resources
  bool simple = false;           // one partition, no dependency, no array throttle
};

// The pass's order: higher partition tier, then higher priority, then lower job id.
bool runs_before(const Candidate& a, const Candidate& b) {
  if (a.tier != b.tier) return a.tier > b.tier;
  if (a.priority != b.priority) return a.priority > b.priority;
  return a.id < b.id;
}

// Why a partition cannot take the job by its state and limits, or kNone.
JobReason partition_refusal(const Job& job, const PartitionConfig& p) {
  if (p.state == PartitionState::kDown) return JobReason::kPartitionDown;
  if (p.state == PartitionState::kInactive) return JobReason::kPartitionInactive;
  if (p.max_time != kUnlimited && (job.time_limit == kUnlimited || job.time_limit > p.max_time))
    return JobReason::kPartitionTimeLimit;
  if ((p.max_nodes && job.spec.nodes_min > p.max_nodes) || job.spec.nodes_min < p.min_nodes)
    return JobReason::kPartitionNodeLimit;
  return JobReason::kNone;
}

// Per-job node filter from -w/-x; empty `ok` means every node may be used.
struct NodeFilter {
  std::vector<char> ok;
  std::vector<int32_t> required;  // -w nodes, by time map index
};

// A running job that higher-tier jobs may preempt (PreemptType=partition_prio).
struct Victim {
  const Job* job;
  int32_t tier;
  PreemptMode mode;
  Duration grace;
  int32_t release;                      // where its resources come back in the time map now
  std::vector<int32_t> nodes;           // time map indices
  std::vector<const NodeAlloc*> allocs; // what it holds on each of `nodes`
  bool chosen = false;
};

// Nodes for place() from one now group (nodes with the same type and free CPUs and GPUs
// now), ordered by weight, then free CPUs now, then the group's first node.
struct Option {
  int32_t weight, free_cpus, first;
  std::span<const int32_t> nodes;
  int32_t most = INT32_MAX;  // the most units one of the nodes can offer at the slot
};

struct Placement {
  int32_t slot = -1;
  const Pool* pool = nullptr;
  bool whole_topo = false;    // --exclusive=topo: the rest of its base blocks is held for it too
  std::vector<std::pair<int32_t, int32_t>> nodes;  // (node, units)
};

// The advance reservation a job names, or nullptr ("" names none).
const std::string* reservation_of(const Job& job) {
  if (!job.spec.extra.identity()) return nullptr;  // no extras: no reservation (and no memory read)
  return job.spec.extra->reservation.empty() ? nullptr : &job.spec.extra->reservation;
}

class Pass {
 public:
  // `depth` > 0 looks at only that many of the highest-priority pending jobs. With `scope`
  // the pass is for the jobs of that (active) advance reservation alone, on its nodes alone;
  // without, for every other job, kept off reserved nodes over the reservations' windows.
  // `usage`, when given, counts what running jobs hold against accounting limits (shared by
  // the passes of one schedule, so that each sees what the others started).
  // `policy` gives accounting's priority factors (fair share, QOS).
  Pass(const ClusterState& s, const SchedulerConfig& cfg, Time now, int32_t depth = 0,
       const AdvanceReservation* scope = nullptr, AcctUsage* usage = nullptr, const AcctPolicy* policy = nullptr)
      : s_(s), cfg_(cfg), depth_(depth), scope_(scope), usage_(usage), snap_(build_snapshot(s, cfg, now)),
        prio_(make_priority_context(cfg, s.partitions, snap_.cluster_cpus)) {
    prio_.accounting = policy;
    for_each_job_in(s, s.running, [&](const Job& j) {
      if (j.array_job_id) ++array_running_[j.array_job_id];
    });
    if (!s.reservations.empty()) hold_reservations();
    for (size_t k = 0; k < snap_.topos.size(); ++k) views_.emplace_back(snap_, static_cast<int32_t>(k));
    any_topology_ = std::any_of(views_.begin(), views_.end(), [](const TopoView& v) { return v.active(); });
    if (any_topology_) hold_exclusive_blocks();
    if (cfg.preempt_partition_prio && !scope_) collect_victims();
    blocked_.assign(snap_.parts.size(), 0);
    reserved_in_part_.assign(snap_.parts.size(), 0);
    tested_in_part_.assign(snap_.parts.size(), 0);
  }
  Pass(const Pass&) = delete;  // its topology views point into its snapshot
  Pass& operator=(const Pass&) = delete;

  Plan run(const Job* extra) {
    std::vector<Candidate> order = ordered(extra);
    plan_.pending.reserve(order.size());
    consider_in_order(order);
    if (extra)  // not a record of the state (sbatch --test-only's job): no address to keep
      for (PendingInfo& info : plan_.pending)
        if (info.record == extra) info.record = nullptr;
    const auto& live = snap_.map.live_classes();
    plan_.stats.classes = static_cast<int32_t>(
        std::count_if(live.begin(), live.end(), [&](int32_t c) { return !snap_.map.class_nodes(c).empty(); }));
    return std::move(plan_);
  }

  // After run(): the active reservations whose pending jobs this pass left to their own pass.
  const std::set<std::string>& deferred() const { return deferred_; }

 private:
  // Holds every node of each reservation (but the pass's own) over its window, so that
  // no other job runs there then; a reservation's own pass holds every other node.
  void hold_reservations() {
    TimeMap& map = snap_.map;
    auto hold = [&](int32_t node, int32_t from, int32_t to) {
      map.take(node, from, to, map.total_cpus(node), map.total_mem(node), map.total_gpus(node));
    };
    part_maint_.assign(snap_.parts.size(), 0);
    std::vector<Time> free_until(static_cast<size_t>(map.node_count()), kNever);
    std::vector<char> maint(static_cast<size_t>(map.node_count()), 0);
    for (const auto& [name, r] : s_.reservations) {
      if (&r == scope_ || r.end <= snap_.now) continue;
      int32_t from = r.start <= snap_.now ? 0 : slot_at_or_before(r.start);
      int32_t to = snap_.release_slot(r.end);
      if (to >= map.horizon()) to = kForever;
      Time begins = std::max(r.start, snap_.now);
      for (const std::string& node : r.nodes) {
        int32_t idx = snap_.node_index.find(node);
        if (idx < 0) continue;
        if (from < map.horizon()) hold(idx, from, to);
        auto i = static_cast<size_t>(idx);
        free_until[i] = std::min(free_until[i], begins);
        if (r.flags & kResvMaint) maint[i] = 1;
      }
    }
    std::vector<char> outside(static_cast<size_t>(map.node_count()), 0);  // not the scope's: never usable
    if (scope_) {
      for (int32_t idx = 0; idx < map.node_count(); ++idx)
        if (!scope_->holds(snap_.nodes[static_cast<size_t>(idx)]->name)) hold(idx, 0, kForever), outside[static_cast<size_t>(idx)] = 1;
    }
    // Per partition: until when its least reserved node is free of reservations (a job that
    // must end before then finds none of its nodes kept), and whether MAINT keeps them.
    part_free_until_.assign(snap_.parts.size(), -1);  // -1: no node seen
    for (int32_t idx = 0; idx < map.node_count(); ++idx) {
      auto i = static_cast<size_t>(idx);
      if (outside[i]) continue;
      for (int32_t part : snap_.types[static_cast<size_t>(map.type_of(idx))].parts) {
        auto p = static_cast<size_t>(part);
        part_free_until_[p] = std::max(part_free_until_[p], free_until[i]);
        part_maint_[p] |= maint[i];
      }
    }
    for (Time& t : part_free_until_) if (t < 0) t = kNever;
  }

  // The coarse time-map slot that begins at or before `t` (a reservation's start).
  int32_t slot_at_or_before(Time t) const {
    return TimeMap::coarsen_down(static_cast<int32_t>(std::min<int64_t>((t - snap_.now) / snap_.resolution, kForever - 1)));
  }

  // Why a job that did not start waits on reservations: every node of its partitions is
  // reserved before it could end (Slurm's "ReqNodeNotAvail, ..."); kNone otherwise.
  JobReason reserved_reason(const Job& job, const std::vector<int32_t>& parts) const {
    if (part_free_until_.empty()) return JobReason::kNone;
    Time end = job.time_limit == kUnlimited ? kNever - 1 : snap_.now + job.time_limit;
    bool maint = false;
    for (int32_t p : parts) {
      if (part_free_until_[static_cast<size_t>(p)] > end) return JobReason::kNone;
      maint = maint || part_maint_[static_cast<size_t>(p)];
    }
    return maint ? JobReason::kResvMaint : JobReason::kResvOther;
  }

  // Routes a job that names a reservation: to its reservation's own pass (true: not here),
  // or, while that has not begun, to the reason "Reservation" (also true).
  bool routed_elsewhere(const Job& job) {
    const std::string* name = reservation_of(job);
    if (scope_) return !name || *name != scope_->name;
    if (!name) return false;
    auto it = s_.reservations.find(*name);
    if (it != s_.reservations.end() && it->second.active(snap_.now)) {
      deferred_.insert(*name);
      return true;
    }
    PendingInfo info{job.id, &job};
    info.reason = JobReason::kReservation;
    if (it != s_.reservations.end() && it->second.start > snap_.now) info.expected_start = it->second.start;
    plan_.pending.push_back(info);
    return true;
  }

  std::vector<Candidate> ordered(const Job* extra) {
    std::vector<Candidate> order;
    order.reserve(s_.queued.size() + 1);
    bool any_resv = !s_.reservations.empty();
    auto add = [&](const Job& job) {
      if ((any_resv || job.spec.extra.identity()) && routed_elsewhere(job)) return;
      if (misses_deadline(job, snap_.now)) return plan_.deadline_kills.push_back(job.id);  // ended, not ranked
      int32_t tier = 0, part = -1, factor = 0;
      for_each_partition(job, [&](std::string_view name) {
        auto it = snap_.part_index.find(name);
        if (it == snap_.part_index.end()) return;
        tier = std::max(tier, snap_.parts[it->second]->priority_tier);
        factor = std::max(factor, snap_.parts[it->second]->priority_job_factor);
        part = it->second;
      });
      Candidate c{&job, compute_priority(job, prio_, snap_.now, factor).total, job.id.value, tier};
      c.uid = job.spec.uid;
      c.simple = job.partitions.size() <= 1 && job.dep_state == DepState::kNone &&
                 !(job.array_job_id && job.array_throttle > 0);
      if (c.simple) {  // gate() and usable_partitions() for such a job, decided here
        if (job.hold == HoldKind::kUser) c.early = JobReason::kJobHeldUser;
        else if (job.hold == HoldKind::kAdmin) c.early = JobReason::kJobHeldAdmin;
        else if (job.spec.begin_time > snap_.now) c.early = JobReason::kBeginTime;
        else if (part < 0) c.early = JobReason::kPartitionConfig;
        else c.early = partition_refusal(job, *snap_.parts[part]);
        c.part = part;
      }
      order.push_back(c);
    };
    // Mostly queued jobs: one walk over the jobs, through the job list (an array, its
    // records asked for ahead, where the map's walk waits on memory at each node); else over
    // the queued index (finished jobs linger for min_job_age, held ones wait on their hold).
    // Both go in id order.
    if (s_.queued.size() * 2 >= s_.jobs.size()) {
      s_.job_list.for_each(s_.jobs, 0, std::set<std::string, std::less<>>{}, [&](const Job& job) {
        if (in_queue(job)) add(job);
        return true;
      });
    } else {
      for_each_job_in(s_, s_.queued, add);
    }
    if (extra) add(*extra);
    if (depth_ > 0 && order.size() > static_cast<size_t>(depth_)) {
      std::partial_sort(order.begin(), order.begin() + depth_, order.end(), runs_before);
      order.resize(static_cast<size_t>(depth_));
      sorted_ = true;
    }
    return order;
  }

  // Every job that is left can only be refused by its gates or wait for "Priority": every
  // partition is blocked and no more jobs may be tested past a blocked one. Their order
  // no longer matters (nothing starts or reserves from here on).
  bool settled() const {
    bool all_blocked = std::all_of(blocked_.begin(), blocked_.end(), [](char b) { return b != 0; });
    return all_blocked && (cfg_.policy == SchedPolicy::kFifo ||
                           (cfg_.bf_max_job_test > 0 && plan_.stats.tested >= cfg_.bf_max_job_test));
  }

  // Considers the candidates in priority order, sorting only as far as it matters: in
  // chunks by 16-byte keys, until settled(); the rest in id order (they come that way,
  // and the controller then finds their jobs by walking its job map).
  void consider_in_order(std::vector<Candidate>& order) {
    if (sorted_) {
      for (const Candidate& c : order) consider(c);
      return;
    }
    std::vector<RankKey> keys;
    if (!rank_keys(order, keys)) {  // a priority beyond 48 bits: the plain full sort
      std::sort(order.begin(), order.end(), runs_before);
      for (const Candidate& c : order) consider(c);
      return;
    }
    auto less = [](const RankKey& a, const RankKey& b) { return a.rank != b.rank ? a.rank < b.rank : a.id < b.id; };
    constexpr size_t kChunk = 4096;
    size_t i = 0;
    for (size_t ready = 0; i < keys.size(); ++i) {
      if (i == ready) {
        if (settled()) break;
        ready = std::min(keys.size(), i + kChunk);
        std::partial_sort(keys.begin() + static_cast<std::ptrdiff_t>(i), keys.begin() + static_cast<std::ptrdiff_t>(ready),
                          keys.end(), less);
      }
      consider(order[keys[i].at]);
    }
    if (i == keys.size()) return;
    std::vector<char> done(order.size(), 0);
    for (size_t k = 0; k < i; ++k) done[keys[k].at] = 1;
    for (size_t at = 0; at < order.size(); ++at)
      if (!done[at]) consider(order[at]);
  }

  // Sort keys for candidates (16 bytes instead of 48 moved): tier and priority folded into
  // one number when every priority fits in 48 bits. False when one does not.
  struct RankKey {
    uint64_t rank, id;
    uint32_t at;
  };
  static bool rank_keys(const std::vector<Candidate>& order, std::vector<RankKey>& keys) {
    constexpr int64_t kHalf = int64_t{1} << 47;
    keys.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const Candidate& c = order[i];
      if (c.priority < -kHalf || c.priority >= kHalf || c.tier < 0 || c.tier > 65535) return false;
      uint64_t rank = (uint64_t{65535u - static_cast<uint32_t>(c.tier)} << 48) | static_cast<uint64_t>(kHalf - 1 - c.priority);
      keys.push_back({rank, c.id, static_cast<uint32_t>(i)});
    }
    return true;
  }

  // Reasons that need no resources: holds, dependencies, begin time, array throttle
  // (kNone: none of them holds the job).
  JobReason gate(const Job& job) {
    if (job.hold == HoldKind::kUser) return JobReason::kJobHeldUser;
    if (job.hold == HoldKind::kAdmin) return JobReason::kJobHeldAdmin;
    if (job.dep_state == DepState::kNever) {
      if (job.spec.kill_on_invalid_dep) plan_.invalid_dependency_kills.push_back(job.id);
      return JobReason::kDependencyNeverSatisfied;
    }
    if (job.dep_state == DepState::kWaiting) {
      if (JobReason r = check_dependency(job); r != JobReason::kNone) return r;
    }
    if (job.spec.begin_time > snap_.now) return JobReason::kBeginTime;
    if (job.array_job_id && job.array_throttle > 0 && array_running_[job.array_job_id] >= job.array_throttle)
      return JobReason::kJobArrayTaskLimit;
    return JobReason::kNone;
  }

  JobReason check_dependency(const Job& job) {
    auto dep = parse_dependency(job.spec.dependency);
    if (!dep) return JobReason::kDependencyNeverSatisfied;
    DepResult r = evaluate_dependency(*dep, job, s_, snap_.now);
    bool singleton = std::any_of(dep->terms.begin(), dep->terms.end(),
                                 [](const DepTerm& t) { return t.type == DepType::kSingleton; });
    if (singleton && r == DepResult::kSatisfied && singletons_started_.count({job.spec.uid, job.spec.name}))
      r = DepResult::kWaiting;
    if (r == DepResult::kWaiting) return JobReason::kDependency;
    if (r == DepResult::kNever) {
      plan_.dependency_changes.emplace_back(job.id, DepState::kNever);
      if (job.spec.kill_on_invalid_dep) plan_.invalid_dependency_kills.push_back(job.id);
      return JobReason::kDependencyNeverSatisfied;
    }
    // Singleton stays checked at every pass: another job of the name may start first.
    if (!singleton) plan_.dependency_changes.emplace_back(job.id, DepState::kNone);
    return JobReason::kNone;
  }

  // The job's partitions that can take it (by state and limits), or the reason none can.
  JobReason usable_partitions(const Job& job, std::vector<int32_t>& parts) {
    JobReason why = JobReason::kNone;
    for_each_partition(job, [&](std::string_view name) {
      auto it = snap_.part_index.find(name);
      if (it == snap_.part_index.end()) { if (why == JobReason::kNone) why = JobReason::kPartitionConfig; return; }
      JobReason r = partition_refusal(job, *snap_.parts[it->second]);
      if (r == JobReason::kNone) parts.push_back(it->second);
      else if (why == JobReason::kNone) why = r;
    });
    if (!parts.empty()) return JobReason::kNone;
    return why == JobReason::kNone ? JobReason::kPartitionConfig : why;
  }

  // The pools of a job: each usable partition times each constraint alternative.
  void pools_for(const Job& job, const std::vector<int32_t>& parts, const Constraint& constraint,
                 std::vector<Pool>& pools, Duration limit) {
    int32_t slots = snap_.duration_slots(limit);
    size_t alts = std::max<size_t>(1, constraint.alternatives.size());
    for (int32_t part : parts) {
      for (size_t a = 0; a < alts; ++a) {
        Pool pool;
        pool.part = part;
        pool.alt = constraint.empty() ? nullptr : &constraint.alternatives[a];
        pool.shape = job_shape(job.spec, *snap_.parts[part], slots);
        pool.gpu_type = job.spec.gpu_type;
        pool.type_ok = type_mask(pool);
        pool.topo = snap_.part_topo[static_cast<size_t>(part)];
        pools.push_back(std::move(pool));
      }
    }
    bool every_block = !victims_.empty() || cfg_.bf_topopt_delay > 0 || whole_topo(job);
    if (!any_topology_ || !job.spec.nodelist.empty()) return;
    std::vector<Pool> out;
    for (const Pool& pool : pools) {
      TopoView& v = view(pool);
      if (!v.active()) out.push_back(pool);
      else if (v.tree()) split_by_switches(pool, every_block, out);
      else split_by_blocks(pool, job.spec.segment, every_block, out);
    }
    pools.swap(out);
  }

  TopoView& view(const Pool& pool) { return views_[static_cast<size_t>(pool.topo)]; }
  const TopoView& view(const Pool& pool) const { return views_[static_cast<size_t>(pool.topo)]; }

  // By node type: whether the pool (its partition, constraint alternative and GPUs) may
  // use it. Kept for the pass for pools without a constraint when there are many types (a
  // topology makes a type per base block): jobs of one partition then share it.
  std::vector<char> type_mask(const Pool& pool) {
    constexpr size_t kManyTypes = 64;
    int32_t min_gpus = pool.shape.need.node_gpus + pool.shape.need.gpus;  // one unit's worth
    if (pool.alt || snap_.types.size() < kManyTypes) return compute_type_mask(pool, min_gpus);
    auto [it, fresh] = type_masks_.try_emplace(MaskKey{pool.part, min_gpus, min_gpus == 0 ? std::string() : pool.gpu_type});
    if (fresh) it->second = compute_type_mask(pool, min_gpus);
    return it->second;
  }
  struct MaskKey {
    int32_t part, min_gpus;
    std::string gpu_type;  // "" when min_gpus is 0 (not read then)
    auto operator<=>(const MaskKey&) const = default;
  };
  std::map<MaskKey, std::vector<char>> type_masks_;  // type_mask()'s

  std::vector<char> compute_type_mask(const Pool& pool, int32_t min_gpus) const {
    std::vector<char> ok(snap_.types.size());
    for (size_t t = 0; t < snap_.types.size(); ++t) {
      const NodeType& nt = snap_.types[t];
      ok[t] = std::binary_search(nt.parts.begin(), nt.parts.end(), pool.part) &&
              (!pool.alt || node_matches(*pool.alt, nt.features)) && (min_gpus == 0 || nt.gpus_of(pool.gpu_type) >= min_gpus);
    }
    return ok;
  }

  // Switch tree (Slurm's topology/tree, as blocks: BlockTopology::tree): a job runs below
  // one switch, the lowest that can hold it, so each pool becomes one pool per switch with
  // enough usable nodes: lowest level first, then fewest nodes with free CPUs now (best
  // fit), then tree order. Leaves with no common switch are never spanned; nodes on no
  // switch take no job. Unless `every_block`, only the switches with room now and the
  // kLaterBlocks emptiest become pools (added to `out`).
  void split_by_switches(const Pool& pool, bool every_block, std::vector<Pool>& out) {
    TopoView& v = view(pool);
    const BlockTopology& topo = v.topo();
    int32_t needed = nodes_needed(pool);
    int32_t light = lightest_enough(pool, needed);
    // (heavier nodes needed, level, free nodes now, block)
    std::vector<std::tuple<int, int32_t, int64_t, int32_t>> switches;
    for (size_t level = 0; level < topo.by_level.size(); ++level) {
      if (leaf_limit_ == 1 && level > 0) break;  // --switches=1 while it waits: leaves only
      const std::vector<int64_t>& usable = usable_by_block(pool, static_cast<int32_t>(level));
      const std::vector<int32_t>& blocks = topo.by_level[level];
      for (size_t i = 0; i < blocks.size(); ++i)
        if (usable[i] >= needed)
          switches.emplace_back(light == INT32_MAX || light_enough(pool, blocks[i], light, needed) ? 0 : 1,
                                static_cast<int32_t>(level), v.free_nodes_in_block(blocks[i]), blocks[i]);
    }
    if (!every_block && switches.size() > kLaterBlocks) {  // those with room now, then the emptiest
      std::stable_sort(switches.begin(), switches.end(), [](const auto& a, const auto& b) { return std::get<2>(a) > std::get<2>(b); });
      size_t keep = kLaterBlocks;
      while (keep < switches.size() && std::get<2>(switches[keep]) >= needed) ++keep;
      switches.resize(keep);
    }
    std::sort(switches.begin(), switches.end());
    auto parent = std::make_shared<const std::vector<char>>(pool.type_ok);
    for (const auto& [heavier, level, free, b] : switches) out.push_back(block_pool(pool, parent, free, needed, b));
  }

  // Node weight overrides topology (as in Slurm's eval_nodes_tree, which takes the
  // lightest nodes that are enough before it looks at switches): the lowest weight whose
  // nodes, with free CPUs now and usable by the pool, number `needed`; INT32_MAX when the
  // pool's nodes all weigh the same (nothing to prefer) or no weight is enough.
  int32_t lightest_enough(const Pool& pool, int32_t needed) {
    std::map<int32_t, int64_t> free_by_weight;
    for (size_t t = 0; t < snap_.types.size(); ++t)
      if (pool.type_ok[t]) free_by_weight[snap_.types[t].weight] += 0;
    if (free_by_weight.size() < 2) return INT32_MAX;
    for (int32_t n = 0; n < snap_.map.node_count(); ++n) {
      size_t t = static_cast<size_t>(snap_.map.type_of(n));
      if (pool.type_ok[t] && view(pool).bblock_of_type(t) >= 0 && snap_.map.free_cpus(n) > 0) ++free_by_weight[snap_.types[t].weight];
    }
    int64_t sum = 0;
    for (const auto& [weight, count] : free_by_weight)
      if ((sum += count) >= needed) return weight;
    return INT32_MAX;
  }

  // Whether block `b` has `needed` nodes of weight `light` or less with free CPUs now.
  bool light_enough(const Pool& pool, int32_t b, int32_t light, int32_t needed) {
    int32_t have = 0;
    for (int32_t n : view(pool).block_nodes(b)) {
      size_t t = static_cast<size_t>(snap_.map.type_of(n));
      if (pool.type_ok[t] && snap_.types[t].weight <= light && snap_.map.free_cpus(n) > 0 && ++have >= needed) return true;
    }
    return false;
  }

  // A job with -w on a switch tree: Slurm's top switch is the highest switch holding its
  // -w nodes; every other node comes from below it. No such switch (a -w node on no
  // switch, or on another root): no pool (the job was refused at submit; a tree changed
  // since waits).
  void confine_to_switch(std::vector<Pool>& pools, const NodeFilter& f) {
    std::vector<Pool> out;
    for (Pool& pool : pools) {
      TopoView& v = view(pool);
      if (!v.tree()) {  // a partition placed by blocks, or by no topology
        out.push_back(std::move(pool));
        continue;
      }
      int32_t top = top_switch(v, f);
      if (top < 0) continue;
      pool.parent_ok = std::make_shared<const std::vector<char>>(std::move(pool.type_ok));
      pool.type_ok.clear();
      pool.block = top;
      out.push_back(std::move(pool));
    }
    pools.swap(out);
  }

  // The highest switch of a tree holding every -w node, -1 when none does.
  static int32_t top_switch(const TopoView& v, const NodeFilter& f) {
    const BlockTopology& topo = v.topo();
    std::vector<int32_t> leaves;
    for (int32_t n : f.required) leaves.push_back(v.bblock_of_node(n));
    if (std::find(leaves.begin(), leaves.end(), -1) != leaves.end()) return -1;
    int32_t top = -1;
    for (const TopoBlock& b : topo.blocks)
      if (std::all_of(leaves.begin(), leaves.end(), [&](int32_t l) { return std::binary_search(b.bblocks.begin(), b.bblocks.end(), l); }) &&
          (top < 0 || b.level > topo.blocks[static_cast<size_t>(top)].level))
        top = b.index;
    return top;
  }

  // Block topology (Slurm's topology/block): a job runs inside one block of the smallest
  // enforced level that holds it, so each pool becomes one pool per block of that level,
  // best fit first (fewest nodes with free CPUs now, then block order). Nodes in no block
  // take no job; a job no level holds may use every block's nodes. Node types never span
  // base blocks (core/sched_snapshot), so a block is a set of types.
  // A job of segments (--segment=S, S dividing its node count) keeps one pool over every
  // block's nodes: find_segmented() places each segment in a block of S's level.
  // Unless `every_block`, only the blocks that may take the job now and the kLaterBlocks
  // emptiest (later_order()'s) become pools: a level of a thousand blocks would otherwise
  // make a thousand pools for every job.
  void split_by_blocks(const Pool& pool, int32_t segment, bool every_block, std::vector<Pool>& out) {
    TopoView& v = view(pool);
    int32_t needed = nodes_needed(pool);  // (a lower bound for tasks that spread)
    auto in_blocks = [&](std::vector<char> ok) {  // the mask, less the nodes in no block
      bool any = false;
      for (size_t t = 0; t < ok.size(); ++t) any |= ok[t] = ok[t] && v.bblock_of_type(t) >= 0;
      return std::pair(std::move(ok), any);
    };
    if (segment > 0 && !pool.shape.spread && segment < needed && needed % segment == 0) {
      Pool whole = pool;
      whole.type_ok = in_blocks(pool.type_ok).first;
      whole.segment = segment;
      out.push_back(std::move(whole));
      return;
    }
    int32_t level = v.topo().level_for(needed);
    if (level < 0) {  // no level holds it: every block's nodes, the mask now
      auto [ok, any] = in_blocks(pool.type_ok);
      if (!any) return;
      Pool whole = block_pool(pool, nullptr, -1, 0, -1);
      whole.type_ok = std::move(ok);
      out.push_back(std::move(whole));
      return;
    }
    // The level's blocks come sorted by (free nodes now, block) already (level_order()).
    std::vector<std::pair<int64_t, int32_t>>& blocks = split_blocks_;
    blocks.clear();
    const std::vector<int64_t>& usable = usable_by_block(pool, level);
    for (const auto& [free, b] : v.level_order(level))
      if (usable[static_cast<size_t>(v.level_pos(b))] >= needed) blocks.emplace_back(free, b);
    auto first = blocks.begin();
    if (!every_block && blocks.size() > kLaterBlocks) {  // those with room now, then the emptiest
      auto room = std::lower_bound(blocks.begin(), blocks.end(), std::make_pair(int64_t{needed}, -1));
      first = std::min(room, blocks.end() - static_cast<std::ptrdiff_t>(kLaterBlocks));
    }
    auto parent = std::make_shared<const std::vector<char>>(pool.type_ok);
    out.reserve(out.size() + static_cast<size_t>(blocks.end() - first));
    for (auto it = first; it != blocks.end(); ++it) out.push_back(block_pool(pool, parent, it->first, needed, it->second));
  }

  // Per block of `level`: its nodes the pool may use (fewer than the job needs never hold
  // it). Kept for the pass by what decides the mask, for pools without a constraint.
  const std::vector<int64_t>& usable_by_block(const Pool& pool, int32_t level) {
    UsableKey key{pool.part, level, pool.shape.need.node_gpus + pool.shape.need.gpus, pool.gpu_type};
    if (pool.alt) key.part = -1;  // a constraint's mask is its job's own: counted afresh
    auto [it, fresh] = usable_.try_emplace(key);
    if (!fresh && !pool.alt) return it->second;
    std::vector<int64_t>& out = it->second;
    out.clear();
    TopoView& v = view(pool);
    for (int32_t b : v.topo().by_level[static_cast<size_t>(level)]) {
      int64_t usable = 0;
      for (int32_t bb : v.topo().blocks[static_cast<size_t>(b)].bblocks)
        for (int32_t t : v.bblock_types(bb)) usable += pool.type_ok[static_cast<size_t>(t)] ? nodes_of_type(static_cast<size_t>(t)) : 0;
      out.push_back(usable);
    }
    return out;
  }
  struct UsableKey {
    int32_t part, level, gpus;
    std::string gpu_type;
    auto operator<=>(const UsableKey&) const = default;
  };
  std::map<UsableKey, std::vector<int64_t>> usable_;  // usable_by_block()'s

  // The pool's node-type mask (a block pool's is made from its parent's when first read).
  const std::vector<char>& mask(const Pool& pool) {
    if (pool.type_ok.empty() && pool.parent_ok) {
      pool.type_ok.assign(pool.parent_ok->size(), 0);
      TopoView& v = view(pool);
      for (int32_t bb : v.topo().blocks[static_cast<size_t>(pool.block)].bblocks)
        for (int32_t t : v.bblock_types(bb)) pool.type_ok[static_cast<size_t>(t)] = (*pool.parent_ok)[static_cast<size_t>(t)];
    }
    return pool.type_ok;
  }

  // Nodes a pool's job needs: its node count, or for tasks that spread, as many nodes as
  // its tasks fill on the largest nodes it may use.
  int32_t nodes_needed(const Pool& pool) {
    const JobShape& sh = pool.shape;
    if (!sh.spread) return sh.units;
    if (type_node_.empty()) {
      type_node_.assign(snap_.types.size(), -1);
      for (int32_t n = snap_.map.node_count() - 1; n >= 0; --n) type_node_[static_cast<size_t>(snap_.map.type_of(n))] = n;
    }
    int32_t most = 0;
    for (size_t t = 0; t < type_node_.size(); ++t) {
      int32_t n = type_node_[t];
      if (n < 0 || !pool.type_ok[t]) continue;
      most = std::max(most, snap_.map.units_for(n, snap_.map.total_cpus(n), snap_.map.total_mem(n), snap_.map.total_gpus(n), sh.need));
    }
    return most <= 0 ? 1 : (sh.units + most - 1) / most;
  }

  int64_t nodes_of_type(size_t type) {
    if (type_nodes_.empty()) {
      type_nodes_.assign(snap_.types.size(), 0);
      for (int32_t n = 0; n < snap_.map.node_count(); ++n) ++type_nodes_[static_cast<size_t>(snap_.map.type_of(n))];
    }
    return type_nodes_[type];
  }

  // --exclusive=topo (Slurm's WHOLE_TOPO, also every job of a partition with
  // exclusive_topo): no other job runs in the base blocks such a job runs in.
  bool whole_topo(const Job& job, int32_t part) const {
    return job.spec.exclusive_topo || (part >= 0 && snap_.parts[static_cast<size_t>(part)]->exclusive_topo);
  }
  bool whole_topo(const Job& job) const { return exclusive_topo_job(s_, job); }

  // Holds every node of `bblocks` that is not in `own` from `from` to `to`: nothing else
  // runs beside an exclusive=topo job in its base blocks (they show as BLOCKED).
  void hold_bblocks(TopoView& v, const std::set<int32_t>& bblocks, const std::vector<int32_t>& own, int32_t from, int32_t to) {
    TimeMap& map = snap_.map;
    for (int32_t bb : bblocks)
      for (int32_t n : v.bblock_nodes(bb))
        if (std::find(own.begin(), own.end(), n) == own.end())
          map.take(n, from, to, from == 0 ? map.free_cpus(n) : map.total_cpus(n),
                   from == 0 ? map.free_mem(n) : map.total_mem(n), from == 0 ? map.free_gpus(n) : map.total_gpus(n));
  }

  // Running exclusive=topo jobs hold the rest of their base blocks (in their partition's
  // topology) until they end.
  void hold_exclusive_blocks() {
    for_each_job_in(s_, s_.running, [&](const Job& j) {
      if (!whole_topo(j)) return;
      auto part = snap_.part_index.find(j.partition.view());
      TopoView& v = views_[part == snap_.part_index.end() ? 0 : static_cast<size_t>(snap_.part_topo[static_cast<size_t>(part->second)])];
      if (!v.active()) return;
      std::set<int32_t> bblocks;
      std::vector<int32_t> own;
      for (const auto& a : j.alloc) {
        if (auto it = v.topo().node_bblock.find(a.node); it != v.topo().node_bblock.end()) bblocks.insert(it->second);
        if (int32_t n = snap_.node_index.find(a.node); n >= 0) own.push_back(n);
      }
      hold_bblocks(v, bblocks, own, 0, snap_.release_of(j));
    });
  }

  // find(), with the pools where the job is exclusive=topo placed by whole base blocks, and
  // a job of segments by segments.
  bool find_for(const Job& job, const std::vector<Pool>& pools, const NodeFilter& f, int32_t last_slot, Placement& best) {
    auto plain = [&](const std::vector<Pool>& in, Placement& out) { return find_plain(in, f, last_slot, out); };
    auto whole = [&](const Pool& pool) { return whole_topo(job, pool.part) && view(pool).active(); };
    if (!any_topology_ || !job.spec.nodelist.empty() || std::none_of(pools.begin(), pools.end(), whole))
      return plain(pools, best);
    whole_pools_.clear();  // whole blocks first: a job of segments there takes whole base blocks
    other_pools_.clear();
    for (const Pool& pool : pools) (whole(pool) ? whole_pools_ : other_pools_).push_back(pool);
    bool found = plain(other_pools_, best);
    Placement p;
    if (find_whole_topo(whole_pools_, f, found ? std::min(last_slot, best.slot - 1) : last_slot, p)) {
      best = std::move(p);
      found = true;
    }
    return found;
  }

  // find() or, for pools of segments (--segment in a block topology), find_segmented(); a
  // job of partitions of several topologies may have both: the earlier start wins.
  bool find_plain(const std::vector<Pool>& in, const NodeFilter& f, int32_t last_slot, Placement& best) {
    auto segmented = [](const Pool& p) { return p.segment > 0; };
    if (std::none_of(in.begin(), in.end(), segmented)) return find(in, f, last_slot, best);
    if (std::all_of(in.begin(), in.end(), segmented)) return find_segmented(in, f, last_slot, best);
    segment_pools_.clear();
    unsegmented_pools_.clear();
    for (const Pool& p : in) (segmented(p) ? segment_pools_ : unsegmented_pools_).push_back(p);
    bool found = find(unsegmented_pools_, f, last_slot, best);
    Placement p;
    if (find_segmented(segment_pools_, f, found ? std::min(last_slot, best.slot - 1) : last_slot, p)) {
      best = std::move(p);
      found = true;
    }
    return found;
  }

  // A job of segments: the earliest slot at or before `last_slot` at which its segments,
  // each inside one block of the segment size's level, fit (segments need not share a
  // higher block; several may share one).
  bool find_segmented(const std::vector<Pool>& pools, const NodeFilter& f, int32_t last_slot, Placement& best) {
    bool found = false;
    for (const Pool& pool : pools) {
      int32_t last = found ? std::min(last_slot, best.slot - 1) : last_slot;
      Placement p;
      bool ok = last >= 0 && segment_placement(pool, f, 0, p);
      for (int32_t from = 1, tries = 0; !ok && from <= last && tries < 32; ++tries) {
        int32_t s = earliest(pool, f, from, last);
        if (s < 0) break;
        ok = segment_placement(pool, f, s, p);
        from = s + 1;
      }
      if (!ok) continue;
      best = std::move(p);
      found = true;
      if (best.slot == 0) break;
    }
    return found;
  }

  // Segments at `slot`: per block of the segment's level, the nodes that can take the job
  // there; segments go to the blocks with fewest such nodes first (best fit).
  bool segment_placement(const Pool& pool, const NodeFilter& f, int32_t slot, Placement& p) {
    TopoView& v = view(pool);
    const BlockTopology& topo = v.topo();
    int32_t level = topo.level_for(pool.segment);
    std::vector<int32_t> blocks = level < 0 ? std::vector<int32_t>{-1} : topo.by_level[static_cast<size_t>(level)];
    std::vector<std::pair<size_t, std::vector<int32_t>>> usable;  // (count, nodes) per block
    for (int32_t b : blocks) {
      std::vector<int32_t> nodes;
      for (int32_t bb : b < 0 ? topo.by_level[0] : topo.blocks[static_cast<size_t>(b)].bblocks)
        for (int32_t n : v.bblock_nodes(bb))
          if (mask(pool)[snap_.map.type_of(n)] && (f.ok.empty() || f.ok[n]) && snap_.map.units_at(n, pool.shape.need, slot) >= 1)
            nodes.push_back(n);
      if (static_cast<int32_t>(nodes.size()) >= pool.segment) usable.emplace_back(nodes.size(), std::move(nodes));
    }
    std::stable_sort(usable.begin(), usable.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    p = Placement{};
    int32_t left = pool.shape.units / pool.segment;
    for (const auto& [count, nodes] : usable)
      for (size_t i = 0; left > 0 && i + static_cast<size_t>(pool.segment) <= nodes.size(); i += static_cast<size_t>(pool.segment), --left)
        for (size_t k = i; k < i + static_cast<size_t>(pool.segment); ++k) p.nodes.emplace_back(nodes[k], 1);
    if (left > 0) return false;
    p.slot = slot;
    p.pool = &pool;
    return true;
  }

  // An exclusive=topo job's earliest placement over `pools` at or before `last_slot`: in
  // each pool's block, the base blocks in the order they become idle for good (then block
  // order), as many as hold its nodes; it starts when the last of them is idle.
  bool find_whole_topo(const std::vector<Pool>& pools, const NodeFilter& f, int32_t last_slot, Placement& best) {
    bool found = false;
    for (const Pool& pool : pools) {
      Placement p;
      if (!whole_topo_placement(pool, f, p) || p.slot > last_slot || (found && p.slot >= best.slot)) continue;
      best = std::move(p);
      found = true;
      if (best.slot == 0) break;
    }
    return found;
  }

  bool whole_topo_placement(const Pool& pool, const NodeFilter& f, Placement& p) {
    TopoView& v = view(pool);
    const BlockTopology& topo = v.topo();
    const JobShape& sh = pool.shape;
    std::vector<int32_t> bblocks;
    if (pool.block >= 0) bblocks = topo.blocks[static_cast<size_t>(pool.block)].bblocks;
    else bblocks = topo.by_level[0];
    std::vector<std::pair<int32_t, int32_t>> order;  // (idle for good from, base block)
    for (int32_t bb : bblocks) {
      int32_t from = 0;
      for (int32_t n : v.bblock_nodes(bb)) from = std::max(from, snap_.map.idle_from(n));
      if (from < snap_.map.horizon()) order.emplace_back(from, bb);
    }
    std::stable_sort(order.begin(), order.end());
    p = Placement{};
    int32_t units = 0;
    for (const auto& [from, bb] : order) {
      for (int32_t n : v.bblock_nodes(bb)) {
        if (units >= sh.units) break;
        if (!mask(pool)[snap_.map.type_of(n)] || (!f.ok.empty() && !f.ok[n])) continue;
        int32_t most = snap_.map.units_for(n, snap_.map.total_cpus(n), snap_.map.total_mem(n), snap_.map.total_gpus(n), sh.need);
        if (most < 1) continue;
        int32_t take = sh.spread ? std::min(most, sh.units - units) : 1;
        p.nodes.emplace_back(n, take);
        units += take;
      }
      p.slot = from;
      if (units >= sh.units) break;
    }
    if (units < sh.units) return false;
    p.pool = &pool;
    p.whole_topo = true;
    return true;
  }

  // Fills the -w/-x filter, or the reason the job cannot use it (kNone: it can).
  JobReason filter_for(const Job& job, NodeFilter& f) {
    if (job.spec.nodelist.empty() && job.spec.exclude.empty()) return JobReason::kNone;
    f.ok.assign(snap_.map.node_count(), 1);
    if (!job.spec.nodelist.empty()) {
      auto names = expand_hostlist(job.spec.nodelist);
      if (!names) return JobReason::kBadConstraints;
      if (only_listed_nodes(job.spec, names->size())) std::fill(f.ok.begin(), f.ok.end(), 0);
      for (const auto& n : *names) {
        int32_t idx = snap_.node_index.find(n);
        if (idx < 0) return JobReason::kReqNodeNotAvail;
        f.ok[idx] = 1;
        f.required.push_back(idx);
      }
    }
    if (!job.spec.exclude.empty()) {
      auto names = expand_hostlist(job.spec.exclude);
      if (!names) return JobReason::kBadConstraints;
      for (const auto& n : *names) {
        if (int32_t idx = snap_.node_index.find(n); idx >= 0) f.ok[idx] = 0;
      }
    }
    return JobReason::kNone;
  }

  int32_t usable_in_class(int32_t cls, const Pool& pool, const NodeFilter& f) {
    const auto& members = snap_.map.class_nodes(cls);
    if (members.empty() || !mask(pool)[snap_.map.class_type(cls)]) return 0;
    if (f.ok.empty()) return static_cast<int32_t>(members.size());
    int32_t n = 0;
    for (int32_t m : members) n += f.ok[m];
    return n;
  }

  // Earliest slot in [from, last] (from >= 1) where the pool offers enough units in
  // total, or -1. Leaves in room_ the classes with room there but none now.
  int32_t earliest(const Pool& pool, const NodeFilter& f, int32_t from, int32_t last) {
    ++plan_.stats.sweeps;
    if (!f.ok.empty()) return earliest_filtered(pool, f, from, last);
    if (pool.block >= 0)  // its mask holds only its own nodes' types
      return snap_.map.earliest_among(pool.shape.need, mask(pool), view(pool).block_nodes(pool.block), pool.shape.units, from, last,
                                      room_, plan_.stats.swept);
    return snap_.map.earliest(pool.shape.need, mask(pool), pool.shape.units, from, last, room_, plan_.stats.swept);
  }

  // The same for jobs with -w/-x, class by class, counting the nodes they may use.
  int32_t earliest_filtered(const Pool& pool, const NodeFilter& f, int32_t from, int32_t last) {
    const JobShape& sh = pool.shape;
    int32_t h = snap_.map.horizon();
    last = std::min(last, h - 1);
    room_.clear();
    if (from > last) return -1;
    diff_.assign(h + 1, 0);
    swept_.clear();
    const auto& live = snap_.map.live_classes();
    plan_.stats.swept += static_cast<int64_t>(live.size());
    for (int32_t c : live) {
      int32_t n = usable_in_class(c, pool, f);
      if (!n) continue;
      snap_.map.intervals(c, sh.need, ivs_);
      for (const Interval& iv : ivs_) {
        if (iv.from > last || iv.to <= from) continue;
        diff_[std::max(iv.from, from)] += int64_t{iv.units} * n;
        diff_[std::min(iv.to, h)] -= int64_t{iv.units} * n;
        swept_.push_back({c, iv.from, iv.to});
      }
    }
    int64_t total = 0;
    for (int32_t s = from; s <= last; ++s) {
      total += diff_[s];
      if (total < sh.units) continue;
      for (const auto& [c, lo, hi] : swept_)
        if (lo <= s && s < hi) room_.push_back(c);
      return s;
    }
    return -1;
  }

  Option option(int32_t first, std::span<const int32_t> nodes) const {
    return {snap_.types[snap_.map.type_of(first)].weight, snap_.map.free_cpus(first), first, nodes};
  }

  static void sort_options(std::vector<Option>& options) {
    std::sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
      return std::tie(a.weight, a.free_cpus, a.first) < std::tie(b.weight, b.free_cpus, b.first);
    });
  }

  // The now groups with room for a unit now (by what their nodes have free, memory
  // aside), marked in group_room_; returns the units they could offer now at most.
  int64_t groups_with_room(const Pool& pool, bool now, std::vector<Option>& options) {
    options.clear();
    group_room_.assign(static_cast<size_t>(snap_.map.now_group_count()), 0);
    int64_t upper = 0;
    auto visit = [&](int32_t g) {
      const TimeMap::NowGroup& group = snap_.map.now_group(g);
      if (group.nodes.empty() || group.free_cpus <= 0 || !mask(pool)[group.type]) return;
      int32_t first = group.nodes.front();
      int32_t u = snap_.map.units_for(first, group.free_cpus, snap_.map.total_mem(first), group.free_gpus, pool.shape.need);
      if (u <= 0) return;
      upper += int64_t{u} * static_cast<int64_t>(group.nodes.size());
      options.push_back(option(first, group.nodes));
      if (now) options.back().most = u;  // later a node may have more
      group_room_[static_cast<size_t>(g)] = 1;
    };
    // A block's pool may use only its own types: their groups alone, not a thousand
    // blocks' (the options are sorted after, so the order they are found in is no matter).
    if (pool.block >= 0) {
      TopoView& v = view(pool);
      for (int32_t bb : v.topo().blocks[static_cast<size_t>(pool.block)].bblocks)
        for (int32_t t : v.bblock_types(bb))
          for (int32_t g : type_groups(t)) visit(g);
    } else {
      for (int32_t g = 0; g < snap_.map.now_group_count(); ++g) visit(g);
    }
    return upper;
  }

  // The now groups of node type `t`. The time map only adds groups (a node that changes
  // joins a new one or an old one), so those added since the last call are filed here.
  const std::vector<int32_t>& type_groups(int32_t t) {
    if (type_groups_.empty()) type_groups_.resize(snap_.types.size());
    for (; groups_filed_ < snap_.map.now_group_count(); ++groups_filed_)
      type_groups_[static_cast<size_t>(snap_.map.now_group(groups_filed_).type)].push_back(groups_filed_);
    return type_groups_[static_cast<size_t>(t)];
  }

  // The nodes with room at `slot` after earliest() found it, best first: the groups with
  // room now, and room_'s nodes in the other groups (their runs, group by group).
  void options_at(const Pool& pool, std::vector<Option>& options) {
    groups_with_room(pool, false, options);
    later_.clear();
    for (int32_t c : room_) {
      const auto& members = snap_.map.class_nodes(c);
      int32_t g = snap_.map.now_group_of(members.front());
      if (group_room_[static_cast<size_t>(g)]) continue;  // its group is there whole
      for (int32_t n : members) later_.emplace_back(g, n);
    }
    std::sort(later_.begin(), later_.end());
    later_nodes_.clear();
    for (const auto& gn : later_) later_nodes_.push_back(gn.second);
    for (size_t i = 0; i < later_.size();) {
      size_t j = i;
      while (j < later_.size() && later_[j].first == later_[i].first) ++j;
      const auto& group = snap_.map.now_group(later_[i].first);
      options.push_back(option(group.nodes.front(), std::span<const int32_t>(later_nodes_).subspan(i, j - i)));
      i = j;
    }
    sort_options(options);
    order_by_leaf(pool, options);
  }

  // Starting now needs only what nodes have free now: their now groups, best first.
  // False, without options, when even every free CPU together would not be enough.
  bool options_now(const Pool& pool, std::vector<Option>& options) {
    if (groups_with_room(pool, true, options) < pool.shape.units) {
      options.clear();
      return false;
    }
    sort_options(options);
    order_by_leaf(pool, options);
    return true;
  }

  // Below a switch above the leaves (topology/tree): after weight (which overrides
  // topology, as in Slurm), the nodes leaf by leaf in the order Slurm's eval_nodes_tree
  // takes leaves: again and again, of the leaves left, one that holds what the job still
  // needs with fewest nodes (best fit), else the one with most room; among those, the
  // nearest to the first leaf taken (the lowest switch above both). An option's nodes are
  // in one leaf (one base block).
  void order_by_leaf(const Pool& pool, std::vector<Option>& options) {
    TopoView& v = view(pool);
    if (!v.tree() || pool.block < 0 || v.topo().blocks[static_cast<size_t>(pool.block)].level == 0) return;
    auto leaf_of = [&](const Option& o) { return v.bblock_of_node(o.first); };
    leaf_room_.assign(v.topo().by_level[0].size(), 0);  // leaf -> nodes with room
    std::vector<int32_t> left_leaves;
    for (const Option& o : options) {
      int64_t& room = leaf_room_[static_cast<size_t>(leaf_of(o))];
      if (room == 0) left_leaves.push_back(leaf_of(o));
      room += static_cast<int64_t>(o.nodes.size());
    }
    leaf_rank_.assign(leaf_room_.size(), INT32_MAX);
    int32_t turn = 0, first = -1;
    for (int64_t left = pool.nodes_now; left > 0 && !left_leaves.empty(); ++turn) {
      size_t best = 0;
      std::tuple<int, int32_t, int64_t> best_key;
      for (size_t i = 0; i < left_leaves.size(); ++i) {
        int64_t n = leaf_room_[static_cast<size_t>(left_leaves[i])];
        int32_t dist = first < 0 ? 0 : v.join_level(first, left_leaves[i]);
        auto key = n >= left ? std::tuple(0, dist, n) : std::tuple(1, dist, -n);
        if (i == 0 || key < best_key) best = i, best_key = key;
      }
      int32_t leaf = left_leaves[best];
      left_leaves.erase(left_leaves.begin() + static_cast<std::ptrdiff_t>(best));
      leaf_rank_[static_cast<size_t>(leaf)] = turn;
      left -= leaf_room_[static_cast<size_t>(leaf)];
      if (first < 0) first = leaf;
    }
    // The leaves not needed to cover the job (a node may still refuse it): roomiest first.
    std::stable_sort(left_leaves.begin(), left_leaves.end(), [&](int32_t a, int32_t b) {
      return leaf_room_[static_cast<size_t>(a)] > leaf_room_[static_cast<size_t>(b)];
    });
    for (int32_t leaf : left_leaves) leaf_rank_[static_cast<size_t>(leaf)] = turn++;
    auto key = [&](const Option& o) { return std::pair(o.weight, leaf_rank_[static_cast<size_t>(leaf_of(o))]); };
    std::stable_sort(options.begin(), options.end(), [&](const Option& a, const Option& b) { return key(a) < key(b); });
  }

  // The leaf switches (base blocks) a placement's nodes are on.
  int32_t leaves_of(const Placement& p) const {
    std::set<int32_t> leaves;
    for (const auto& [node, units] : p.nodes) leaves.insert(view(*p.pool).bblock_of_node(node));
    return static_cast<int32_t>(leaves.size());
  }

  // --switches=N[@wait] (topology/tree): at most N leaf switches, while the job has waited
  // less than its wait (capped by max_switch_wait) since it became eligible; 0: any number.
  int32_t leaf_limit(const Job& job) const {
    if (job.spec.switches <= 0) return 0;
    Duration wait = job.spec.switch_wait < 0 ? cfg_.max_switch_wait : std::min(job.spec.switch_wait, cfg_.max_switch_wait);
    Time since = std::max(job.eligible_time, job.submit_time);
    return snap_.now - since < wait ? job.spec.switches : 0;
  }

  // Chooses nodes at `slot` from `options` (best first): -w nodes first, then count
  // constraints, then lower weight, then best fit (fewest free CPUs now) to keep big holes open.
  bool place(const Pool& pool, const NodeFilter& f, int32_t slot, const std::vector<Option>& options, Placement& out) {
    const JobShape& sh = pool.shape;
    bool now = slot == 0;
    out = Placement{slot, &pool, {}};
    taken_.assign(snap_.map.node_count(), 0);
    auto& taken = taken_;
    int64_t units = 0;
    int32_t want_nodes = sh.spread ? sh.nodes_max : (now ? sh.nodes_max : sh.units);
    auto take = [&](int32_t node, int32_t max_units) {
      if (taken[node] || static_cast<int32_t>(out.nodes.size()) >= want_nodes) return false;
      int32_t u = std::min(snap_.map.units_at(node, sh.need, slot), max_units);
      if (now && u > 0 && gpu_job(sh.need)) u = std::min(u, units_by_free_gpus(node, sh.need, pool.gpu_type));
      if (u <= 0) return false;
      taken[node] = 1;
      out.nodes.emplace_back(node, u);
      units += u;
      return true;
    };
    auto left = [&]() { return static_cast<int32_t>(std::max<int64_t>(0, sh.units - units)); };
    for (size_t i = 0; i < f.required.size(); ++i) {  // spread: a task kept for each -w node still to come
      int32_t node = f.required[i], later = static_cast<int32_t>(f.required.size() - 1 - i);
      if (!mask(pool)[snap_.map.type_of(node)] || !take(node, sh.spread ? left() - later : 1)) return false;
    }
    if (pool.alt) {
      for (const auto& [feature, count] : pool.alt->counts) {
        int32_t have = 0;
        for (const auto& [node, u] : out.nodes) have += has_feature(snap_.types[snap_.map.type_of(node)].features, feature);
        for (const Option& o : options) {
          if (have >= count) break;
          if (!has_feature(snap_.types[snap_.map.type_of(o.first)].features, feature)) continue;
          for (int32_t node : o.nodes) {
            if (have >= count) break;
            if ((f.ok.empty() || f.ok[node]) && take(node, sh.spread ? std::max(1, left()) : 1)) ++have;
          }
        }
        if (have < count) return false;
      }
    }
    if (sh.spread && units < sh.units && out.nodes.empty()) {  // prefer one node that holds every task
      for (const Option& o : options) {
        int32_t node = -1;
        if (o.most < sh.units) continue;
        for (int32_t m : o.nodes)
          if ((f.ok.empty() || f.ok[m]) && snap_.map.units_at(m, sh.need, slot) >= sh.units) { node = m; break; }
        if (node >= 0) { take(node, sh.units); break; }
      }
    }
    auto enough = [&] { return sh.spread ? units >= sh.units : static_cast<int32_t>(out.nodes.size()) >= want_nodes; };
    for (const Option& o : options) {
      if (enough()) break;
      for (int32_t node : o.nodes) {
        if (enough()) break;
        if (f.ok.empty() || f.ok[node]) take(node, sh.spread ? left() : 1);
      }
    }
    return units >= sh.units && (leaf_limit_ <= 0 || !view(pool).tree() || leaves_of(out) <= leaf_limit_);
  }

  // Earliest placement at or before slot `last` over every pool, verified node by node.
  bool find(const std::vector<Pool>& pools, const NodeFilter& f, int32_t last_slot, Placement& best) {
    if (last_slot >= 0)
      for (const Pool& pool : pools) {  // anything that starts now, in the pools' order
        if (pool.free_now >= 0 && pool.free_now < pool.nodes_now) continue;  // a block too full
        Placement p;
        if (options_now(pool, options_) && place(pool, f, 0, options_, p)) {
          best = std::move(p);
          if (oracle_last_ > 0 && pool.free_now >= 0 && !search_every_block_)
            return least_fragmenting(pools, f, last_slot, best);
          return true;  // nothing starts sooner than now
        }
      }
    bool found = false;
    for (const Pool* pool : later_order(pools)) {
      int32_t last = last_slot;
      if (found) last = std::min(last, best.slot - 1);
      Placement p;
      if (earliest_placement(*pool, f, 1, last, p)) {
        best = std::move(p);
        found = true;
      }
    }
    return found;
  }

  // The earliest placement in the pool in [from, last] (from >= 1), verified node by node.
  bool earliest_placement(const Pool& pool, const NodeFilter& f, int32_t from, int32_t last, Placement& p) {
    for (int32_t tries = 0; tries < 32; ++tries) {
      int32_t s = earliest(pool, f, from, last);
      if (s < 0) return false;
      options_at(pool, options_);
      if (place(pool, f, s, options_, p)) return true;
      from = s + 1;
    }
    return false;
  }

  // hq's fragmentation oracle ([scheduler] bf_topopt_delay): the last slot to which a job
  // that could start now may be put off, counted from when it became eligible; 0: none.
  // Only where every pool is placed by blocks.
  int32_t oracle_bound(const Job& job, const std::vector<Pool>& pools) const {
    auto by_blocks = [&](const Pool& pool) {  // one block topology for all (costs in one measure)
      return view(pool).active() && !view(pool).tree() && pool.topo == pools.front().topo;
    };
    if (cfg_.bf_topopt_delay <= 0 || pools.empty() || !std::all_of(pools.begin(), pools.end(), by_blocks) ||
        !job.spec.nodelist.empty())
      return 0;
    Time until = std::max(job.eligible_time, job.submit_time) + cfg_.bf_topopt_delay;
    if (until <= snap_.now) return 0;
    return static_cast<int32_t>(std::min<Time>((until - snap_.now) / snap_.resolution, snap_.map.horizon() - 1));
  }

  // Of `best` (the best fit now) and the placements in up to bf_topopt_iterations other
  // blocks (now, or the earliest by oracle_last_ and `last_slot`: a later one is reserved),
  // the cheapest start now, or the cheapest later one when it costs less than that start
  // (FragmentCost::better_than with `later`); ties go to the earlier, then the best fit.
  bool least_fragmenting(const std::vector<Pool>& pools, const NodeFilter& f, int32_t last_slot, Placement& best) {
    FragmentCost now_cost = fragment_cost(best), later_cost;
    int64_t floor = best.pool->shape.need.whole_node ? static_cast<int64_t>(best.nodes.size()) : 0;
    int32_t last = std::min(oracle_last_, last_slot);  // a later place is only worth it reserved
    Placement later;
    int32_t tries = 0;
    for (const Pool& pool : pools) {
      if (now_cost.score <= floor && now_cost.spread <= floor) break;  // nothing does better
      if (pool.free_now < 0 || &pool == best.pool) continue;
      if (++tries > cfg_.bf_topopt_iterations) break;
      Placement p;
      bool now = pool.free_now >= pool.nodes_now && options_now(pool, options_) && place(pool, f, 0, options_, p);
      if (!now && (last < 1 || !earliest_placement(pool, f, 1, last, p))) continue;
      FragmentCost cost = fragment_cost(p);
      if (now && cost.better_than(now_cost, false)) {
        best = std::move(p);
        now_cost = cost;
      } else if (!now && (later.slot < 0 || cost.better_than(later_cost, false) ||
                          (!later_cost.better_than(cost, false) && p.slot < later.slot))) {
        later = std::move(p);
        later_cost = cost;
      }
    }
    held_by_oracle_ = later.slot > 0 && later_cost.better_than(now_cost, true);
    if (held_by_oracle_) best = std::move(later);
    plan_.stats.held += held_by_oracle_ ? 1 : 0;
    return true;
  }

  // What a placement costs the blocks at its slot: `score`, what it adds to Slurm's
  // fragmentation score (the block nodes it makes busy and the whole blocks it breaks);
  // `spread`, what it takes from the sum of squares of each base block's idle nodes (taking
  // from the blocks with fewest idle nodes costs least: emptier blocks stay fit for larger
  // jobs). A later placement must cost less than half as much spread to be worth the wait.
  struct FragmentCost {
    int64_t score = 0, spread = 0, promised = 0;
    bool better_than(const FragmentCost& o, bool later) const {
      if (promised != o.promised) return promised < o.promised;
      if (score != o.score) return score < o.score;
      return later ? spread * 2 < o.spread : spread < o.spread;
    }
  };
  FragmentCost fragment_cost(const Placement& p) {
    TopoView& v = view(*p.pool);
    const std::vector<int32_t>& idle = v.idle_by_bblock(p.slot);
    taken_by_bblock_.assign(idle.size(), 0);
    for (const auto& [node, units] : p.nodes) {
      int32_t bb = v.bblock_of_node(node);
      if (bb >= 0 && snap_.map.idle_at(node, p.slot)) ++taken_by_bblock_[static_cast<size_t>(bb)];
    }
    FragmentCost c;
    for (const auto& [node, units] : p.nodes)
      for (const Change& ch : snap_.map.changes(node))
        if (ch.slot > p.slot && ch.cpus < 0) { c.promised += 1; break; }
    c.score = fragmentation_added(v.topo(), idle, taken_by_bblock_);
    for (const TopoBlock& block : v.topo().blocks) {  // base blocks and aggregated ones
      int64_t before = 0, taken = 0;
      for (int32_t bb : block.bblocks) {
        before += idle[static_cast<size_t>(bb)];
        taken += taken_by_bblock_[static_cast<size_t>(bb)];
      }
      if (taken == 0) continue;
      int64_t after = std::max<int64_t>(0, before - taken);
      c.spread += before * before - after * after;
    }
    return c;
  }

  // The pools searched for a later start: all of them, but of the pools of single blocks
  // (topology) only the kLaterBlocks emptiest now, which are the likeliest to free up
  // first: a search per block of a level with a thousand blocks would cost seconds.
  // Preemption searches every block (search_every_block_).
  static constexpr size_t kLaterBlocks = 16;
  const std::vector<const Pool*>& later_order(const std::vector<Pool>& pools) {
    later_pools_.clear();
    for (const Pool& pool : pools) later_pools_.push_back(&pool);
    auto blocks = std::stable_partition(later_pools_.begin(), later_pools_.end(), [](const Pool* p) { return p->free_now < 0; });
    if (!search_every_block_ && static_cast<size_t>(later_pools_.end() - blocks) > kLaterBlocks) {
      std::stable_sort(blocks, later_pools_.end(), [](const Pool* a, const Pool* b) { return a->free_now > b->free_now; });
      later_pools_.resize(static_cast<size_t>(blocks - later_pools_.begin()) + kLaterBlocks);
    }
    // Under one switch tree, a tie in start time goes to the lowest switch (find() takes the first).
    if (!later_pools_.empty() && std::all_of(later_pools_.begin(), later_pools_.end(), [&](const Pool* p) {
          return view(*p).tree() && p->topo == later_pools_.front()->topo;
        }))
      std::stable_sort(later_pools_.begin(), later_pools_.end(), [&](const Pool* a, const Pool* b) {
        return block_level(*a) < block_level(*b);
      });
    return later_pools_;
  }

  int32_t block_level(const Pool& pool) const {
    return pool.block < 0 ? INT32_MAX : view(pool).topo().blocks[static_cast<size_t>(pool.block)].level;
  }

  static bool gpu_job(const UnitNeed& need) { return need.gpus > 0 || need.node_gpus > 0; }

  // What the GPUs of the asked type free on `node` right now (after this pass's starts) allow.
  int32_t units_by_free_gpus(int32_t node, const UnitNeed& need, const std::string& type) {
    int32_t free = free_gpus_of_type(snap_.nodes[node]->gpus, gpus_used(node), type) - need.node_gpus;
    if (free < 0) return 0;
    return need.gpus > 0 ? free / need.gpus : need.max_units;
  }

  // The node's GPUs in use, including this pass's starts.
  std::vector<char>& gpus_used(int32_t node) {
    auto [it, fresh] = gpu_used_.try_emplace(node);
    if (fresh) it->second = snap_.nodes[node]->gpu_used;
    return it->second;
  }

  // A start (slot 0) gets the GPU indices; a reservation only holds a count. The nodes go
  // in node-table order, whatever order placement found them in, as Slurm's allocations
  // do: the first node of the job's nodelist is its first node (the batch host).
  std::vector<NodeAlloc> commit(const Placement& p) {
    for (TopoView& v : views_) {
      if (p.whole_topo) v.forget_free();  // its holds change other nodes: counted again when next needed
      v.forget_idle();
    }
    const JobShape& sh = p.pool->shape;
    std::vector<std::pair<int32_t, int32_t>> nodes = p.nodes;
    std::sort(nodes.begin(), nodes.end());
    std::vector<NodeAlloc> alloc;
    for (const auto& [node, units] : nodes) {
      NodeAlloc a;
      a.node = snap_.nodes[node]->name;
      int32_t gpus = sh.need.node_gpus + units * sh.need.gpus;
      if (sh.need.whole_node) {
        a.cpus = snap_.map.total_cpus(node);
        a.mem_mib = snap_.map.total_mem(node);
        gpus = snap_.map.total_gpus(node);
      } else {
        a.cpus = units * unit_cpus(snap_.map.size_of(node), sh.need);
        a.mem_mib = sh.need.all_mem ? snap_.map.total_mem(node) : sh.need.node_mem + units * sh.need.mem;
      }
      a.tasks = sh.spread ? units : sh.tasks_per_node;
      if (p.slot == 0 && gpus > 0) {
        std::vector<char>& used = gpus_used(node);
        a.gpus = pick_gpus(snap_.nodes[node]->gpus, used, gpus, sh.need.whole_node ? "" : p.pool->gpu_type);
        for (int32_t g : a.gpus) {
          if (static_cast<size_t>(g) >= used.size()) used.resize(static_cast<size_t>(g) + 1, 0);
          used[static_cast<size_t>(g)] = 1;
        }
      }
      int32_t end = sh.need.slots == kForever ? kForever : p.slot + sh.need.slots;
      bool had_free = snap_.map.free_cpus(node) > 0;
      snap_.map.take(node, p.slot, end, a.cpus, a.mem_mib, gpus);
      if (had_free && snap_.map.free_cpus(node) <= 0)  // a start filled it
        for (TopoView& v : views_) v.node_filled(node);
      alloc.push_back(std::move(a));
    }
    if (p.whole_topo) {
      std::set<int32_t> bblocks;
      std::vector<int32_t> own;
      for (const auto& [node, units] : nodes) {
        bblocks.insert(view(*p.pool).bblock_of_node(node));
        own.push_back(node);
      }
      bblocks.erase(-1);
      hold_bblocks(view(*p.pool), bblocks, own, p.slot, sh.need.slots == kForever ? kForever : p.slot + sh.need.slots);
    }
    return alloc;
  }

  bool may_reserve(const Job& job, int64_t priority, const std::vector<int32_t>& parts) const {
    switch (cfg_.policy) {
      case SchedPolicy::kEasy: return plan_.reservations.empty();
      case SchedPolicy::kFifo: return true;  // only queue heads get here: an expected start
      case SchedPolicy::kBackfill: break;
    }
    if (snap_.now - job.eligible_time < cfg_.bf_min_age_reserve) return false;
    if (priority < cfg_.bf_min_prio_reserve) return false;
    if (cfg_.bf_job_part_count_reserve > 0) {
      for (int32_t p : parts)
        if (reserved_in_part_[p] >= cfg_.bf_job_part_count_reserve) return false;
    }
    return true;
  }

  // Caps on jobs tested past a blocked one (Slurm's bf_max_job_*).
  bool over_test_caps(uint32_t uid, int32_t part) {
    if (cfg_.bf_max_job_test > 0 && plan_.stats.tested >= cfg_.bf_max_job_test) return true;
    if (cfg_.bf_max_job_user > 0 && tested_by_user_[uid] >= cfg_.bf_max_job_user) return true;
    if (cfg_.bf_max_job_part > 0 && tested_in_part_[part] >= cfg_.bf_max_job_part) return true;
    ++plan_.stats.tested;
    ++tested_by_user_[uid];
    ++tested_in_part_[part];
    return false;
  }

  void consider(const Candidate& c) {
    ++plan_.stats.considered;
    PendingInfo info{JobId{c.id}, c.job, c.priority};
    std::vector<int32_t>& parts = parts_;
    parts.clear();
    if (c.simple) {  // decided from the candidate: most jobs never read their Job here
      if (c.early != JobReason::kNone) {
        info.reason = c.early;
        return plan_.pending.push_back(std::move(info));
      }
      parts.push_back(c.part);
    } else {
      info.reason = gate(*c.job);
      if (info.reason == JobReason::kNone) info.reason = usable_partitions(*c.job, parts);
      if (info.reason != JobReason::kNone) return plan_.pending.push_back(std::move(info));
    }
    // A QOS list's job starts under its first QOS whose limits allow it (the first, unenforced).
    std::string qos = c.job->spec.extra->qos.find(',') == std::string::npos ? "" : first_qos(c.job->spec.extra->qos);
    if (usage_ && (info.reason = usage_->blocked(*c.job, &qos)) != JobReason::kNone)  // an accounting limit
      return plan_.pending.push_back(std::move(info));
    // Past the test caps a job behind a blocked one is not looked at further (Slurm too).
    bool behind = std::any_of(parts.begin(), parts.end(), [&](int32_t p) { return blocked_[p] != 0; });
    if (behind && (cfg_.policy == SchedPolicy::kFifo || over_test_caps(c.uid, parts.front()))) {
      info.reason = JobReason::kPriority;
      return plan_.pending.push_back(std::move(info));
    }
    const Job& job = *c.job;
    if (scope_ && job.spec.nodes_min > static_cast<int32_t>(scope_->nodes.size())) {  // more nodes than it holds
      info.reason = JobReason::kBadConstraints;
      return plan_.pending.push_back(std::move(info));
    }
    std::vector<Pool> pools;
    NodeFilter filter;
    leaf_limit_ = leaf_limit(job);
    auto constraint = parse_constraint(job.spec.constraint);
    if (!constraint) info.reason = JobReason::kBadConstraints;
    else pools_for(job, parts, *constraint, pools, job.time_limit);
    if (info.reason == JobReason::kNone) info.reason = filter_for(job, filter);
    if (info.reason == JobReason::kNone && any_topology_ && !filter.required.empty()) confine_to_switch(pools, filter);
    if (info.reason != JobReason::kNone) return plan_.pending.push_back(std::move(info));
    bool can_start = !behind || cfg_.bf_max_job_start == 0 || backfill_starts_ < cfg_.bf_max_job_start;
    // --time-min with a --deadline its whole limit would pass: it starts now with a limit
    // that ends by the deadline, or waits (no reservation: later leaves it less time).
    Duration cap = deadline_cap(job, snap_.now);
    bool reserve = cap == 0 && may_reserve(job, c.priority, parts);
    Placement p;
    oracle_last_ = can_start ? oracle_bound(job, pools) : 0;
    held_by_oracle_ = false;
    bool found = cap == 0 && find_for(job, pools, filter, reserve ? snap_.map.horizon() - 1 : 0, p);
    oracle_last_ = 0;
    // Preempting gives a placement at the victims' grace end, which the job then reserves.
    // Preemption and --time-min place by plain find(): not for jobs of segments or whole blocks.
    // (Per pool, as before named topologies: a job of segments in a block topology, or whole
    // blocks in any, is not plain.)
    bool plain = !any_topology_ || !job.spec.nodelist.empty() ||
                 std::none_of(pools.begin(), pools.end(), [&](const Pool& pool) {
                   const TopoView& v = view(pool);
                   return v.active() && ((job.spec.segment > 0 && !v.tree()) || whole_topo(job, pool.part));
                 });
    bool preempting = cap == 0 && (!found || p.slot > 0) && can_start && !victims_.empty() && !held_by_oracle_ && plain &&
                      preempt_for(job, c.tier, pools, filter, found ? p.slot : kForever, p);
    if (preempting) found = reserve = true;
    Duration lowered = 0;  // --time-min: a shorter limit that lets it start now
    if ((!found || p.slot > 0) && can_start && !preempting && !held_by_oracle_ && plain &&
        (lowered = lowered_limit(job, parts, *constraint, filter, p, cap)) > 0)
      found = true;
    if (found && p.slot == 0 && can_start) {
      const std::string& part = snap_.parts[p.pool->part]->name;
      plan_.starts.push_back({job.id, part, commit(p), c.priority, lowered, qos});
      if (usage_) usage_->start(job, part, plan_.starts.back().alloc, lowered > 0 ? lowered : job.time_limit, qos);
      if (behind) ++backfill_starts_;
      if (job.array_job_id) ++array_running_[job.array_job_id];
      if (job.spec.dependency.find("singleton") != std::string::npos) singletons_started_.insert({job.spec.uid, job.spec.name});
      return;
    }
    if (found && reserve && p.slot > 0) reserve_at(job, p, info);
    info.reason = behind && !preempting ? JobReason::kPriority : JobReason::kResources;
    if (JobReason r = reserved_reason(job, parts); r != JobReason::kNone) info.reason = r;
    for (const Pool& pool : pools) blocked_[pool.part] = 1;
    plan_.pending.push_back(std::move(info));
  }

  // --time-min (Slurm's backfill): the longest limit from the job's --time-min up to its
  // limit (and `cap`, when not 0), to the resolution, with which it starts now; 0 when even
  // --time-min does not. `out` gets that start (its pools are kept in lowered_pools_).
  Duration lowered_limit(const Job& job, const std::vector<int32_t>& parts, const Constraint& constraint,
                         const NodeFilter& filter, Placement& out, Duration cap) {
    if (!job.spec.extra.identity()) return 0;
    Duration lo = job.spec.extra->time_min;
    Duration hi = job.time_limit == kUnlimited ? snap_.map.horizon() * snap_.resolution : job.time_limit;
    if (cap > 0 && cap < hi) {  // the deadline caps it: the cap itself may be the answer
      hi = cap;
      if (lo <= 0 || lo > hi) return 0;
      if (starts_now_with(job, parts, constraint, filter, out, hi)) return hi;
    }
    auto starts_now = [&](Duration limit) { return starts_now_with(job, parts, constraint, filter, out, limit); };
    if (lo <= 0 || lo >= hi || !starts_now(lo)) return 0;
    while (hi - lo > snap_.resolution) {  // lo starts now, hi does not
      Duration mid = lo + (hi - lo) / 2;
      (starts_now(mid) ? lo : hi) = mid;
    }
    starts_now(lo);
    return lo;
  }

  // Whether the job starts now with `limit` (its pools kept in lowered_pools_, `out` the start).
  bool starts_now_with(const Job& job, const std::vector<int32_t>& parts, const Constraint& constraint,
                       const NodeFilter& filter, Placement& out, Duration limit) {
    lowered_pools_.clear();
    pools_for(job, parts, constraint, lowered_pools_, limit);
    if (any_topology_ && !filter.required.empty()) confine_to_switch(lowered_pools_, filter);
    return find(lowered_pools_, filter, 0, out) && out.slot == 0;
  }

  // Holds the placement's resources from its slot on, for the job's time limit.
  void reserve_at(const Job& job, const Placement& p, PendingInfo& info) {
    Reservation r;
    r.job = job.id;
    r.partition = snap_.parts[p.pool->part]->name;
    r.start = snap_.slot_time(p.slot);
    r.end = job.time_limit == kUnlimited ? 0 : r.start + job.time_limit;
    r.alloc = commit(p);
    info.expected_start = r.start;
    info.reservation = static_cast<int32_t>(plan_.reservations.size());
    ++reserved_in_part_[p.pool->part];
    plan_.reservations.push_back(std::move(r));
  }

  // Running jobs of partitions that allow preemption, past the exempt time: lowest
  // tier first, then the most recently started (the least work lost).
  void collect_victims() {
    for_each_job_in(s_, s_.running, [&](const Job& j) {
      auto it = snap_.part_index.find(j.partition);
      if (j.preempting || j.suspended || it == snap_.part_index.end()) return;
      const PartitionConfig& part = *snap_.parts[it->second];
      if (part.preempt_mode == PreemptMode::kOff || snap_.now - j.start_time < cfg_.preempt_exempt_time) return;
      Victim v{&j, part.priority_tier, part.preempt_mode, part.grace_time, snap_.release_of(j), {}, {}};
      for (const auto& a : j.alloc) {
        int32_t n = snap_.node_index.find(a.node);
        if (n < 0) continue;
        v.nodes.push_back(n);
        v.allocs.push_back(&a);
      }
      if (!v.nodes.empty()) victims_.push_back(std::move(v));
    });
    std::sort(victims_.begin(), victims_.end(), [](const Victim& a, const Victim& b) {
      return std::tie(a.tier, b.job->start_time, b.job->id) < std::tie(b.tier, a.job->start_time, a.job->id);
    });
  }

  bool usable_by(const Victim& v, const std::vector<Pool>& pools, const NodeFilter& f) {
    for (int32_t node : v.nodes) {
      if (!f.ok.empty() && !f.ok[node]) continue;
      for (const Pool& pool : pools)
        if (mask(pool)[snap_.map.type_of(node)]) return true;
    }
    return false;
  }

  // Moves a victim's release to `slot` (preempted) or back to where it was.
  void shift(const Victim& v, int32_t from, int32_t to) {
    for (size_t i = 0; i < v.nodes.size(); ++i)
      snap_.map.move_release(v.nodes[i], from, to, v.allocs[i]->cpus, v.allocs[i]->mem_mib,
                             static_cast<int32_t>(v.allocs[i]->gpus.size()));
  }

  // Preempts lower-tier jobs, fewest first in victim order, when that lets the job
  // start before slot `without`. On success the placement is returned in `out`, the
  // victims are in the plan and released at their grace end in the time map.
  bool preempt_for(const Job& job, int32_t tier, const std::vector<Pool>& pools, const NodeFilter& f,
                   int32_t without, Placement& out) {
    std::vector<Victim*> taken;
    int32_t last = 0;
    bool found = false;
    for (Victim& v : victims_) {
      if (v.tier >= tier) break;
      if (v.chosen || !usable_by(v, pools, f)) continue;
      int32_t gone = snap_.preempted_release(v.grace);
      if (gone >= v.release || gone >= without) continue;
      shift(v, v.release, gone);
      taken.push_back(&v);
      last = std::max(last, gone);
      search_every_block_ = true;  // a victim's block is busy now: it would not be among the emptiest
      found = find(pools, f, last, out);
      search_every_block_ = false;
      if (found) break;
    }
    std::vector<char> placed(snap_.map.node_count(), 0);
    if (found) for (const auto& [node, units] : out.nodes) placed[node] = 1;
    for (Victim* v : taken) {
      bool needed = std::any_of(v->nodes.begin(), v->nodes.end(), [&](int32_t n) { return placed[n] != 0; });
      if (!needed) { shift(*v, snap_.preempted_release(v->grace), v->release); continue; }
      v->chosen = true;
      plan_.preemptions.push_back({v->job->id, job.id, v->mode, v->grace});
    }
    return found;
  }

  static constexpr Time kNever = INT64_MAX;
  const ClusterState& s_;
  const SchedulerConfig& cfg_;
  int32_t depth_;
  const AdvanceReservation* scope_;
  AcctUsage* usage_;
  std::set<std::string> deferred_;
  std::vector<Time> part_free_until_;  // by partition (with reservations): see hold_reservations()
  std::vector<char> part_maint_;
  SchedSnapshot snap_;
  PriorityContext prio_;
  Plan plan_;
  std::vector<Victim> victims_;
  std::vector<char> blocked_;
  std::vector<int32_t> reserved_in_part_, tested_in_part_;
  std::unordered_map<uint32_t, int32_t> tested_by_user_;
  std::unordered_map<uint64_t, int32_t> array_running_;
  std::set<std::pair<uint32_t, std::string>> singletons_started_;
  int32_t backfill_starts_ = 0;
  std::vector<int64_t> diff_;
  std::vector<char> taken_;
  std::unordered_map<int32_t, std::vector<char>> gpu_used_;  // by time map index: GPUs in use
  std::vector<Interval> ivs_;
  struct SweptInterval {
    int32_t cls, from, to;
  };
  std::vector<SweptInterval> swept_;       // earliest_filtered()'s intervals
  std::vector<const Pool*> later_pools_;   // later_order()'s answer
  bool search_every_block_ = false;        // later_order() keeps every block's pool (preemption)
  std::vector<int64_t> type_nodes_;        // by node type: its usable nodes (empty: to count)
  std::vector<int32_t> type_node_;         // by node type: its first node (-1: none), for nodes_needed()
  std::vector<std::pair<int64_t, int32_t>> split_blocks_;  // split_by_blocks()'s
  std::vector<int32_t> taken_by_bblock_;   // fragment_cost()'s
  int32_t oracle_last_ = 0;                // oracle_bound() of the job being placed (0: no oracle)
  bool held_by_oracle_ = false;            // its placement is later than one it has now, on purpose
  int32_t leaf_limit_ = 0;                 // leaf_limit() of the job being placed (0: any number)
  std::vector<int64_t> leaf_room_;         // order_by_leaf()'s: nodes with room per leaf
  std::vector<int32_t> leaf_rank_;         // order_by_leaf()'s: each leaf's turn
  std::vector<int32_t> room_;              // classes with room at earliest()'s slot, none now
  std::vector<char> group_room_;           // by now group: has room now
  std::vector<std::vector<int32_t>> type_groups_;  // by node type: its now groups (type_groups())
  int32_t groups_filed_ = 0;               // now groups filed in type_groups_
  std::vector<std::pair<int32_t, int32_t>> later_;  // (now group, node) of room_'s classes
  std::vector<int32_t> later_nodes_;
  std::vector<int32_t> parts_;  // consider()'s usable partitions
  bool sorted_ = false;         // ordered() already sorted (the quick pass's partial sort)
  std::vector<Option> options_;
  std::vector<Pool> lowered_pools_;  // lowered_limit()'s, which its placement points into
  std::vector<Pool> whole_pools_, other_pools_;  // find_for()'s, which its placement points into
  std::vector<Pool> segment_pools_, unsegmented_pools_;  // find_plain()'s, the same
  std::vector<TopoView> views_;  // by topology (SchedSnapshot::topos)
  bool any_topology_ = false;    // some topology has blocks or switches
};

}  // namespace

namespace {

// Adds a reservation's own pass to the main one.
void merge(Plan& into, Plan&& part) {
  auto offset = static_cast<int32_t>(into.reservations.size());
  for (auto& s : part.starts) into.starts.push_back(std::move(s));
  for (PendingInfo info : part.pending) {
    if (info.reservation >= 0) info.reservation += offset;
    into.pending.push_back(info);
  }
  for (auto& r : part.reservations) into.reservations.push_back(std::move(r));
  for (auto& p : part.preemptions) into.preemptions.push_back(p);
  for (auto& d : part.dependency_changes) into.dependency_changes.push_back(d);
  for (JobId id : part.invalid_dependency_kills) into.invalid_dependency_kills.push_back(id);
  for (JobId id : part.deadline_kills) into.deadline_kills.push_back(id);
  into.stats.considered += part.stats.considered;
  into.stats.tested += part.stats.tested;
  into.stats.sweeps += part.stats.sweeps;
  into.stats.swept += part.stats.swept;
  into.stats.held += part.stats.held;
}

// The main pass, then one per active reservation that has pending jobs; with accounting
// limits, one count of what running jobs hold serves them all.
Plan run_passes(const ClusterState& state, const SchedulerConfig& cfg, const AcctPolicy* policy, Time now,
                int32_t depth, const Job* extra) {
  std::optional<AcctUsage> usage;
  if (policy && policy->has_limits()) {
    usage.emplace(*policy, now);
    for_each_job_in(state, state.running, [&](const Job& j) { usage->add(j); });
  }
  AcctUsage* counted = usage ? &*usage : nullptr;
  Pass main(state, cfg, now, depth, nullptr, counted, policy);
  Plan plan = main.run(extra);
  for (const std::string& name : main.deferred()) {
    const AdvanceReservation& r = state.reservations.at(name);
    const Job* own = extra && reservation_of(*extra) && *reservation_of(*extra) == name ? extra : nullptr;
    merge(plan, Pass(state, cfg, now, depth, &r, counted, policy).run(own));
  }
  return plan;
}

}  // namespace

Plan Scheduler::schedule(const ClusterState& state, Time now, const Job* extra) const {
  return run_passes(state, cfg_, policy_.get(), now, 0, extra);
}

Plan Scheduler::quick_pass(const ClusterState& state, Time now) const {
  SchedulerConfig quick = cfg_;
  quick.policy = SchedPolicy::kFifo;
  return run_passes(state, quick, policy_.get(), now, std::max(1, cfg_.default_queue_depth), nullptr);
}

}  // namespace hq
