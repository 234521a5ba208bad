// The jobs a queue request selects, page by page: a controller's reply carries at most a
// few MiB of jobs, so clients ask again after the last id until it says there are no more.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "core/status.hpp"
#include "hq.pb.h"
#include "net/client.hpp"

namespace hq::cmd {

// Every page of `req` in one reply (`now` from the first page).
Result<pb::QueueReply> query_jobs(net::RpcClient& client, const pb::QueueRequest& req);

// squeue's and scancel's -w: the jobs holding any node of `hostlist` (expanded into `req`).
Status add_node_filter(pb::QueueRequest& req, const std::string& hostlist);

// Job ids as squeue -j and scontrol show job take them: "12" (a job, or all of array 12)
// and "12_5" (one task of array 12).
struct JobIdArgs {
  std::vector<uint64_t> ids;         // what to ask the controller for
  std::set<std::string> tasks;       // "12_5"
  std::set<uint64_t> whole;          // named without a task
};
Result<JobIdArgs> parse_job_id_args(const std::vector<std::string>& names);

// Drops from `out` the tasks of an array named only with tasks ("12_5": not 12_6).
void keep_named_tasks(pb::QueueReply& out, const JobIdArgs& args);

}  // namespace hq::cmd
