#include "cmd/client/job_query.hpp"

#include "cmd/paths.hpp"
#include "core/hostlist.hpp"
#include "core/units.hpp"

namespace hq::cmd {

Status add_node_filter(pb::QueueRequest& req, const std::string& hostlist) {
  auto names = expand_hostlist(hostlist);
  if (!names) return invalid("Invalid node name specified: " + hostlist);
  for (const auto& n : *names) req.add_nodes(n);
  return Status::ok();
}

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
      *all.mutable_weights() = page->weights();
    }
    if (page->jobs_size() == 0) break;
    uint64_t last = page->jobs(page->jobs_size() - 1).job_id();
    if (!first && last <= env.queue().after_id()) return invalid("the controller's queue pages do not advance");
    auto* jobs = page->mutable_jobs();  // moved over as pointers, not field by field
    std::vector<pb::Job*> moved(static_cast<size_t>(jobs->size()));
    jobs->ExtractSubrange(0, jobs->size(), moved.data());
    all.mutable_jobs()->Reserve(all.jobs_size() + static_cast<int>(moved.size()));
    for (pb::Job* job : moved) all.mutable_jobs()->AddAllocated(job);
    if (!page->more()) break;
    env.mutable_queue()->set_after_id(last);
  }
  return all;
}

Result<pb::NodesReply> query_nodes(net::RpcClient& client, bool with_config, bool with_topology, const std::string& topology_name) {
  pb::Envelope env;
  env.mutable_nodes()->set_with_config(with_config);
  env.mutable_nodes()->set_with_topology(with_topology);
  env.mutable_nodes()->set_topology_name(topology_name);
  auto reply = client.call(env);
  if (!reply) return reply.status();
  return std::move(*reply->mutable_nodes_reply());
}

Result<pb::NodeControlReply> call_admin(const pb::Envelope& request) {
  auto client = connect_client();
  if (!client) return client.status();
  auto reply = (*client)->call(request);
  if (!reply) return reply.status();
  return std::move(*reply->mutable_node_control_reply());
}

Result<JobIdArgs> parse_job_id_args(const std::vector<std::string>& names) {
  JobIdArgs out;
  for (const auto& id : names) {
    size_t us = id.find('_');
    auto n = parse_int(id.substr(0, us), 1, INT64_MAX);
    auto t = us == std::string::npos ? Result<int64_t>(0) : parse_int(id.substr(us + 1), 0, INT32_MAX);
    if (!n || !t) return invalid("Invalid job id specified: " + id);
    out.ids.push_back(static_cast<uint64_t>(*n));
    if (us != std::string::npos) out.tasks.insert(std::to_string(*n) + "_" + std::to_string(*t));
    else out.whole.insert(static_cast<uint64_t>(*n));
  }
  return out;
}

void keep_named_tasks(pb::QueueReply& out, const JobIdArgs& args) {
  if (args.tasks.empty()) return;
  std::set<uint64_t> arrays;
  for (const auto& t : args.tasks)
    if (uint64_t a = std::stoull(t.substr(0, t.find('_'))); !args.whole.count(a)) arrays.insert(a);
  auto* jobs = out.mutable_jobs();
  for (int i = jobs->size() - 1; i >= 0; --i) {
    const pb::Job& j = jobs->Get(i);
    if (j.array_job_id() && arrays.count(j.array_job_id()) &&
        !args.tasks.count(std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id())))
      jobs->DeleteSubrange(i, 1);
  }
}

}  // namespace hq::cmd
