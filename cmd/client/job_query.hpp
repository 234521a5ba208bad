// The requests several clients send the controller: the jobs a queue request selects, page
// by page (a reply carries at most a few MiB of jobs, so clients ask again after the last id
// until it says there are no more), the nodes reply, and the administration requests that
// are answered with a NodeControlReply.
#pragma once
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.hpp"
#include "hq.pb.h"
#include "net/client.hpp"

namespace hq::cmd {

// Every page of `req` in one reply (`now` from the first page).
Result<pb::QueueReply> query_jobs(net::RpcClient& client, const pb::QueueRequest& req);
// The same made on `arena` and living as long as it (squeue's long listings: a record is
// not an allocation each).
// `first`: the first page, fetched and parsed already (on `arena`).
Result<pb::QueueReply*> query_jobs(net::RpcClient& client, const pb::QueueRequest& req, google::protobuf::Arena& arena,
                                   pb::QueueReply* first = nullptr);
// Serialized job records (net::RpcClient::call_unparsed_jobs) parsed into `into`'s jobs.
Status parse_records(const std::vector<std::string_view>& records, pb::QueueReply& into);

// Nodes, partitions and reservations (with the controller's settings: scontrol show config).
// with_topology: topology `topology_name`'s lines ("" or a name no topology has: the default's).
Result<pb::NodesReply> query_nodes(net::RpcClient& client, bool with_config = false, bool with_topology = false,
                                   const std::string& topology_name = "");
// Connects, sends an administration request (node control, partition update, reservation)
// and returns the controller's NodeControlReply.
Result<pb::NodeControlReply> call_admin(const pb::Envelope& request);

// squeue's and scancel's -w: the jobs holding any node of `hostlist` (expanded into `req`).
Status add_node_filter(pb::QueueRequest& req, const std::string& hostlist);

// Job ids as squeue -j and scontrol show job take them: "12" (a job, or all of array 12)
// and "12_5" (one task of array 12).
struct JobIdArgs {
  std::vector<uint64_t> ids;         // what to ask the controller for
  std::set<std::string> tasks;       // "12_5"
  std::set<std::pair<uint64_t, int32_t>> task_ids;  // the same as (12, 5)
  std::set<uint64_t> whole;          // named without a task
};
Result<JobIdArgs> parse_job_id_args(const std::vector<std::string>& names);

// Asks for `args`' jobs: their ids, and the tasks of the arrays named only with tasks
// (QueueRequest.named_tasks), which the controller then lists alone.
void add_named_jobs(pb::QueueRequest& req, const JobIdArgs& args);

// Drops from `out` the tasks of an array named only with tasks ("12_5": not 12_6), but
// not a task named by its own job id ("12_5,13", 13 being 12_6: both).
void keep_named_tasks(pb::QueueReply& out, const JobIdArgs& args);

}  // namespace hq::cmd
