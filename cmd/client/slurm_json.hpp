// squeue --json/--yaml and sinfo --json/--yaml in Slurm 22.05's data_parser shape (OpenAPI
// v0.0.38: {"meta", "errors", "jobs"|"nodes"}), the keys tools parse, with hq's own fields
// under an "hq" key. Built as protobuf Struct values, printed with Slurm's key order as its
// JSON (slurm_tree) or its YAML (slurm_yaml).
// One thread (a client's).
#pragma once
#include <string>

#include "hq.pb.h"

namespace hq::cmd {

// The JSON text for a reply; `cluster`: the cluster's name.
std::string squeue_slurm_json(const pb::QueueReply& q, const std::string& cluster);
std::string sinfo_slurm_json(const pb::NodesReply& r);
// The same tree as Slurm's --yaml prints it.
std::string squeue_slurm_yaml(const pb::QueueReply& q, const std::string& cluster);
std::string sinfo_slurm_yaml(const pb::NodesReply& r);

// tres_req_str: what a job asks for, as Slurm writes it ("cpu=2,mem=2000M,node=1,billing=2");
// tres_alloc_str: what it was given ("" before it starts).
std::string tres_requested(const pb::Job& job);
std::string tres_allocated(const pb::Job& job);
// "cpu=4,mem=8000M,billing=4[,gres/gpu=2]": a node's TRES, or of its resources in use.
std::string node_tres(int64_t cpus, int64_t mem, int64_t gpus, bool billing);

}  // namespace hq::cmd
