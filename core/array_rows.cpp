#include "core/array_rows.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "core/array_spec.hpp"

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

}  // namespace hq
