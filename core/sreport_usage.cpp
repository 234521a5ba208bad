// sreport's figures worked out from job records and the cluster's capacity, hour by hour, as
// slurmdbd's hourly rollup stores them (as_mysql_rollup.c: _setup_cluster_tres_usage and
// the job loop of as_mysql_hourly_rollup): total from the capacity, Down and PLND Down from
// nodes out of service, Allocated from the jobs' runs, Planned (CPU only) from the time
// eligible jobs waited, then Slurm's clamps, with the overflow of Planned going to Over Comm.
// Pure; thread-safe.
#include <algorithm>

#include "core/sreport_internal.hpp"

namespace hq {
namespace {

constexpr Time kHour = 3600;

int64_t overlap(Time a0, Time a1, Time b0, Time b1) { return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0)); }

Time open_end(Time end, Time now) { return end ? end : now; }

// One hour of one TRES before the clamps.
struct HourTres {
  int64_t count = 0, total = 0, alloc = 0, down = 0, pdown = 0, plan = 0;
};

// The hour's capacity: TRES-seconds and the count of the last span in it; empty when no
// span covers any of it (then the hour has no rows, as before a cluster registered).
std::map<std::string, HourTres> hour_capacity(const SreportData& d, Time h, Time now) {
  std::map<std::string, HourTres> out;
  for (const CapacitySpan& s : d.capacity) {
    int64_t secs = overlap(s.start, open_end(s.end, now), h, h + kHour);
    if (secs <= 0) continue;
    for (const auto& [name, count] : s.tres) {
      if (name == "node") continue;  // the rollup skips the node TRES for the cluster
      HourTres& t = out[name];
      t.total += count * secs;
      t.count = count;
    }
  }
  return out;
}

void hour_down(const SreportData& d, Time h, Time now, std::map<std::string, HourTres>& tres) {
  for (const NodeDownSpan& s : d.down) {
    int64_t secs = overlap(s.start, open_end(s.end, now), h, h + kHour);
    if (secs <= 0) continue;
    for (const auto& [name, count] : s.tres) {
      auto it = tres.find(name);
      if (it == tres.end()) continue;
      (s.planned ? it->second.pdown : it->second.down) += count * secs;
    }
  }
}

// Allocated: every TRES the job held x its seconds in the hour; Planned (CPU only): the
// requested CPUs x the seconds it waited, eligible, in the hour.
void hour_jobs(const SreportData& d, Time h, Time now, std::map<std::string, HourTres>& tres) {
  Time he = h + kHour;
  for (const UsageJob& j : d.jobs) {
    if (j.eligible <= 0 || j.eligible >= he || (j.end && j.end < h)) continue;
    int64_t secs = run_seconds(j, h, he, now);
    if (secs > 0)
      for (const auto& [name, count] : j.tres)
        if (auto it = tres.find(name); it != tres.end()) it->second.alloc += count * secs;
    Time wait_end = j.start ? j.start : (j.end ? j.end : he);
    int64_t waited = overlap(j.eligible, wait_end, h, he);
    if (waited > 0)
      if (auto it = tres.find("cpu"); it != tres.end()) it->second.plan += j.cpus_req * waited;
  }
}

// _setup_cluster_tres_usage's clamps, then the hour added to the window's totals.
void add_hour(const HourTres& t, TresTotals& sum) {
  int64_t alloc = t.alloc, down = t.down, pdown = t.pdown, plan = t.plan, over = 0;
  if (t.total && t.total < alloc) alloc = t.total;
  if (t.total && t.total < alloc + down + pdown) {
    if (int64_t o = t.total - (alloc + down); o < 0) down = std::max<int64_t>(0, down + o);
    if (int64_t o = t.total - (alloc + down + pdown); o < 0) pdown = std::max<int64_t>(0, pdown + o);
  }
  int64_t idle = t.total - (alloc + down + pdown) - plan;
  if (idle < 0) {
    plan = std::max<int64_t>(0, plan + idle);
    over -= idle;
    idle = 0;
  }
  sum.alloc += alloc, sum.down += down, sum.pdown += pdown, sum.idle += idle, sum.over += over, sum.plan += plan;
  sum.count_sum += t.count, ++sum.rows;
}

}  // namespace

Time rolled_end(Time start, Time end, Time now) {
  if (now <= start) return start;
  return std::min(end, start + (now - start) / kHour * kHour);
}

int64_t run_seconds(const UsageJob& j, Time from, Time to, Time now) {
  if (!j.start) return 0;
  return overlap(j.start, open_end(j.end, now), from, to);
}

ClusterUsage cluster_usage(const SreportData& d, Time start, Time end, Time now) {
  ClusterUsage out;
  for (Time h = start; h < rolled_end(start, end, now); h += kHour) {
    auto tres = hour_capacity(d, h, now);
    if (tres.empty()) continue;
    hour_down(d, h, now, tres);
    hour_jobs(d, h, now, tres);
    for (const auto& [name, t] : tres) add_hour(t, out[name]);
  }
  return out;
}

bool listed(const std::vector<std::string>& list, const std::string& v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

std::set<std::string> account_subtree(const SreportData& d, const std::vector<std::string>& roots) {
  std::set<std::string> out(roots.begin(), roots.end());
  for (bool grew = true; grew;) {
    grew = false;
    for (const UsageAssoc& a : d.assocs)
      if (a.user.empty() && out.count(a.parent) && out.insert(a.account).second) grew = true;
  }
  return out;
}

std::map<AssocKey, SreportTres> assoc_usage(const SreportData& d, Time start, Time end, Time now) {
  std::map<AssocKey, SreportTres> out;
  Time until = rolled_end(start, end, now);
  for (const UsageJob& j : d.jobs) {
    int64_t secs = run_seconds(j, start, until, now);
    if (secs <= 0 || j.eligible <= 0) continue;
    SreportTres& t = out[{j.account, j.user}];
    for (const auto& [name, count] : j.tres) t[name] += count * secs;
  }
  return out;
}

}  // namespace hq
