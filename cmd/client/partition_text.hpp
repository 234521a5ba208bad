// scontrol show partition's record for one partition, in Slurm 22.05's layout
// (slurm_sprint_partition_info): its settings, and its totals (CPUs, memory, GPUs) summed
// over the nodes the reply lists as its members. One thread (a client's).
#pragma once
#include <string>

#include "hq.pb.h"

namespace hq::cmd {

// The record, each line after the first indented by three spaces and a blank line after
// it; `nodes`: the reply the partition came in (for its members' resources).
std::string partition_text(const pb::Partition& p, const pb::NodesReply& nodes);

}  // namespace hq::cmd
