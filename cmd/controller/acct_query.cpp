// The controller's accounting: opening the store at start, and sacct's queries (who may
// see what: root and operators every job, others their own and, unless private_jobs,
// anyone's they name or all with -a, as Slurm without PrivateData).
// Runs on the controller's event-loop thread.
#include <asio/post.hpp>

#include "cmd/controller/controller.hpp"
#include "net/log.hpp"

namespace hq::cmd {

void Controller::open_accounting() {
  if (config_.accounting.storage != "internal") return;
  std::string path = config_.accounting.path.empty() ? config_.controller.state_dir + "/accounting.db" : config_.accounting.path;
  auto link = std::make_unique<AccountingLink>(*journal_, config_.name, [this](std::function<void()> fn) {
    asio::post(io_, std::move(fn));
  });
  if (Status s = link->open(path); !s) {
    log::error("accounting: " + s.message() + " (job records wait in the journal's outbox until a restart opens the store)");
    return;
  }
  log::info("accounting: job records go to " + path);
  acct_ = std::move(link);
  acct_->ship();
}

void Controller::acct_query(const pb::AcctQueryRequest& req, const net::Identity& who,
                            std::function<void(Result<pb::AcctQueryReply>)> reply) {
  if (!acct_) {
    pb::AcctQueryReply out;
    out.set_enabled(false);
    out.set_cluster(config_.name);
    return reply(out);
  }
  store::AcctJobQuery q;
  q.cluster = config_.name;
  for (const auto& j : req.jobs()) q.jobs.emplace_back(j.job_id(), j.array_task());
  q.uids.assign(req.uids().begin(), req.uids().end());
  bool admin = is_admin(who);
  if (config_.private_jobs && !admin) q.uids = {who.uid};
  else if (q.uids.empty() && !req.all_users() && !admin) q.uids = {who.uid};
  q.names.assign(req.names().begin(), req.names().end());
  q.states.assign(req.states().begin(), req.states().end());
  q.partitions.assign(req.partitions().begin(), req.partitions().end());
  q.accounts.assign(req.accounts().begin(), req.accounts().end());
  q.start = req.start();
  q.end = req.end();
  q.limit = req.limit();
  acct_->query(std::move(q), [reply = std::move(reply), cluster = config_.name](Result<std::vector<std::string>> rows) {
    if (!rows) return reply(rows.status());
    pb::AcctQueryReply out;
    out.set_enabled(true);
    out.set_cluster(cluster);
    for (const auto& row : *rows)
      if (!out.add_jobs()->ParseFromString(row)) return reply(internal("the accounting store holds a damaged job record"));
    reply(out);
  });
}

}  // namespace hq::cmd
