#include "cmd/client/job_query.hpp"

namespace hq::cmd {

Result<pb::QueueReply> query_jobs(net::RpcClient& client, const pb::QueueRequest& req) {
  pb::QueueReply all;
  pb::Envelope env;
  *env.mutable_queue() = req;
  for (bool first = true;; first = false) {
    auto reply = client.call(env);
    if (!reply) return reply.status();
    pb::QueueReply* page = reply->mutable_queue_reply();
    if (first) {
      all.set_now(page->now());
      *all.mutable_unknown_ids() = page->unknown_ids();
    }
    if (page->jobs_size() == 0) break;
    uint64_t last = page->jobs(page->jobs_size() - 1).job_id();
    if (!first && last <= env.queue().after_id()) return invalid("the controller's queue pages do not advance");
    for (auto& job : *page->mutable_jobs()) *all.add_jobs() = std::move(job);
    if (!page->more()) break;
    env.mutable_queue()->set_after_id(last);
  }
  return all;
}

}  // namespace hq::cmd
