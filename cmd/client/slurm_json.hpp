// squeue --json and sinfo --json in Slurm 22.05's data_parser shape (OpenAPI v0.0.38:
// {"meta", "errors", "jobs"|"nodes"}), the keys tools parse, with hq's own fields under
// an "hq" key. Built as protobuf Struct values and printed by protobuf's JSON printer.
// One thread (a client's).
#pragma once
#include <string>

#include "hq.pb.h"

namespace hq::cmd {

// The JSON text (YAML 1.2 reads it too) for a reply; `cluster`: the cluster's name.
std::string squeue_slurm_json(const pb::QueueReply& q, const std::string& cluster);
std::string sinfo_slurm_json(const pb::NodesReply& r);

}  // namespace hq::cmd
