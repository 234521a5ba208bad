// squeue without -r shows the pending tasks of an array that would print the same line
// as one row, "12_[1-1000%10]", where the first of them stands (as Slurm shows the part
// of an array it has not split off yet). The controller groups them itself for a listing
// that asks (QueueRequest.collapse_arrays), so that a queue of large arrays is sent, read
// and printed as a few records, not one per task. The client groups what it is sent the
// same way (cmd/client/queue_format's queue_rows); tests/cmd/array_rows_test.cpp holds
// the two to the same rows. Memory only for the arrays' pending tasks (a task id each):
// a listing of plain jobs keeps nothing. The controller keeps what it made of each array
// (ArrayListings) until one of its tasks changes, so that a listing of large arrays costs
// the rows it shows. Pure; one thread.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/job.hpp"

namespace hq {

struct ClusterState;

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

// One stretch of an array's tasks in id order, as a grouped listing shows them: its
// pending tasks grouped, a row each, and its other tasks one by one. An array's tasks get
// ids in a row at its submission (and no job gets an id below the highest), so the
// stretch from its first task left is the whole array.
struct ArrayStretch {
  uint64_t array = 0;              // its array_job_id
  uint64_t stamp = 0;              // the array's (ClusterState::arrays) when it was made
  uint64_t last_id = 0;            // the stretch's last task
  std::vector<ListedRow> groups;   // its pending tasks grouped, as ArrayGroups groups them
  std::vector<const Job*> others;  // its other tasks, in id order
  uint64_t walk = 0;               // the last walk that met it
};

// The stretches grouped listings made, each kept until its array changes (a new stamp),
// so that a listing of large arrays reads their tasks once and then costs the rows it
// shows, not the tasks. The records they point to are the state's: a stretch whose array
// has a new stamp (a task changed or left) is made again before it is read. It serves
// one state for its life (stamps are that state's): whoever replaced the state would
// make a new one. Pure; one thread, with the state it reads.
class ArrayListings {
 public:
  // A walk in id order begins; `stretch` is then given the first task it meets of each stretch.
  void begin_walk() {
    ++walk_;
    met_ = 0;
  }
  // The stretch that starts at `first`, made again if its array changed since.
  const ArrayStretch& stretch(const ClusterState& s, const Job& first);
  // The walk is over: when many more stretches are kept than it met, those it did not meet
  // whose array has changed or gone since are dropped (the others may serve the next walk).
  void end_walk(const ClusterState& s);
  size_t tasks_read() const { return tasks_read_; }  // to make stretches, in all
  size_t kept() const { return by_first_.size(); }

 private:
  std::unordered_map<uint64_t, ArrayStretch> by_first_;  // by the id of the stretch's first task
  uint64_t walk_ = 0;
  size_t met_ = 0;
  size_t rebuilds_ = 0;  // the job list's: a rebuilt list may hold jobs out of order
  size_t tasks_read_ = 0;
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
