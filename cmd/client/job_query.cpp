#include "cmd/client/job_query.hpp"

#include <memory>
#include <utility>

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

namespace {

// Asks for `req` page by page: `call(env)` sends one request and gives its QueueReply;
// every page's jobs are moved (as pointers) into the first page, which is returned.
// `move_jobs(from, to)` moves them the way the pages' ownership allows.
template <typename Call, typename MoveJobs>
Result<pb::QueueReply*> page_through(const pb::QueueRequest& req, Call&& call, MoveJobs&& move_jobs) {
  pb::Envelope env;
  *env.mutable_queue() = req;
  pb::QueueReply* all = nullptr;
  for (;;) {
    Result<pb::QueueReply*> page = call(env);
    if (!page) return page.status();
    pb::QueueReply& p = **page;
    bool first = all == nullptr;
    if (first) all = &p;
    if (p.jobs_size() == 0) break;
    uint64_t last = p.jobs(p.jobs_size() - 1).job_id();
    if (!first && last <= env.queue().after_id()) return invalid("the controller's queue pages do not advance");
    if (!first) move_jobs(p, *all);
    if (!p.more()) break;
    env.mutable_queue()->set_after_id(last);
  }
  if (all) all->clear_more();  // the first page stands for them all now
  return all;
}

}  // namespace

Result<pb::QueueReply> query_jobs(net::RpcClient& client, const pb::QueueRequest& req) {
  std::vector<std::unique_ptr<pb::Envelope>> replies;  // each page's reply, kept until its jobs have moved
  auto call = [&](const pb::Envelope& env) -> Result<pb::QueueReply*> {
    auto reply = client.call(env);
    if (!reply) return reply.status();
    replies.push_back(std::make_unique<pb::Envelope>(std::move(*reply)));
    return replies.back()->mutable_queue_reply();
  };
  auto move_jobs = [](pb::QueueReply& from, pb::QueueReply& to) {
    auto* jobs = from.mutable_jobs();
    std::vector<pb::Job*> moved(static_cast<size_t>(jobs->size()));
    jobs->ExtractSubrange(0, jobs->size(), moved.data());
    to.mutable_jobs()->Reserve(to.jobs_size() + static_cast<int>(moved.size()));
    for (pb::Job* job : moved) to.mutable_jobs()->AddAllocated(job);
  };
  auto all = page_through(req, call, move_jobs);
  if (!all) return all.status();
  return std::move(**all);
}

Result<pb::QueueReply*> query_jobs(net::RpcClient& client, const pb::QueueRequest& req, google::protobuf::Arena& arena,
                                   pb::QueueReply* first) {
  auto call = [&](const pb::Envelope& env) -> Result<pb::QueueReply*> {
    if (first) return std::exchange(first, nullptr);
    auto reply = client.call_on(arena, env);
    if (!reply) return reply.status();
    return (*reply)->mutable_queue_reply();
  };
  auto move_jobs = [](pb::QueueReply& from, pb::QueueReply& to) {  // both on `arena`
    auto* jobs = from.mutable_jobs();
    std::vector<pb::Job*> moved(static_cast<size_t>(jobs->size()));
    jobs->UnsafeArenaExtractSubrange(0, jobs->size(), moved.data());
    to.mutable_jobs()->Reserve(to.jobs_size() + static_cast<int>(moved.size()));
    for (pb::Job* job : moved) to.mutable_jobs()->UnsafeArenaAddAllocated(job);
  };
  return page_through(req, call, move_jobs);
}

Status parse_records(const std::vector<std::string_view>& records, pb::QueueReply& into) {
  into.mutable_jobs()->Reserve(into.jobs_size() + static_cast<int>(records.size()));
  for (std::string_view r : records)
    if (!into.add_jobs()->ParseFromArray(r.data(), static_cast<int>(r.size())))
      return invalid("undecodable job record in the controller's reply");
  return Status::ok();
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
    if (us != std::string::npos) {
      out.tasks.insert(std::to_string(*n) + "_" + std::to_string(*t));
      out.task_ids.insert({static_cast<uint64_t>(*n), static_cast<int32_t>(*t)});
    } else {
      out.whole.insert(static_cast<uint64_t>(*n));
    }
  }
  return out;
}

void add_named_jobs(pb::QueueRequest& req, const JobIdArgs& args) {
  for (uint64_t id : args.ids) req.add_job_ids(id);
  for (const auto& [array, task] : args.task_ids) {
    if (args.whole.count(array)) continue;
    pb::NamedTask* named = req.add_named_tasks();
    named->set_array_job_id(array);
    named->set_task_id(task);
  }
}

void keep_named_tasks(pb::QueueReply& out, const JobIdArgs& args) {
  if (args.tasks.empty()) return;
  std::set<uint64_t> arrays;
  for (const auto& t : args.tasks)
    if (uint64_t a = std::stoull(t.substr(0, t.find('_'))); !args.whole.count(a)) arrays.insert(a);
  auto* jobs = out.mutable_jobs();
  for (int i = jobs->size() - 1; i >= 0; --i) {
    const pb::Job& j = jobs->Get(i);
    if (j.array_job_id() && arrays.count(j.array_job_id()) && !args.whole.count(j.job_id()) &&
        !args.tasks.count(std::to_string(j.array_job_id()) + "_" + std::to_string(j.array_task_id())))
      jobs->DeleteSubrange(i, 1);
  }
}

}  // namespace hq::cmd
