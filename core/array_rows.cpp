#include "core/array_rows.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "core/array_spec.hpp"
#include "core/cluster_state.hpp"

namespace hq {

bool same_listed_line(const Job& a, const Job& b) {
  const JobSpec& x = a.spec;
  const JobSpec& y = b.spec;
  return x.uid == y.uid && x.nodes_min == y.nodes_min && x.ntasks == y.ntasks && x.cpus_per_task == y.cpus_per_task &&
         x.begin_time == y.begin_time && a.reason == b.reason && a.time_limit == b.time_limit &&
         a.priority == b.priority && a.hold == b.hold && a.eligible_time == b.eligible_time && x.name.equals(y.name) &&
         x.user.equals(y.user) && a.partition.equals(b.partition);
}

namespace {

// A hash of the array and of what same_listed_line compares.
size_t line_hash(const Job& j) {
  size_t h = std::hash<uint64_t>{}(j.array_job_id);
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  const JobSpec& s = j.spec;
  for (int64_t v : {int64_t{s.uid}, int64_t{s.nodes_min}, int64_t{s.ntasks}, int64_t{s.cpus_per_task}, s.begin_time,
                    static_cast<int64_t>(j.reason), j.time_limit, j.priority, static_cast<int64_t>(j.hold), j.eligible_time})
    mix(std::hash<int64_t>{}(v));
  for (std::string_view t : {s.name.view(), s.user.view(), j.partition.view()}) mix(std::hash<std::string_view>{}(t));
  return h;
}

}  // namespace

bool ArrayGroups::add(const Job& j) {
  if (j.array_job_id == 0 || j.state != JobState::kPending) return false;
  auto same = [&](size_t g) {
    const Job& first = *groups_[g].first;
    return first.array_job_id == j.array_job_id && same_listed_line(first, j);
  };
  size_t g = last_;
  if (g == SIZE_MAX || !same(g)) {
    std::vector<size_t>& candidates = by_line_[line_hash(j)];
    auto found = std::find_if(candidates.begin(), candidates.end(), same);
    if (found != candidates.end()) {
      g = *found;
    } else {
      g = groups_.size();
      groups_.push_back({&j, {}});
      candidates.push_back(g);
    }
  }
  Group& group = groups_[g];
  if (j.id < group.first->id) group.first = &j;
  group.tasks.push_back(j.array_task_id);
  last_ = g;
  return true;
}

std::vector<ListedRow> ArrayGroups::rows() const {
  std::vector<ListedRow> out;
  out.reserve(groups_.size());
  for (const Group& g : groups_) {
    ListedRow row{g.first, ""};
    if (g.tasks.size() > 1) {
      std::vector<int32_t> tasks = g.tasks;
      std::sort(tasks.begin(), tasks.end());
      row.tasks = format_array_indices(tasks, g.first->array_throttle);
    }
    out.push_back(std::move(row));
  }
  return out;
}

const ArrayStretch& ArrayListings::stretch(const ClusterState& s, const Job& first) {
  if (s.job_list.rebuilds() != rebuilds_) {  // jobs may have come out of id order: nothing kept holds
    by_first_.clear();
    rebuilds_ = s.job_list.rebuilds();
  }
  auto array = s.arrays.find(first.array_job_id);
  ArrayStretch& stretch = by_first_[first.id.value];
  if (stretch.walk != walk_) {
    stretch.walk = walk_;
    ++met_;
  }
  bool counted = array != s.arrays.end() && array->second.stamp != 0;  // else (a state made otherwise) made each time
  if (counted && stretch.stamp == array->second.stamp) return stretch;
  ArrayGroups groups;
  stretch.array = first.array_job_id;
  stretch.others.clear();
  for (auto it = s.jobs.find(first.id); it != s.jobs.end() && it->second.array_job_id == first.array_job_id; ++it) {
    ++tasks_read_;
    if (!groups.add(it->second)) stretch.others.push_back(&it->second);
    stretch.last_id = it->first.value;
  }
  stretch.groups = groups.rows();
  stretch.stamp = counted ? array->second.stamp : 0;
  return stretch;
}

void ArrayListings::end_walk(const ClusterState& s) {
  constexpr size_t kSlack = 64;
  if (by_first_.size() <= 2 * met_ + kSlack) return;
  auto useless = [&](const ArrayStretch& stretch) {
    if (stretch.walk == walk_) return false;
    auto array = s.arrays.find(stretch.array);
    return array == s.arrays.end() || array->second.stamp != stretch.stamp;
  };
  for (auto it = by_first_.begin(); it != by_first_.end();) it = useless(it->second) ? by_first_.erase(it) : std::next(it);
}

}  // namespace hq
