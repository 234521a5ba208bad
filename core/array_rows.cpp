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

std::vector<ListedRow> collapse_array_rows(const std::vector<const Job*>& jobs) {
  struct Group {
    size_t row;
    std::vector<int32_t> tasks;
  };
  std::vector<Group> groups;
  std::unordered_map<size_t, std::vector<size_t>> by_line;  // line_hash -> groups (usually one)
  std::vector<ListedRow> rows;
  rows.reserve(jobs.size());
  size_t last = SIZE_MAX;  // the group of the task before: an array's tasks mostly come together
  for (const Job* j : jobs) {
    if (j->array_job_id == 0 || j->state != JobState::kPending) {
      rows.push_back({j, ""});
      continue;
    }
    auto same = [&](size_t g) {
      const Job& first = *rows[groups[g].row].job;
      return first.array_job_id == j->array_job_id && same_listed_line(first, *j);
    };
    size_t g = last;
    if (g == SIZE_MAX || !same(g)) {
      std::vector<size_t>& candidates = by_line[line_hash(*j)];
      auto found = std::find_if(candidates.begin(), candidates.end(), same);
      if (found != candidates.end()) {
        g = *found;
      } else {
        g = groups.size();
        groups.push_back({rows.size(), {}});
        candidates.push_back(g);
        rows.push_back({j, ""});
      }
    }
    groups[g].tasks.push_back(j->array_task_id);
    last = g;
  }
  for (Group& g : groups) {
    if (g.tasks.size() < 2) continue;
    std::sort(g.tasks.begin(), g.tasks.end());
    rows[g.row].tasks = format_array_indices(g.tasks, rows[g.row].job->array_throttle);
  }
  return rows;  // a group's members after its first have no row of their own
}

}  // namespace hq
