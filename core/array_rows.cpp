#include "core/array_rows.hpp"

#include <algorithm>
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

std::vector<ListedRow> collapse_array_rows(const std::vector<const Job*>& jobs) {
  struct Group {
    size_t row;
    std::vector<int32_t> tasks;
  };
  std::unordered_map<uint64_t, std::vector<Group>> by_array;  // an array's groups (usually one)
  std::vector<ListedRow> rows;
  rows.reserve(jobs.size());
  uint64_t last_array = 0;
  std::vector<Group>* groups = nullptr;  // last_array's: an array's tasks mostly come together
  for (const Job* j : jobs) {
    if (j->array_job_id == 0 || j->state != JobState::kPending) {
      rows.push_back({j, ""});
      continue;
    }
    if (j->array_job_id != last_array || !groups) {
      groups = &by_array[j->array_job_id];
      last_array = j->array_job_id;
    }
    auto same = std::find_if(groups->begin(), groups->end(),
                             [&](const Group& g) { return same_listed_line(*rows[g.row].job, *j); });
    if (same == groups->end()) {
      groups->push_back({rows.size(), {}});
      same = groups->end() - 1;
      rows.push_back({j, ""});
    }
    same->tasks.push_back(j->array_task_id);
  }
  for (auto& [array, list] : by_array)
    for (Group& g : list) {
      if (g.tasks.size() < 2) continue;
      std::sort(g.tasks.begin(), g.tasks.end());
      rows[g.row].tasks = format_array_indices(g.tasks, rows[g.row].job->array_throttle);
    }
  return rows;  // a group's members after its first have no row of their own
}

}  // namespace hq
