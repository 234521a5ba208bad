// squeue -o: a job's value for each field letter of core/squeue_format, as Slurm 22.05
// prints it ("(null)" for what a job has not got, "N/A" for times not known yet), and the
// table of a reply in a parsed format. One thread (a client's).
#pragma once
#include <string>
#include <vector>

#include "core/squeue_format.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// Job `j` of a reply made at `now`: its value for `field`.
std::string squeue_value(const pb::Job& j, char field, int64_t now);

// Jobs in squeue's default order, "P,t,-p": partition, then state (Slurm's numbering:
// pending before running before the ended), then the higher priority, then the id.
void sort_like_squeue(pb::QueueReply& q);

// One line of squeue: a job, or the pending tasks of an array that squeue shows as one
// ("12_[3-1000%10]": `id`, and `tasks` for %K; both empty for a plain row).
struct QueueRow {
  const pb::Job* job = nullptr;
  std::string id, tasks;
};

// The rows for a reply's jobs, in their order. Unless `one_per_task` (squeue -r), an
// array's pending tasks that wait for the same reason are one row, where the first of
// them stands, as Slurm shows the part of an array it has not split off yet.
std::vector<QueueRow> queue_rows(const pb::QueueReply& q, bool one_per_task);

// The header line (unless `header` is false) and a line per row, on stdout.
void print_formatted(const std::vector<QueueRow>& rows, int64_t now, const SqueueFormat& format, bool header);

}  // namespace hq::cmd
