// RemoteAcctStore (see remote_store.hpp).
#include "cmd/accounting/remote_store.hpp"

#include "cmd/accounting/store_wire.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "net/clock.hpp"
#include "net/token.hpp"

namespace hq::cmd {

Status RemoteAcctStore::connect() {
  auto ring = load_keyring(store_secret_file(options_.keys_dir));
  if (!ring) return ring.status();
  net::Identity me;
  me.role = "controller";
  auto token = net::mint_token(*ring, me, net::wall_now());
  if (!token) return token.status();
  net::Transport transport;
  transport.ca_pem = read_small_file(options_.ca_file);
  if (transport.ca_pem.empty()) return not_found("cannot read the cluster CA " + options_.ca_file);
  transport.token = *token;
  auto client = net::RpcClient::connect(options_.at, transport, "controller", options_.timeout_s);
  if (!client) return client.status();
  client_ = std::move(client).value();
  return Status::ok();
}

Result<std::vector<pb::StoreReply>> RemoteAcctStore::call_once(const pb::StoreRequest& req) {
  if (!client_)
    if (Status s = connect(); !s) return s;
  pb::Envelope env;
  *env.mutable_store_request() = req;
  client_->send(std::move(env));
  std::vector<pb::StoreReply> replies;
  while (true) {
    auto reply = client_->recv(options_.timeout_s);
    if (!reply && reply.status().code() != Code::kUnavailable) return reply.status();  // the store's error: the link is fine
    if (!reply || !reply->has_store_reply()) {
      client_.reset();  // a connection whose answers are lost or out of step is not used again
      if (!reply) return reply.status();
      return internal("the accounting store at " + where() + " sent something other than an answer");
    }
    replies.push_back(std::move(*reply->mutable_store_reply()));
    if (!replies.back().more()) return replies;
  }
}

Result<std::vector<pb::StoreReply>> RemoteAcctStore::call(const pb::StoreRequest& req) {
  bool fresh = !client_;
  auto replies = call_once(req);
  // A connection made before the daemon restarted fails at its first use: once more on a
  // new one (not after a timeout: the request may still be running there).
  if (!replies && !fresh && replies.status().code() == Code::kUnavailable &&
      replies.status().message().rfind("timed out", 0) != 0)
    replies = call_once(req);
  if (!replies && replies.status().message().find(where()) == std::string::npos)
    return replies.status().with_context("accounting store at " + where());
  return replies;
}

Result<int64_t> RemoteAcctStore::shipped(const std::string& source) {
  pb::StoreRequest req;
  req.set_source(source);
  req.set_shipped(true);
  auto r = call(req);
  if (!r) return r.status();
  return r->front().value();
}

Result<int64_t> RemoteAcctStore::apply(const std::string& source, const std::vector<store::AcctJob>& jobs) {
  // In requests of at most kRequestBytes (a frame holds 16 MiB; a job's name or comment has
  // no size of its own): each applies past the source's last seq, so a part sent again is
  // skipped like a whole batch.
  int64_t last = 0;
  size_t at = 0;
  do {
    pb::StoreRequest req;
    req.set_source(source);
    auto* apply = req.mutable_apply();
    size_t bytes = 0;
    for (; at < jobs.size() && (apply->jobs_size() + apply->spans_size() == 0 || bytes < kRequestBytes); ++at) {
      to_pb(jobs[at], jobs[at].node_span ? *apply->add_spans() : *apply->add_jobs());
      bytes += jobs[at].record.size() + jobs[at].name.size() + jobs[at].account.size();
    }
    auto r = call(req);
    if (!r) return r.status();
    last = r->front().value();
  } while (at < jobs.size());
  return last;
}

Result<std::vector<std::string>> RemoteAcctStore::query(const store::AcctJobQuery& q, std::vector<std::string>* steps) {
  pb::StoreRequest req;
  to_pb(q, *req.mutable_query());
  req.mutable_query()->set_with_steps(steps != nullptr);
  auto r = call(req);
  if (!r) return r.status();
  std::vector<std::string> jobs;
  std::vector<pb::StoreReply> replies = std::move(r).value();
  for (auto& reply : replies) {
    for (auto& job : *reply.mutable_jobs()) jobs.push_back(std::move(job));
    if (steps)
      for (auto& step : *reply.mutable_steps()) steps->push_back(std::move(step));
  }
  return jobs;
}

Result<std::vector<std::string>> RemoteAcctStore::node_spans(const store::AcctJobQuery& q) {
  pb::StoreRequest req;
  to_pb(q, *req.mutable_node_spans());
  auto r = call(req);
  if (!r) return r.status();
  std::vector<std::string> spans;
  std::vector<pb::StoreReply> replies = std::move(r).value();
  for (auto& reply : replies)
    for (auto& span : *reply.mutable_spans()) spans.push_back(std::move(span));
  return spans;
}

Result<int64_t> RemoteAcctStore::count() {
  pb::StoreRequest req;
  req.set_count(true);
  auto r = call(req);
  if (!r) return r.status();
  return r->front().value();
}

Result<store::AcctStore::ModelRows> RemoteAcctStore::load_model() {
  pb::StoreRequest req;
  req.set_load_model(true);
  auto r = call(req);
  if (!r) return r.status();
  ModelRows rows;
  for (const auto& reply : *r) rows.merge(from_pb(reply.rows()));
  return rows;
}

Status RemoteAcctStore::save_model(const ModelRows& before, const ModelRows& next) {
  auto [gone_or_changed, new_or_changed] = store::model_change(before, next);
  if (gone_or_changed.empty() && new_or_changed.empty()) return Status::ok();
  pb::StoreRequest req;
  to_pb(gone_or_changed, *req.mutable_save_model()->mutable_before());
  to_pb(new_or_changed, *req.mutable_save_model()->mutable_next());
  auto r = call(req);
  return r ? Status::ok() : r.status();
}

}  // namespace hq::cmd
