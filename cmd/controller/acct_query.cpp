// The controller's accounting: opening the store at start, and sacct's queries (who may
// see what: root and operators every job, others their own and, unless private_jobs,
// anyone's they name or all with -a, as Slurm without PrivateData).
// Runs on the controller's event-loop thread.
#include <array>
#include <map>

#include <asio/post.hpp>

#include "cmd/accounting/remote_store.hpp"
#include "cmd/controller/controller.hpp"
#include "cmd/users.hpp"
#include "core/assoc_mgr_format.hpp"
#include "core/hostlist.hpp"
#include "core/share_runs.hpp"
#include "core/units.hpp"
#include "net/clock.hpp"
#include "net/convert_acct.hpp"
#include "net/log.hpp"
#include "net/usage_reset.hpp"

namespace hq::cmd {

void Controller::open_accounting() {
  if (auto e = parse_acct_enforce(config_.accounting.enforce); e) enforce_ = *e;  // the config loader checked it
  const AccountingConfig& a = config_.accounting;
  if (a.storage != "internal" && a.storage != "remote") return;
  std::string path = a.path.empty() ? config_.controller.state_dir + "/accounting.db" : a.path;
  auto link = std::make_unique<AccountingLink>(
      *journal_, config_.name, [this](std::function<void()> fn) { asio::post(io_, std::move(fn)); },
      [this](std::function<void()> fn) {
        ship_timer_.expires_after(kShipDelay);
        ship_timer_.async_wait([fn = std::move(fn)](const asio::error_code& ec) {
          if (!ec) fn();
        });
      });
  if (a.storage == "remote") {
    // Nothing is asked of it yet: the shipper and the model's loading try until it answers.
    RemoteStoreOptions remote{{a.host, static_cast<uint16_t>(a.port)}, config_.keys_dir + "/ca.pem", config_.keys_dir};
    link->use(std::make_unique<RemoteAcctStore>(std::move(remote)));
    log::info("accounting: job records go to the accounting store at " + a.host + ":" + std::to_string(a.port));
  } else if (Status s = link->open(path); !s) {
    log::error("accounting: " + s.message() + " (job records wait in the journal's outbox until a restart opens the store)");
    return;
  } else {
    log::info("accounting: job records go to " + link->where());
  }
  link->set_model_cache(config_.controller.state_dir + "/acct_model.cache");
  acct_ = std::move(link);
  acct_->ship();
  load_acct_model();
}

void Controller::load_acct_model() {
  model_retry_at_ = 0;
  acct_->load_model(config_.controller.host, static_cast<uint32_t>(bound_port()), [this](Status s) {
    if (!s) {
      model_retry_at_ = net::mono_seconds() + 5;
      if (acct_->model_from_cache() && !acct_policy_) refresh_acct_policy();  // the last known, meanwhile
      return log::error("accounting: the model (accounts, users, QOS) did not load: " + s.message() + " (trying again)");
    }
    refresh_acct_policy();
    // Reading usage costs seconds over a million records: only when something uses it.
    if (fair_share_wanted()) refresh_fair_share();
  });
}

bool Controller::fair_share_wanted() const {
  const PriorityWeights& w = config_.scheduler.weights;
  return w.fairshare > 0 || (acct_policy_ && acct_policy_->has_usage_limits()) ||
         net::mono_seconds() - fair_share_asked_ < 10.0 * static_cast<double>(w.calc_period);
}

void Controller::with_shares(std::function<void()> fn) {
  fair_share_asked_ = net::mono_seconds();
  if (!acct_ || (shares_ && !fair_share_running_ && net::mono_seconds() < next_fair_share_)) return fn();
  share_waiters_.push_back(std::move(fn));
  refresh_fair_share();
}

void Controller::refresh_acct_policy() {
  if (!acct_) return;
  std::unordered_map<std::string, std::string> partition_qos;
  for (const auto& p : config_.partitions)
    if (!p.qos.empty()) partition_qos[p.name] = p.qos;
  acct_policy_ = std::make_shared<const AcctPolicy>(acct_->model(), config_.name, enforce_, shares_, partition_qos);
  scheduler_ = Scheduler(config_.scheduler, acct_policy_);
  request_schedule();  // a limit raised or cleared may let jobs start
}

FairShareConfig Controller::fair_share_config() const {
  const PriorityWeights& w = config_.scheduler.weights;
  return {w.decay_half_life, w.fair_share_classic, static_cast<double>(w.fair_share_dampening),
          net::usage_reset_at(w.usage_reset, now())};
}

std::shared_ptr<const FairShare> Controller::current_shares() const {
  if (shares_) return shares_;
  return std::make_shared<const FairShare>(acct_->model(), config_.name, std::vector<UsageRecord>{}, now(), fair_share_config());
}

void Controller::count_active(AcctUsage& usage) const {
  for_each_active_job(state_, [&](const Job& j) { usage.add(j); });
}

void Controller::refresh_fair_share() {
  if (!acct_) return;
  if (fair_share_running_) {
    fair_share_again_ = true;
    return;
  }
  fair_share_running_ = true;
  const PriorityWeights& w = config_.scheduler.weights;
  next_fair_share_ = net::mono_seconds() + static_cast<double>(w.calc_period);
  // Usage older than 20 half-lives weighs less than a millionth, and usage before a reset
  // counts for nothing: not read.
  Time since = w.decay_half_life > 0 ? std::max<Time>(0, now() - 20 * w.decay_half_life) : 0;
  FairShareConfig cfg = fair_share_config();
  since = std::max(since, cfg.reset_at);
  acct_->fair_share(now(), since, cfg, [this](Result<std::shared_ptr<const FairShare>> shares) {
    fair_share_running_ = false;
    if (!shares) log::error("accounting: fair share not worked out: " + shares.status().message());
    else shares_ = std::move(shares).value();
    refresh_acct_policy();
    if (!fair_share_again_) {
      auto waiters = std::move(share_waiters_);
      share_waiters_.clear();
      for (auto& fn : waiters) fn();
    }
    if (fair_share_again_) {
      fair_share_again_ = false;
      refresh_fair_share();
    }
  });
}

Status Controller::enforce_at_submit(JobSpec& spec, const std::vector<std::string>& partitions) const {
  if (!enforce_.associations) return Status::ok();
  if (!acct_policy_)
    return unavailable(acct_ ? "the accounting model (accounts, users, QOS) has not loaded yet; try again"
                             : "accounting enforcement is on but the accounting store did not open (see the controller's log)");
  return acct_policy_->choose(spec, partitions);
}

Status Controller::check_submit_limits(const Job& first, size_t count) const {
  if (!acct_policy_ || !acct_policy_->has_limits()) return Status::ok();
  AcctUsage usage(*acct_policy_, now());
  if (acct_policy_->has_submit_limits()) count_active(usage);  // the queue counts
  JobReason why = usage.refused(first, static_cast<int64_t>(count));
  if (why == JobReason::kNone) return Status::ok();
  return invalid(std::string(to_string(why)) +
                 "\nJob violates accounting/QOS policy (job submit limit, user's size and/or time limits)");
}

pb::AssocMgrReply Controller::assoc_mgr(const pb::AssocMgrRequest& req) const {
  pb::AssocMgrReply out;
  out.set_enabled(acct_ != nullptr && acct_policy_ != nullptr);
  if (!out.enabled()) return out;
  auto q = parse_assoc_mgr_args({req.words().begin(), req.words().end()});
  if (!q) {
    out.set_error(q.status().message());
    return out;
  }
  q->one_liner = req.one_liner();
  fair_share_asked_ = net::mono_seconds();
  q->gpu_tres = std::any_of(state_.nodes.begin(), state_.nodes.end(), [](const auto& n) { return !n.second.gpus.empty(); });
  AcctUsage usage(*acct_policy_, now());
  count_active(usage);
  std::shared_ptr<const FairShare> shares = current_shares();
  std::map<std::string, int64_t> uids;  // one passwd lookup per user, however many records
  auto uid_of = [&uids](const std::string& name) -> int64_t {
    auto [it, fresh_name] = uids.try_emplace(name, -1);
    if (fresh_name)
      if (auto pw = passwd_by_name(name)) it->second = static_cast<int64_t>(pw->uid);
    return it->second;
  };
  out.set_text(render_assoc_mgr(acct_->model(), config_.name, *shares, usage, uid_of, *q));
  return out;
}

void Controller::own_cluster_tres(pb::AcctListedRec& listed) const {
  std::vector<std::string> names;
  int64_t cpus = 0, mem = 0, gpus = 0;
  for (const auto& [name, n] : state_.nodes) {
    names.push_back(name);
    cpus += n.cpus, mem += n.mem_mib, gpus += static_cast<int64_t>(n.gpus.size());
  }
  listed.set_nodes(compress_hostlist(names));
  for (int64_t v : {cpus, mem, static_cast<int64_t>(names.size()), cpus, gpus}) listed.add_tres(v);
}

pb::ShareReply Controller::shares() const {
  fair_share_asked_ = net::mono_seconds();  // keeps fair share worked out for a while
  pb::ShareReply out;
  out.set_cluster(config_.name);
  out.set_enabled(acct_ != nullptr);
  if (!acct_) return out;
  std::shared_ptr<const FairShare> current = current_shares();
  const FairShare& fs = *current;
  std::vector<TresCounts> run = running_tres_seconds(fs, state_, now());
  out.set_gpus(std::any_of(state_.nodes.begin(), state_.nodes.end(), [](const auto& n) { return !n.second.gpus.empty(); }));
  for (size_t i = 0; i < fs.rows().size(); ++i) {
    const ShareRow& r = fs.rows()[i];
    pb::ShareRowRec* p = out.add_rows();
    p->set_assoc(r.assoc);
    p->set_depth(r.depth);
    p->set_account(r.account);
    p->set_user(r.user);
    p->set_partition(r.partition);
    p->set_parent(r.parent);
    p->set_raw_shares(r.raw_shares);
    p->set_norm_shares(r.norm_shares);
    p->set_raw_usage(r.raw_usage);
    p->set_norm_usage(r.norm_usage);
    p->set_effective_usage(r.effective_usage);
    p->set_level_fs(r.level_fs);
    p->set_fair_share(r.fair_share);
    p->set_grp_tres_mins(r.grp_tres_mins);
    const TresCounts& secs = run[i];
    p->set_tres_run_mins(tres_run_mins_text(secs));
    for (int k = 0; k < kTresKinds; ++k) {
      p->add_tres_usage(r.used.tres[k]);
      p->add_run_seconds(secs[k]);
    }
  }
  return out;
}

void Controller::acct_mgr(const pb::AcctMgrRequest& req, const net::Identity& who,
                          std::function<void(Result<pb::AcctMgrReply>)> reply) {
  pb::AcctMgrReply out;
  out.set_host(config_.controller.host);
  if (!acct_) {
    out.set_enabled(false);
    return reply(out);
  }
  out.set_enabled(true);
  std::vector<std::string> words(req.words().begin(), req.words().end());
  if (words.size() > 4096) return reply(invalid("too many words for one sacctmgr command"));
  AcctMgrOptions options;
  options.noheader = req.noheader();
  options.parsable = req.parsable();
  options.parsable2 = req.parsable2();
  options.with_assoc = req.with_assoc();
  options.readonly = req.readonly();
  options.records = req.records();
  std::string verb = words.empty() ? "" : to_lower(words.front());
  bool deleting = verb.rfind("del", 0) == 0 || verb.rfind("rem", 0) == 0;
  if (deleting) for_each_active_job(state_, [&](const Job& j) {  // a delete is refused while they are
    std::string account = j.spec.account;
    if (account.empty()) {  // a job without -A counts for its user's default account (fair share does too)
      auto u = acct_->model().users.find(j.spec.user);
      if (u != acct_->model().users.end()) account = u->second.default_account;
    }
    if (!account.empty()) options.active_jobs.push_back({j.id.value, config_.name, account, j.spec.user});
  });
  AcctMgrActor actor{user_name(who.uid), is_admin(who)};
  auto failed = reply;  // for list events: the store's error
  auto run = [this, words, actor, out, commit = req.commit(), reply = std::move(reply)](AcctMgrOptions options) mutable {
    acct_->acctmgr(words, options, actor, commit, [this, out, commit, reply = std::move(reply)](Result<AcctMgrResult> r) mutable {
      if (!r) return reply(r.status());
      if (r->changed && commit) {
        refresh_acct_policy();
        if (fair_share_wanted()) refresh_fair_share();  // shares may have changed
        else shares_.reset();                          // worked out again when next asked for
      }  // stored: enforcement follows the model from here on
      out.set_out(r->out);
      out.set_err(r->err);
      out.set_rc(r->rc);
      out.set_changed(r->changed);
      out.set_file_name(r->file_name);
      out.set_file_text(r->file_text);
      if (!r->listed.kind.empty()) {
        pb::AcctListedRec* listed = out.mutable_listed();
        *listed = net::to_pb(r->listed);
        listed->set_cluster(config_.name);
        if (r->listed.kind == "clusters" || r->listed.kind == "tres") own_cluster_tres(*listed);
      }
      reply(out);
    });
  };
  if (!acctmgr_lists_events(words)) return run(std::move(options));
  // list events: the store's spans first, read once what waits has shipped.
  options.events.cluster = config_.name;
  options.events.now = req.now() ? req.now() : now();
  options.events.utc_offset = req.utc_offset();
  store::AcctJobQuery q;
  q.cluster = config_.name;
  acct_->node_spans(q, [this, options = std::move(options), run = std::move(run), failed = std::move(failed)](
                           Result<std::vector<NodeSpan>> spans) mutable {
    if (!spans) return failed(spans.status());
    for (const NodeSpan& s : *spans) options.events.user_names.try_emplace(s.uid, user_name(s.uid));
    options.events.spans = std::move(spans).value();
    run(std::move(options));
  });
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
  q.with_steps = req.with_steps();
  q.latest_only = !req.duplicates();
  acct_->query(std::move(q), [reply = std::move(reply), cluster = config_.name](Result<AccountingLink::Records> rows) {
    if (!rows) return reply(rows.status());
    pb::AcctQueryReply out;
    out.set_enabled(true);
    out.set_cluster(cluster);
    for (const auto& row : rows->jobs)
      if (!out.add_jobs()->ParseFromString(row)) return reply(internal("the accounting store holds a damaged job record"));
    for (const auto& row : rows->steps)
      if (!out.add_steps()->ParseFromString(row)) return reply(internal("the accounting store holds a damaged step record"));
    reply(out);
  });
}

}  // namespace hq::cmd
