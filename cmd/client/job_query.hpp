// The jobs a queue request selects, page by page: a controller's reply carries at most a
// few MiB of jobs, so clients ask again after the last id until it says there are no more.
#pragma once
#include "core/status.hpp"
#include "hq.pb.h"
#include "net/client.hpp"

namespace hq::cmd {

// Every page of `req` in one reply (`now` from the first page).
Result<pb::QueueReply> query_jobs(net::RpcClient& client, const pb::QueueRequest& req);

}  // namespace hq::cmd
