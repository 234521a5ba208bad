#include "core/acct_policy.hpp"

#include <algorithm>
#include <optional>

#include "core/priority.hpp"
#include "core/units.hpp"

namespace hq {
namespace {

std::string assoc_key(std::string_view account, std::string_view user, std::string_view partition) {
  std::string key;
  key.reserve(account.size() + user.size() + partition.size() + 2);
  key.append(account).push_back('\0');
  key.append(user).push_back('\0');
  key.append(partition);
  return key;
}

// A TRES list as counts by kind (kNoLimit where not set; other TRES are not enforced yet).
TresCounts tres_limits(const TresList& list) {
  TresCounts out;
  out.fill(kNoLimit);
  for (const auto& [name, value] : list) {
    if (name == "cpu") out[kTresCpu] = value;
    else if (name == "mem") out[kTresMem] = value;
    else if (name == "node") out[kTresNode] = value;
    else if (name == "gres/gpu") out[kTresGpu] = value;
    else if (name == "billing") out[kTresBilling] = value;
  }
  return out;
}

bool any_set(const TresCounts& t) {
  return std::any_of(t.begin(), t.end(), [](int64_t v) { return v != kNoLimit; });
}

int64_t wall_seconds(int64_t minutes) { return minutes == kNoLimit ? kNoLimit : minutes * 60; }


// Minutes of a time limit for TRES-minute limits, rounded up; -1 for no limit.
int64_t limit_minutes(Duration limit) {
  if (limit == kUnlimited) return -1;
  return limit / 60 + (limit % 60 > 0 ? 1 : 0);
}

bool over(int64_t limit, int64_t used, int64_t more) { return limit != kNoLimit && sat_add(used, more) > limit; }

// A time limit beyond a MaxWall (seconds); a job without a limit is beyond any.
bool over_wall(int64_t max_wall, Duration limit) {
  return max_wall != kNoLimit && (limit == kUnlimited || limit > max_wall);
}

// The first TRES kind whose `used` + `more` passes `limit`, or -1.
int over_tres(const TresCounts& limit, const TresCounts& used, const TresCounts& more) {
  for (int k = 0; k < kTresKinds; ++k)
    if (over(limit[k], used[k], more[k]) && more[k] > 0) return k;
  return -1;
}

// The same for TRES-minutes: `more` is the job's TRES times `minutes` (-1: no time limit).
int over_run_mins(const TresCounts& limit, const TresCounts& used, const TresCounts& tres, int64_t minutes) {
  for (int k = 0; k < kTresKinds; ++k) {
    if (limit[k] == kNoLimit || tres[k] == 0) continue;
    if (minutes < 0 || sat_add(used[k], sat_mul(tres[k], minutes)) > limit[k]) return k;
  }
  return -1;
}

// A job's TRES on each of its nodes (its totals over its node count, rounded up); nodes
// count for nothing there.
TresCounts per_node(const TresCounts& tres) {
  TresCounts out{};
  int64_t nodes = std::max<int64_t>(1, tres[kTresNode]);
  for (int k = 0; k < kTresKinds; ++k)
    if (k != kTresNode) out[k] = tres[k] / nodes + (tres[k] % nodes > 0 ? 1 : 0);
  return out;
}

// The first TRES kind the job asks for less of than `min`, or -1.
int under_tres(const TresCounts& min, const TresCounts& tres) {
  for (int k = 0; k < kTresKinds; ++k)
    if (min[k] != kNoLimit && tres[k] < min[k]) return k;
  return -1;
}

// The most minutes a job of `tres` may have under TRES-minute limits `mins`; -1: no cap.
int64_t minutes_allowed(const TresCounts& mins, const TresCounts& tres) {
  int64_t cap = -1;
  for (int k = 0; k < kTresKinds; ++k)
    if (mins[k] != kNoLimit && tres[k] > 0) cap = cap < 0 ? mins[k] / tres[k] : std::min(cap, mins[k] / tres[k]);
  return cap;
}

// A QOS limit that is set shadows the association's (Slurm: "the QOS limit wins").
TresCounts unshadowed(const TresCounts& assoc, const TresCounts* qos) {
  if (!qos) return assoc;
  TresCounts out = assoc;
  for (int k = 0; k < kTresKinds; ++k)
    if ((*qos)[k] != kNoLimit) out[k] = kNoLimit;
  return out;
}

}  // namespace

Result<AcctEnforce> parse_acct_enforce(std::string_view text) {
  AcctEnforce e;
  for (const std::string& raw : split_list(text)) {
    std::string word = to_lower(raw);
    if (word == "associations") e.associations = true;
    else if (word == "limits") e.limits = true;
    else if (word == "qos") e.qos = true;
    else if (word == "safe") e.safe = true;
    else if (word == "all") e.associations = e.limits = e.qos = e.safe = true;
    else if (word != "none") return invalid("unknown enforce word '" + raw + "' (associations, limits, qos, safe, all, none)");
  }
  if (e.limits || e.qos || e.safe) e.associations = true;
  return e;
}

std::string acct_enforce_name(const AcctEnforce& e) {
  std::string out;
  auto add = [&](bool on, const char* word) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += word;
  };
  add(e.associations, "associations");
  add(e.limits, "limits");
  add(e.qos, "qos");
  add(e.safe, "safe");
  return out.empty() ? "none" : out;
}

std::vector<std::string> qos_list(const std::string& qos) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= qos.size() && !qos.empty()) {
    size_t comma = std::min(qos.find(',', at), qos.size());
    if (comma > at) out.push_back(qos.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

std::string first_qos(const std::string& qos) {
  std::vector<std::string> names = qos_list(qos);
  return names.empty() ? std::string() : names.front();
}

TresCounts requested_tres(const JobSpec& s) {
  TresCounts t{};
  int64_t nodes = std::max(1, s.nodes_min);
  t[kTresCpu] = requested_cpus(s);
  t[kTresNode] = nodes;
  if (s.mem_per_node_mib > 0) t[kTresMem] = s.mem_per_node_mib * nodes;
  else if (s.mem_per_cpu_mib > 0) t[kTresMem] = s.mem_per_cpu_mib * t[kTresCpu];
  if (s.gpus > 0) t[kTresGpu] = s.gpus;
  else if (s.gpus_per_node > 0) t[kTresGpu] = int64_t{s.gpus_per_node} * nodes;
  else if (s.gpus_per_task > 0) t[kTresGpu] = int64_t{s.gpus_per_task} * std::max(1, s.ntasks);
  t[kTresBilling] = t[kTresCpu];
  return t;
}

TresCounts held_tres(const Job& job) {
  TresCounts t{};
  for (const NodeAlloc& a : job.alloc) {
    t[kTresCpu] += a.cpus;
    t[kTresMem] += a.mem_mib;
    t[kTresGpu] += static_cast<int64_t>(a.gpus.size());
  }
  t[kTresNode] = static_cast<int64_t>(job.alloc.size());
  t[kTresBilling] = t[kTresCpu];
  return t;
}

UsageRecord usage_record(const Job& job) {
  UsageRecord r;
  r.account = job.spec.account;
  r.user = job.spec.user;
  r.partition = job.partition;
  r.qos = job.spec.extra->qos.empty() ? "normal" : job.spec.extra->qos;
  r.start = job.start_time;
  r.end = is_terminal(job.state) ? std::max(job.end_time, job.start_time) : 0;
  // A record left open (its end never stored) counts no further than its limit.
  if (!r.end && job.time_limit != kUnlimited && job.time_limit >= 0) r.cap = job.start_time + job.time_limit + job.suspended_secs;
  r.tres = held_tres(job);
  r.billing = r.tres[kTresBilling];
  return r;
}

UsageJob sreport_usage_job(const Job& job) {
  UsageJob u;
  u.account = job.spec.account, u.user = job.spec.user, u.partition = job.partition;
  u.eligible = job.eligible_time, u.start = job.start_time;
  u.end = is_terminal(job.state) ? std::max(job.end_time, job.start_time) : 0;
  TresCounts held = held_tres(job);
  u.cpus_req = job.start_time ? held[kTresCpu] : requested_tres(job.spec)[kTresCpu];
  if (!job.alloc.empty()) {
    u.tres = {{"cpu", held[kTresCpu]}, {"mem", held[kTresMem]}, {"node", held[kTresNode]}, {"billing", held[kTresBilling]}};
    if (held[kTresGpu] > 0) u.tres["gres/gpu"] = held[kTresGpu];
  }
  return u;
}

AcctPolicy::AcctPolicy(const AcctModel& model, const std::string& cluster, AcctEnforce enforce,
                       std::shared_ptr<const FairShare> shares,
                       const std::unordered_map<std::string, std::string>& partition_qos)
    : enforce_(enforce), shares_(std::move(shares)) {
  for (const auto& [name, q] : model.qos) {
    Qos out;
    out.name = name;
    out.priority = q.priority;
    out.usage_factor = q.usage_factor;
    max_qos_priority_ = std::max(max_qos_priority_, q.priority);
    const std::vector<std::string>& flags = q.flags;  // a structured binding is not captured (clang 14)
    auto flagged = [&flags](const char* flag) {
      return std::any_of(flags.begin(), flags.end(), [&](const std::string& f) { return to_lower(f) == flag; });
    };
    out.deny_on_limit = flagged("denyonlimit");
    out.over_part_qos = flagged("overpartqos");
    const AcctLimits& l = q.limits;
    out.grp_jobs = l.grp_jobs, out.grp_submit = l.grp_submit, out.max_wall = wall_seconds(l.max_wall);
    out.max_jobs_pu = l.max_jobs_pu, out.max_jobs_pa = l.max_jobs_pa;
    out.max_submit_pu = l.max_submit_pu, out.max_submit_pa = l.max_submit_pa;
    out.grp_tres = tres_limits(l.grp_tres), out.grp_run_mins = tres_limits(l.grp_tres_run_mins);
    out.max_tres = tres_limits(l.max_tres), out.max_tres_pu = tres_limits(l.max_tres_pu);
    out.max_tres_pa = tres_limits(l.max_tres_pa);
    out.max_per_node = tres_limits(l.max_tres_per_node), out.max_mins = tres_limits(l.max_tres_mins);
    out.min_tres = tres_limits(l.min_tres);
    out.max_per_node[kTresNode] = kNoLimit;
    out.grp_mins = tres_limits(l.grp_tres_mins);
    out.grp_wall = l.grp_wall;
    out.max_run_mins_pu = tres_limits(l.max_tres_run_mins_pu), out.max_run_mins_pa = tres_limits(l.max_tres_run_mins_pa);
    out.no_decay = flagged("nodecay");
    has_usage_limits_ |= any_set(out.grp_mins) || out.grp_wall != kNoLimit;
    has_submit_limits_ |= out.grp_submit != kNoLimit || out.max_submit_pu != kNoLimit || out.max_submit_pa != kNoLimit;
    has_limits_ |= out.grp_jobs != kNoLimit || out.max_wall != kNoLimit || out.max_jobs_pu != kNoLimit ||
                   out.max_jobs_pa != kNoLimit || any_set(out.grp_tres) || any_set(out.grp_run_mins) ||
                   any_set(out.max_tres) || any_set(out.max_tres_pu) || any_set(out.max_tres_pa) || out.deny_on_limit ||
                   any_set(out.max_per_node) || any_set(out.max_mins) || any_set(out.min_tres) ||
                   any_set(out.grp_mins) || out.grp_wall != kNoLimit || any_set(out.max_run_mins_pu) ||
                   any_set(out.max_run_mins_pa);
    qos_index_[name] = static_cast<int32_t>(qos_.size());
    qos_.push_back(std::move(out));
  }
  std::unordered_map<uint32_t, const ShareRow*> usage_by_id;  // decayed usage, by association
  if (shares_)
    for (const ShareRow& r : shares_->rows()) usage_by_id[r.assoc] = &r;
  std::unordered_map<uint32_t, int32_t> by_id;
  for (const auto& [id, a] : model.assocs)
    if (a.cluster == cluster) {
      by_id[id] = static_cast<int32_t>(assocs_.size());
      assocs_.emplace_back();
    }
  for (const auto& [id, a] : model.assocs) {
    auto at = by_id.find(id);
    if (at == by_id.end()) continue;
    AcctAssoc shown = model.inherited(a);
    Assoc& out = assocs_[static_cast<size_t>(at->second)];
    if (const AcctAssoc* parent = model.parent_of(a); parent && by_id.count(parent->id)) out.parent = by_id[parent->id];
    const AcctLimits& l = shown.limits;
    out.max_jobs = l.max_jobs, out.max_submit = l.max_submit, out.max_wall = wall_seconds(l.max_wall);
    out.grp_jobs = l.grp_jobs, out.grp_submit = l.grp_submit;
    out.max_tres = tres_limits(l.max_tres), out.grp_tres = tres_limits(l.grp_tres);
    out.grp_run_mins = tres_limits(l.grp_tres_run_mins);
    out.max_per_node = tres_limits(l.max_tres_per_node), out.max_mins = tres_limits(l.max_tres_mins);
    out.max_per_node[kTresNode] = kNoLimit;
    out.grp_mins = tres_limits(l.grp_tres_mins);
    out.grp_wall = a.limits.grp_wall;  // a group limit: its own, not inherited
    if (auto u = usage_by_id.find(id); u != usage_by_id.end()) {
      out.used_mins = tres_minutes(u->second->used.tres);
      out.used_wall = static_cast<int64_t>(std::min(u->second->used.wall / 60.0, 9.0e18));
    }
    for (const std::string& q : shown.qos)
      if (int32_t i = qos_of(q); i >= 0) out.qos.push_back(i);
    out.def_qos = qos_of(shown.def_qos);
    has_submit_limits_ |= out.max_submit != kNoLimit || out.grp_submit != kNoLimit;
    has_limits_ |= out.max_jobs != kNoLimit || out.max_wall != kNoLimit || out.grp_jobs != kNoLimit ||
                   any_set(out.max_tres) || any_set(out.grp_tres) || any_set(out.grp_run_mins) ||
                   any_set(out.grp_mins) || any_set(out.max_per_node) || any_set(out.max_mins) ||
                   out.grp_wall != kNoLimit;
    has_usage_limits_ |= any_set(out.grp_mins) || out.grp_wall != kNoLimit;
    assoc_index_[assoc_key(a.account, a.user, a.partition)] = at->second;
  }
  for (const auto& [name, u] : model.users) default_account_[name] = u.default_account;
  for (const auto& [partition, qos] : partition_qos)
    if (int32_t q = qos_of(qos); q >= 0) part_qos_[partition] = q;
  if (shares_) credit_qos_usage(*shares_);
  has_limits_ = enforce_.limits && (has_limits_ || has_submit_limits_);
  has_submit_limits_ = enforce_.limits && has_submit_limits_;
  has_usage_limits_ = enforce_.limits && has_usage_limits_;
}

int32_t AcctPolicy::assoc_of(const std::string& user, const std::string& account, const std::string& partition) const {
  if (!partition.empty()) {
    if (auto it = assoc_index_.find(assoc_key(account, user, partition)); it != assoc_index_.end()) return it->second;
  }
  auto it = assoc_index_.find(assoc_key(account, user, ""));
  return it == assoc_index_.end() ? -1 : it->second;
}

// Slurm's _apply_new_usage: a job's usage counts for its QOS and, when that is another,
// its partition's QOS; a QOS with NoDecay counts it undecayed.
void AcctPolicy::credit_qos_usage(const FairShare& shares) {
  for (const auto& [key, u] : shares.qos_usage()) {
    int32_t own = qos_of(key.first);
    auto part = part_qos_.find(key.second);
    for (int32_t q : {own, part == part_qos_.end() || part->second == own ? -1 : part->second}) {
      if (q < 0) continue;
      Qos& to = qos_[static_cast<size_t>(q)];
      to.used.add(to.no_decay ? u.flat : u.decayed);
    }
  }
  for (Qos& q : qos_) {
    q.used_mins = tres_minutes(q.used.tres);
    q.used_wall = static_cast<int64_t>(std::min(q.used.wall / 60.0, 9.0e18));
  }
}

UsedSum AcctPolicy::qos_used(const std::string& name) const {
  int32_t q = qos_of(name);
  return q < 0 ? UsedSum{} : qos_[static_cast<size_t>(q)].used;
}

int32_t AcctPolicy::qos_of(const std::string& name) const {
  auto it = qos_index_.find(name);
  return it == qos_index_.end() ? -1 : it->second;
}

std::pair<const AcctPolicy::Qos*, const AcctPolicy::Qos*> AcctPolicy::qos_order(const std::string& qos,
                                                                                 const std::string& partition) const {
  int32_t q = qos_of(qos);
  const Qos* own = q >= 0 ? &qos_[static_cast<size_t>(q)] : nullptr;
  auto at = part_qos_.find(partition);
  const Qos* part = at == part_qos_.end() || at->second == q ? nullptr : &qos_[static_cast<size_t>(at->second)];
  if (!part) return {own, nullptr};
  if (!own) return {part, nullptr};
  return own->over_part_qos ? std::pair{own, part} : std::pair{part, own};
}

const AcctPolicy::Qos* AcctPolicy::limits_of(const Qos* first, const Qos* second, std::optional<Qos>& merged) {
  if (!first || !second) return first;  // one QOS (most jobs): no copy, a pass asks this for every pending job
  merged = first_set(*first, second);
  return &*merged;
}

AcctPolicy::Qos AcctPolicy::first_set(const Qos& first, const Qos* second) {
  Qos out = first;
  if (!second) return out;
  auto take = [](int64_t& v, int64_t from) {
    if (v == kNoLimit) v = from;
  };
  auto take_tres = [](TresCounts& v, const TresCounts& from) {
    for (int k = 0; k < kTresKinds; ++k)
      if (v[k] == kNoLimit) v[k] = from[k];
  };
  take(out.grp_jobs, second->grp_jobs), take(out.grp_submit, second->grp_submit), take(out.max_wall, second->max_wall);
  take(out.max_jobs_pu, second->max_jobs_pu), take(out.max_jobs_pa, second->max_jobs_pa);
  take(out.max_submit_pu, second->max_submit_pu), take(out.max_submit_pa, second->max_submit_pa);
  take(out.grp_wall, second->grp_wall);
  for (auto [v, from] : {std::pair{&out.grp_tres, &second->grp_tres}, {&out.grp_run_mins, &second->grp_run_mins},
                         {&out.grp_mins, &second->grp_mins}, {&out.max_run_mins_pu, &second->max_run_mins_pu},
                         {&out.max_run_mins_pa, &second->max_run_mins_pa},
                         {&out.max_tres, &second->max_tres}, {&out.max_tres_pu, &second->max_tres_pu},
                         {&out.max_tres_pa, &second->max_tres_pa}, {&out.max_per_node, &second->max_per_node},
                         {&out.max_mins, &second->max_mins}, {&out.min_tres, &second->min_tres}})
    take_tres(*v, *from);
  out.deny_on_limit = first.deny_on_limit || second->deny_on_limit;
  return out;
}

Status AcctPolicy::choose(JobSpec& spec, const std::vector<std::string>& partitions) const {
  if (!enforce_.associations) return Status::ok();
  const Status no_assoc = invalid("Invalid account or account/partition combination specified");
  if (spec.account.empty()) {
    auto it = default_account_.find(spec.user);
    if (it == default_account_.end() || it->second.empty()) return no_assoc;
    spec.account = it->second;
  }
  int32_t first = -1;
  for (const std::string& p : partitions) {
    int32_t a = assoc_of(spec.user, spec.account, p);
    if (a < 0) return no_assoc;
    if (first < 0) first = a;
  }
  if (partitions.empty()) first = assoc_of(spec.user, spec.account, "");
  if (first < 0) return no_assoc;
  return choose_qos(spec, assocs_[static_cast<size_t>(first)]);
}

Status AcctPolicy::choose_qos(JobSpec& spec, const Assoc& a) const {
  std::string name = spec.extra->qos;
  if (name.find(',') != std::string::npos) return choose_qos_list(spec, a);
  if (name.empty()) {
    if (a.def_qos >= 0) name = qos_[static_cast<size_t>(a.def_qos)].name;
    else if (a.qos.size() == 1) name = qos_[static_cast<size_t>(a.qos.front())].name;
    else name = "normal";
  }
  int32_t q = qos_of(name);
  if (q < 0 && (enforce_.qos || !spec.extra->qos.empty())) return invalid("Invalid qos specification");
  if (enforce_.qos && std::find(a.qos.begin(), a.qos.end(), q) == a.qos.end()) return invalid("Invalid qos specification");
  if (q >= 0 && name != spec.extra->qos) {
    JobExtras extra = *spec.extra;
    extra.qos = name;
    spec.extra = std::move(extra);
  }
  return Status::ok();
}

Status AcctPolicy::choose_qos_list(JobSpec& spec, const Assoc& a) const {
  std::vector<int32_t> chosen;
  const std::string& given = spec.extra->qos;
  // An empty name ("a,,b", ",") is no QOS: refused, as Slurm refuses an unknown one.
  if (given.front() == ',' || given.back() == ',' || given.find(",,") != std::string::npos)
    return invalid("Invalid qos specification");
  for (const std::string& name : qos_list(given)) {
    int32_t q = qos_of(name);
    if (q < 0 || (enforce_.qos && std::find(a.qos.begin(), a.qos.end(), q) == a.qos.end()))
      return invalid("Invalid qos specification");
    if (std::find(chosen.begin(), chosen.end(), q) == chosen.end()) chosen.push_back(q);
  }
  // Tried highest Priority first (ties: in the order given), as several partitions are.
  std::stable_sort(chosen.begin(), chosen.end(), [&](int32_t x, int32_t y) {
    return qos_[static_cast<size_t>(x)].priority > qos_[static_cast<size_t>(y)].priority;
  });
  std::string list;
  for (int32_t q : chosen) list += (list.empty() ? "" : ",") + qos_[static_cast<size_t>(q)].name;
  if (list != spec.extra->qos) {
    JobExtras extra = *spec.extra;
    extra.qos = std::move(list);
    spec.extra = std::move(extra);
  }
  return Status::ok();
}

Duration AcctPolicy::default_limit(const JobSpec& spec, const std::string& partition, Duration limit) const {
  if (!enforce_.limits) return limit;
  if (spec.extra->qos.find(',') == std::string::npos) return default_limit_in(spec, spec.extra->qos, partition, limit);
  Duration out = limit;  // the tightest of its QOS: it may start under any of them
  for (const std::string& name : qos_list(spec.extra->qos)) {
    Duration in = default_limit_in(spec, name, partition, limit);
    if (out == kUnlimited || (in != kUnlimited && in < out)) out = in;
  }
  return out;
}

Duration AcctPolicy::default_limit_in(const JobSpec& spec, const std::string& qos_name, const std::string& partition,
                                      Duration limit) const {
  int64_t wall = kNoLimit;
  auto [first, second] = qos_order(qos_name, partition);
  std::optional<Qos> merged;
  const Qos* qos = limits_of(first, second, merged);
  int32_t a = assoc_of(spec.user, spec.account, partition);
  if (qos) wall = qos->max_wall;
  if (wall == kNoLimit && a >= 0) wall = assocs_[static_cast<size_t>(a)].max_wall;
  TresCounts tres = requested_tres(spec);
  int64_t minutes = qos ? minutes_allowed(qos->max_mins, tres) : -1;
  if (a >= 0) {
    int64_t own = minutes_allowed(unshadowed(assocs_[static_cast<size_t>(a)].max_mins, qos ? &qos->max_mins : nullptr), tres);
    if (own >= 0) minutes = minutes < 0 ? own : std::min(minutes, own);
  }
  if (minutes >= 0) wall = wall == kNoLimit ? sat_mul(minutes, 60) : std::min(wall, sat_mul(minutes, 60));
  if (wall == kNoLimit) return limit;
  return limit == kUnlimited ? wall : std::min<Duration>(limit, wall);
}

double AcctPolicy::fairshare(const Job& job) const {
  if (!shares_) return 0;
  if (!job.spec.account.empty()) return shares_->factor(job.spec.user, job.spec.account, job.partition);
  auto it = default_account_.find(job.spec.user);
  return it == default_account_.end() ? 0 : shares_->factor(job.spec.user, it->second, job.partition);
}

double AcctPolicy::qos(const Job& job) const {
  const std::string& own = job.spec.extra->qos;
  // A list (--qos a,b) is kept highest Priority first: its first gives the factor.
  int32_t q = qos_of(own.empty() ? "normal" : own.find(',') == std::string::npos ? own : first_qos(own));
  if (q < 0 || max_qos_priority_ <= 0) return 0;
  return static_cast<double>(std::max<int64_t>(0, qos_[static_cast<size_t>(q)].priority)) / static_cast<double>(max_qos_priority_);
}

double AcctPolicy::usage_factor(const std::string& qos) const {
  int32_t q = qos_of(qos.empty() ? "normal" : qos);
  return q < 0 ? 1.0 : qos_[static_cast<size_t>(q)].usage_factor;
}

void AcctUsage::add(const Job& job) {
  const std::string& qos = job.spec.extra->qos;
  if (job.state == JobState::kPending) {  // a list's job counts as submitted in each of its QOS
    if (qos.find(',') == std::string::npos) return count(job, job.partition, qos, 1, 0, {}, 0);
    bool whole = true;  // its associations and its partition's QOS: once, with the first
    for (const std::string& name : qos_list(qos)) {
      count(job, job.partition, name, 1, 0, {}, 0, whole);
      whole = false;
    }
    return;
  }
  if (job.state != JobState::kRunning) return;
  Duration left = job.time_limit == kUnlimited ? kUnlimited : std::max<Duration>(0, limit_end(job) - now_);
  count(job, job.partition, qos, 1, 1, held_tres(job), limit_minutes(left));
}

void AcctUsage::start(const Job& job, const std::string& partition, const std::vector<NodeAlloc>& alloc, Duration limit,
                      const std::string& qos) {
  Job given;  // what it is given, not only what it asked for (memory it did not name, whole nodes)
  given.alloc = alloc;
  TresCounts tres = held_tres(given);
  TresCounts asked = requested_tres(job.spec);
  for (int k = 0; k < kTresKinds; ++k) tres[k] = std::max(tres[k], asked[k]);
  count(job, partition, qos.empty() ? job.spec.extra->qos : qos, 0, 1, tres, limit_minutes(limit));  // submitted: counted
}

void AcctUsage::count(const Job& job, const std::string& partition, const std::string& qos_name, int64_t submitted,
                      int64_t jobs, const TresCounts& tres, int64_t minutes, bool whole) {
  auto bump = [&](Counts& c) {
    c.submitted += submitted;
    c.jobs += jobs;
    for (int k = 0; k < kTresKinds; ++k) {
      c.tres[k] = sat_add(c.tres[k], tres[k]);
      if (minutes > 0) c.run_mins[k] = sat_add(c.run_mins[k], sat_mul(tres[k], minutes));
    }
  };
  int32_t a = whole ? p_.assoc_of(job.spec.user, job.spec.account, partition) : -1;
  for (int depth = 0; a >= 0 && depth < 64; ++depth) {
    bump(assoc_[a]);
    a = p_.assocs_[static_cast<size_t>(a)].parent;
  }
  auto [first, second] = p_.qos_order(qos_name, partition);  // a partition's QOS counts its jobs too
  int32_t own = p_.qos_of(qos_name);
  if (!whole) {  // a list's later QOS that is its partition's QOS was counted with the first
    auto part = p_.part_qos_.find(partition);
    if (part != p_.part_qos_.end() && part->second == own) return;
  }
  for (const AcctPolicy::Qos* qos : {first, second}) {
    if (!qos) continue;
    int32_t q = static_cast<int32_t>(qos - p_.qos_.data());
    if (!whole && q != own) continue;  // the partition's QOS
    bump(qos_[q]);
    bump(user_in_qos_[uint64_t{static_cast<uint32_t>(q)} << 32 | job.spec.uid]);
    bump(account_in_qos_[std::to_string(q) + '\0' + job.spec.account]);
  }
}

const AcctUsage::Counts* AcctUsage::user_in_qos(int32_t qos, uint32_t uid) const {
  auto it = user_in_qos_.find(uint64_t{static_cast<uint32_t>(qos)} << 32 | uid);
  return it == user_in_qos_.end() ? nullptr : &it->second;
}

const AcctUsage::Counts* AcctUsage::account_in_qos(int32_t qos, const std::string& account) const {
  auto it = account_in_qos_.find(std::to_string(qos) + '\0' + account);
  return it == account_in_qos_.end() ? nullptr : &it->second;
}

const AcctUsage::Counts* AcctUsage::assoc_counts(const std::string& account, const std::string& user,
                                                 const std::string& partition) const {
  int32_t a = p_.assoc_of(user, account, partition);
  auto it = a < 0 ? assoc_.end() : assoc_.find(a);
  return it == assoc_.end() ? nullptr : &it->second;
}

const AcctUsage::Counts* AcctUsage::qos_counts(const std::string& qos) const {
  int32_t q = p_.qos_of(qos);
  auto it = q < 0 ? qos_.end() : qos_.find(q);
  return it == qos_.end() ? nullptr : &it->second;
}

std::vector<std::pair<uint32_t, AcctUsage::Counts>> AcctUsage::qos_users(const std::string& qos) const {
  std::vector<std::pair<uint32_t, Counts>> out;
  int32_t q = p_.qos_of(qos);
  for (const auto& [key, c] : user_in_qos_)
    if (q >= 0 && static_cast<int32_t>(key >> 32) == q) out.emplace_back(static_cast<uint32_t>(key & 0xffffffffu), c);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<std::pair<std::string, AcctUsage::Counts>> AcctUsage::qos_accounts(const std::string& qos) const {
  std::vector<std::pair<std::string, Counts>> out;
  std::string prefix = std::to_string(p_.qos_of(qos)) + '\0';
  for (const auto& [key, c] : account_in_qos_)
    if (key.rfind(prefix, 0) == 0) out.emplace_back(key.substr(prefix.size()), c);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

namespace {
// `check(qos)` under the job's QOS, or each of its list in turn: kNone from the first that
// allows it (its name into `chosen`), else the first's reason.
template <typename Check>
JobReason first_allowing(const std::string& qos, std::string* chosen, Check check) {
  if (qos.find(',') == std::string::npos) return check(qos);
  JobReason first = JobReason::kNone;
  for (const std::string& name : qos_list(qos)) {
    JobReason r = check(name);
    if (r == JobReason::kNone) {
      if (chosen) *chosen = name;
      return r;
    }
    if (first == JobReason::kNone) first = r;
  }
  return first;
}
}  // namespace

JobReason AcctUsage::blocked(const Job& job, std::string* chosen) const {
  return first_allowing(job.spec.extra->qos, chosen, [&](const std::string& qos) { return blocked_in(job, qos); });
}

JobReason AcctUsage::blocked_in(const Job& job, const std::string& qos) const {
  TresCounts tres = requested_tres(job.spec);
  int64_t run_mins = limit_minutes(job.time_limit);
  auto [first, second] = p_.qos_order(qos, job.partition);
  if (first) {
    if (JobReason r = qos_blocked(*first, nullptr, job, tres, run_mins); r != JobReason::kNone) return r;
  }
  if (second) {
    if (JobReason r = qos_blocked(*second, first, job, tres, run_mins); r != JobReason::kNone) return r;
  }
  int32_t a = p_.assoc_of(job.spec.user, job.spec.account, job.partition);
  if (a < 0) return JobReason::kNone;
  std::optional<AcctPolicy::Qos> merged;
  return assoc_blocked(a, AcctPolicy::limits_of(first, second, merged), job, tres, run_mins);
}

JobReason AcctUsage::qos_blocked(const AcctPolicy::Qos& q, const AcctPolicy::Qos* shadow, const Job& job,
                                 const TresCounts& tres, int64_t run_mins) const {
  static const Counts none;
  int32_t qi = static_cast<int32_t>(&q - p_.qos_.data());
  auto at = qos_.find(qi);
  const Counts& all = at == qos_.end() ? none : at->second;
  const Counts* user = user_in_qos(qi, job.spec.uid);
  const Counts* account = account_in_qos(qi, job.spec.account);
  auto mine = [&](int64_t AcctPolicy::Qos::*limit) { return !shadow || shadow->*limit == kNoLimit ? q.*limit : kNoLimit; };
  auto mine_tres = [&](TresCounts AcctPolicy::Qos::*limit) { return unshadowed(q.*limit, shadow ? &(shadow->*limit) : nullptr); };
  if (over(mine(&AcctPolicy::Qos::max_jobs_pu), user ? user->jobs : 0, 1)) return JobReason::kQosMaxJobsPerUser;
  if (over(mine(&AcctPolicy::Qos::max_jobs_pa), account ? account->jobs : 0, 1)) return JobReason::kQosMaxJobsPerAccount;
  if (over(mine(&AcctPolicy::Qos::grp_jobs), all.jobs, 1)) return JobReason::kQosGrpJobs;
  if (over_wall(mine(&AcctPolicy::Qos::max_wall), job.time_limit)) return JobReason::kQosMaxWall;
  if (int k = over_tres(mine_tres(&AcctPolicy::Qos::max_tres), {}, tres); k >= 0)
    return tres_reason(JobReason::kQosMaxCpuPerJob, k);
  if (JobReason r = qos_shape(q, shadow, job, tres); r != JobReason::kNone) return r;
  if (int k = over_tres(mine_tres(&AcctPolicy::Qos::max_tres_pu), user ? user->tres : TresCounts{}, tres); k >= 0)
    return tres_reason(JobReason::kQosMaxCpuPerUser, k);
  if (int k = over_tres(mine_tres(&AcctPolicy::Qos::max_tres_pa), account ? account->tres : TresCounts{}, tres); k >= 0)
    return tres_reason(JobReason::kQosMaxCpuPerAccount, k);
  if (int k = over_run_mins(mine_tres(&AcctPolicy::Qos::max_run_mins_pu), user ? user->run_mins : TresCounts{}, tres, run_mins);
      k >= 0)
    return tres_reason(JobReason::kQosMaxCpuRunMinsPerUser, k);
  if (int k = over_run_mins(mine_tres(&AcctPolicy::Qos::max_run_mins_pa), account ? account->run_mins : TresCounts{}, tres,
                            run_mins);
      k >= 0)
    return tres_reason(JobReason::kQosMaxCpuRunMinsPerAccount, k);
  if (int k = over_tres(mine_tres(&AcctPolicy::Qos::grp_tres), all.tres, tres); k >= 0)
    return tres_reason(JobReason::kQosGrpCpu, k);
  if (int k = over_run_mins(mine_tres(&AcctPolicy::Qos::grp_run_mins), all.run_mins, tres, run_mins); k >= 0)
    return tres_reason(JobReason::kQosGrpCpuRunMin, k);
  // Usage limits (Slurm: the QOS's decayed usage; GrpWall used up whatever this job adds).
  int64_t grp_wall = mine(&AcctPolicy::Qos::grp_wall);
  if (grp_wall != kNoLimit && q.used_wall >= grp_wall) return JobReason::kQosGrpWall;
  if (TresCounts grp_mins = mine_tres(&AcctPolicy::Qos::grp_mins); any_set(grp_mins)) {
    TresCounts used = all.run_mins;  // what was used, what runs may still use, and this job
    for (int k = 0; k < kTresKinds; ++k) used[k] = sat_add(used[k], q.used_mins[k]);
    if (int k = over_run_mins(grp_mins, used, tres, run_mins); k >= 0) return tres_reason(JobReason::kQosGrpCpuMins, k);
  }
  return JobReason::kNone;
}

JobReason AcctUsage::assoc_blocked(int32_t leaf, const AcctPolicy::Qos* q, const Job& job, const TresCounts& tres,
                                   int64_t run_mins) const {
  static const Counts none;
  auto counts = [&](int32_t a) -> const Counts& {
    auto it = assoc_.find(a);
    return it == assoc_.end() ? none : it->second;
  };
  const AcctPolicy::Assoc& own = p_.assocs_[static_cast<size_t>(leaf)];
  // Group jobs first, up the tree; then the job's own association; then TRES.
  int32_t a = leaf;
  for (int depth = 0; a >= 0 && depth < 64; ++depth, a = p_.assocs_[static_cast<size_t>(a)].parent) {
    const AcctPolicy::Assoc& at = p_.assocs_[static_cast<size_t>(a)];
    if ((!q || q->grp_jobs == kNoLimit) && over(at.grp_jobs, counts(a).jobs, 1)) return JobReason::kAssocGrpJobs;
    // Slurm: the subtree's (decayed) wall minutes used up, whatever this job would add.
    if ((!q || q->grp_wall == kNoLimit) && at.grp_wall != kNoLimit && at.used_wall >= at.grp_wall)
      return JobReason::kAssocGrpWall;
  }
  if ((!q || q->max_jobs_pu == kNoLimit) && over(own.max_jobs, counts(leaf).jobs, 1)) return JobReason::kAssocMaxJobs;
  if ((!q || q->max_wall == kNoLimit) && over_wall(own.max_wall, job.time_limit)) return JobReason::kAssocMaxWall;
  if (int k = over_tres(unshadowed(own.max_tres, q ? &q->max_tres : nullptr), {}, tres); k >= 0)
    return tres_reason(JobReason::kAssocMaxCpuPerJob, k);
  if (JobReason r = assoc_shape(own, q, job, tres); r != JobReason::kNone) return r;
  a = leaf;
  for (int depth = 0; a >= 0 && depth < 64; ++depth, a = p_.assocs_[static_cast<size_t>(a)].parent) {
    const AcctPolicy::Assoc& at = p_.assocs_[static_cast<size_t>(a)];
    if (int k = over_tres(unshadowed(at.grp_tres, q ? &q->grp_tres : nullptr), counts(a).tres, tres); k >= 0)
      return tres_reason(JobReason::kAssocGrpCpu, k);
    if (int k = over_run_mins(unshadowed(at.grp_run_mins, q ? &q->grp_run_mins : nullptr), counts(a).run_mins, tres, run_mins);
        k >= 0)
      return tres_reason(JobReason::kAssocGrpCpuRunMin, k);
    if (TresCounts grp_mins = unshadowed(at.grp_mins, q ? &q->grp_mins : nullptr); any_set(grp_mins)) {
      TresCounts used = counts(a).run_mins;  // what was used (decayed), what runs may still use, and this job
      for (int k = 0; k < kTresKinds; ++k) used[k] = sat_add(used[k], at.used_mins[k]);
      if (int k = over_run_mins(grp_mins, used, tres, run_mins); k >= 0) return tres_reason(JobReason::kAssocGrpCpuMins, k);
    }
  }
  return JobReason::kNone;
}

JobReason AcctUsage::qos_refused(const AcctPolicy::Qos& q, const AcctPolicy::Qos* shadow, const Job& job,
                                 int64_t n) const {
  int32_t qi = static_cast<int32_t>(&q - p_.qos_.data());
  auto at = qos_.find(qi);
  const Counts* user = user_in_qos(qi, job.spec.uid);
  const Counts* account = account_in_qos(qi, job.spec.account);
  auto mine = [&](int64_t AcctPolicy::Qos::*limit) { return !shadow || shadow->*limit == kNoLimit ? q.*limit : kNoLimit; };
  if (over(mine(&AcctPolicy::Qos::max_submit_pu), user ? user->submitted : 0, n)) return JobReason::kQosMaxSubmitJobsPerUser;
  if (over(mine(&AcctPolicy::Qos::max_submit_pa), account ? account->submitted : 0, n))
    return JobReason::kQosMaxSubmitJobsPerAccount;
  if (over(mine(&AcctPolicy::Qos::grp_submit), at == qos_.end() ? 0 : at->second.submitted, n))
    return JobReason::kQosGrpSubmitJobs;
  return JobReason::kNone;
}

JobReason AcctUsage::refused(const Job& job, int64_t n) const {  // accepted when one of its QOS accepts it
  return first_allowing(job.spec.extra->qos, nullptr, [&](const std::string& qos) { return refused_in(job, qos, n); });
}

JobReason AcctUsage::refused_in(const Job& job, const std::string& qos, int64_t n) const {
  auto [first, second] = p_.qos_order(qos, job.partition);
  std::optional<AcctPolicy::Qos> merged;
  const AcctPolicy::Qos* q = AcctPolicy::limits_of(first, second, merged);
  int32_t leaf = p_.assoc_of(job.spec.user, job.spec.account, job.partition);
  if (first) {
    if (JobReason r = qos_refused(*first, nullptr, job, n); r != JobReason::kNone) return r;
  }
  if (second) {
    if (JobReason r = qos_refused(*second, first, job, n); r != JobReason::kNone) return r;
  }
  auto submitted = [&](int32_t a) {
    auto it = assoc_.find(a);
    return it == assoc_.end() ? 0 : it->second.submitted;
  };
  for (int32_t a = leaf, depth = 0; a >= 0 && depth < 64; ++depth, a = p_.assocs_[static_cast<size_t>(a)].parent)
    if ((!q || q->grp_submit == kNoLimit) && over(p_.assocs_[static_cast<size_t>(a)].grp_submit, submitted(a), n))
      return JobReason::kAssocGrpSubmitJobs;
  bool qos_submit = q && (q->max_submit_pu != kNoLimit || q->max_submit_pa != kNoLimit);
  if (leaf >= 0 && !qos_submit && over(p_.assocs_[static_cast<size_t>(leaf)].max_submit, submitted(leaf), n))
    return JobReason::kAssocMaxSubmitJobs;
  // Per-job limits refuse at submit only under a DenyOnLimit QOS (or none: Slurm's strict default).
  if (q && !q->deny_on_limit) return JobReason::kNone;
  return per_job(leaf, first, second, job, requested_tres(job.spec));
}

JobReason AcctUsage::per_job(int32_t leaf, const AcctPolicy::Qos* first, const AcctPolicy::Qos* second, const Job& job,
                             const TresCounts& tres) const {
  std::optional<AcctPolicy::Qos> merged;
  const AcctPolicy::Qos* q = AcctPolicy::limits_of(first, second, merged);
  if (q) {  // every per-job limit here is the QOS's own: one merged view gives the first that sets each
    if (over_wall(q->max_wall, job.time_limit)) return JobReason::kQosMaxWall;
    if (int k = over_tres(q->max_tres, {}, tres); k >= 0) return tres_reason(JobReason::kQosMaxCpuPerJob, k);
    if (JobReason r = qos_shape(*q, nullptr, job, tres); r != JobReason::kNone) return r;
    if (int k = over_tres(q->grp_tres, {}, tres); k >= 0) return tres_reason(JobReason::kQosGrpCpu, k);
  }
  if (leaf < 0) return JobReason::kNone;
  const AcctPolicy::Assoc& own = p_.assocs_[static_cast<size_t>(leaf)];
  if ((!q || q->max_wall == kNoLimit) && over_wall(own.max_wall, job.time_limit)) return JobReason::kAssocMaxWall;
  if (int k = over_tres(unshadowed(own.max_tres, q ? &q->max_tres : nullptr), {}, tres); k >= 0)
    return tres_reason(JobReason::kAssocMaxCpuPerJob, k);
  if (JobReason r = assoc_shape(own, q, job, tres); r != JobReason::kNone) return r;
  for (int32_t a = leaf, depth = 0; a >= 0 && depth < 64; ++depth, a = p_.assocs_[static_cast<size_t>(a)].parent) {
    const AcctPolicy::Assoc& at = p_.assocs_[static_cast<size_t>(a)];
    if (int k = over_tres(unshadowed(at.grp_tres, q ? &q->grp_tres : nullptr), {}, tres); k >= 0)
      return tres_reason(JobReason::kAssocGrpCpu, k);
  }
  return JobReason::kNone;
}

JobReason AcctUsage::qos_shape(const AcctPolicy::Qos& q, const AcctPolicy::Qos* shadow, const Job& job,
                               const TresCounts& tres) {
  auto mine = [&](TresCounts AcctPolicy::Qos::*limit) { return unshadowed(q.*limit, shadow ? &(shadow->*limit) : nullptr); };
  if (int k = over_tres(mine(&AcctPolicy::Qos::max_per_node), {}, per_node(tres)); k >= 0)
    return tres_reason(JobReason::kQosMaxCpuPerNode, k);
  if (int k = over_run_mins(mine(&AcctPolicy::Qos::max_mins), {}, tres, limit_minutes(job.time_limit)); k >= 0)
    return tres_reason(JobReason::kQosMaxCpuMinsPerJob, k);
  if (int k = under_tres(mine(&AcctPolicy::Qos::min_tres), tres); k >= 0) return tres_reason(JobReason::kQosMinCpu, k);
  return JobReason::kNone;
}

JobReason AcctUsage::assoc_shape(const AcctPolicy::Assoc& own, const AcctPolicy::Qos* q, const Job& job,
                                 const TresCounts& tres) {
  if (int k = over_tres(unshadowed(own.max_per_node, q ? &q->max_per_node : nullptr), {}, per_node(tres)); k >= 0)
    return tres_reason(JobReason::kAssocMaxCpuPerNode, k);
  if (int k = over_run_mins(unshadowed(own.max_mins, q ? &q->max_mins : nullptr), {}, tres, limit_minutes(job.time_limit));
      k >= 0)
    return tres_reason(JobReason::kAssocMaxCpuMinsPerJob, k);
  return JobReason::kNone;
}

}  // namespace hq
