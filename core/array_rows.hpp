// squeue without -r shows the pending tasks of an array that would print the same line
// as one row, "12_[1-1000%10]", where the first of them stands (as Slurm shows the part
// of an array it has not split off yet). The controller groups them itself for a listing
// that asks (QueueRequest.collapse_arrays), so that a queue of large arrays is sent, read
// and printed as a few records, not one per task. The client groups what it is sent the
// same way (cmd/client/queue_format's queue_rows); tests/cmd/array_rows_test.cpp holds
// the two to the same rows. Pure; one thread.
#pragma once
#include <string>
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

// The rows for `jobs` (in id order), in the same order: each array's pending tasks that
// show the same line become the row of the first of them.
std::vector<ListedRow> collapse_array_rows(const std::vector<const Job*>& jobs);

}  // namespace hq
