// squeue without -r shows the pending tasks of an array that would print the same line
// as one row, "12_[1-1000%10]", where the first of them stands (as Slurm shows the part
// of an array it has not split off yet). The controller groups them itself for a listing
// that asks (QueueRequest.collapse_arrays), so that a queue of large arrays is sent, read
// and printed as a few records, not one per task. The client groups what it is sent the
// same way (cmd/client/queue_format's queue_rows); tests/cmd/array_rows_test.cpp holds
// the two to the same rows. Memory only for the arrays' pending tasks (a task id each):
// a listing of plain jobs keeps nothing. Pure; one thread.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/job.hpp"

namespace hq {

// Whether two pending tasks of one array show the same line in squeue's brief listing:
// the same name, user, uid, node, task and CPU counts and begin time, reason, partition,
// time limit, priority, hold and eligible time.
bool same_listed_line(const Job& a, const Job& b);

// One row of a listing: a job, and for the first of a group of an array's pending tasks,
// the group's tasks as squeue shows them ("1-1000%10"; "" for a row of one job).
struct ListedRow {
  const Job* job = nullptr;
  std::string tasks;
};

// An array's pending tasks grouped by the line they show, as the listing meets them (in
// any order); the jobs must outlive it.
class ArrayGroups {
 public:
  // Keeps `j` when it is an array's pending task (true): it is listed with its group.
  // False for any other job, which the listing shows as it is.
  bool add(const Job& j);
  // A row per group: its first task (the lowest id) and, for a group of more than one, its
  // tasks. In the order the groups were formed.
  std::vector<ListedRow> rows() const;

 private:
  struct Group {
    const Job* first;
    std::vector<int32_t> tasks;
  };
  std::vector<Group> groups_;
  std::unordered_map<size_t, std::vector<size_t>> by_line_;  // line hash -> groups (usually one)
  size_t last_ = SIZE_MAX;  // the group of the task before: an array's tasks mostly come together
};

// A listing's rows with its arrays' pending tasks grouped: each job that `for_each(visit)`
// offers to `visit(job, ...)` (which returns false to stop it; what follows the job is
// ignored) goes to `add(job, "")` as it comes, or, an array's pending task, into its
// group; then each group's row to `add(first, tasks)`. Stops at the first `add` that
// returns false, and returns false then.
template <typename ForEach, typename Add>
bool add_grouped_rows(ForEach&& for_each, Add&& add) {
  ArrayGroups groups;
  bool ok = true;
  for_each([&](const Job& job, auto&&...) { return groups.add(job) || (ok = add(job, std::string_view())); });
  if (!ok) return false;
  for (const ListedRow& row : groups.rows())
    if (!add(*row.job, std::string_view(row.tasks))) return false;
  return true;
}

}  // namespace hq
