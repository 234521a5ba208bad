// squeue -o: a job's value for each field letter of core/squeue_format, as Slurm 22.05
// prints it ("(null)" for what a job has not got, "N/A" for times not known yet), and the
// table of a reply in a parsed format. One thread (a client's).
#pragma once
#include <string>

#include "core/squeue_format.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// Job `j` of a reply made at `now`: its value for `field`.
std::string squeue_value(const pb::Job& j, char field, int64_t now);

// Jobs in squeue's default order, "P,t,-p": partition, then state (Slurm's numbering:
// pending before running before the ended), then the higher priority, then the id.
void sort_like_squeue(pb::QueueReply& q);

// The header line (unless `header` is false) and a line per job, on stdout.
void print_formatted(const pb::QueueReply& q, const SqueueFormat& format, bool header);

}  // namespace hq::cmd
