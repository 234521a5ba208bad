// The accounting model's protobuf forms (see convert_acct.hpp).
#include "net/convert_acct.hpp"

namespace hq::net {
namespace {

void put_tres(google::protobuf::RepeatedPtrField<pb::AcctTres>* out, const TresList& t) {
  for (const auto& [name, count] : t) {
    auto* x = out->Add();
    x->set_name(name);
    x->set_count(count);
  }
}

TresList get_tres(const google::protobuf::RepeatedPtrField<pb::AcctTres>& in) {
  TresList out;
  for (const auto& x : in) out.emplace_back(x.name(), x.count());
  return out;
}

pb::AcctLimits limits_pb(const AcctLimits& l) {
  pb::AcctLimits p;
  p.set_grp_jobs(l.grp_jobs);
  p.set_grp_submit(l.grp_submit);
  p.set_grp_wall(l.grp_wall);
  p.set_max_jobs(l.max_jobs);
  p.set_max_submit(l.max_submit);
  p.set_max_wall(l.max_wall);
  p.set_max_jobs_pu(l.max_jobs_pu);
  p.set_max_jobs_pa(l.max_jobs_pa);
  p.set_max_submit_pu(l.max_submit_pu);
  p.set_max_submit_pa(l.max_submit_pa);
  put_tres(p.mutable_grp_tres(), l.grp_tres);
  put_tres(p.mutable_grp_tres_mins(), l.grp_tres_mins);
  put_tres(p.mutable_grp_tres_run_mins(), l.grp_tres_run_mins);
  put_tres(p.mutable_max_tres(), l.max_tres);
  put_tres(p.mutable_max_tres_per_node(), l.max_tres_per_node);
  put_tres(p.mutable_max_tres_mins(), l.max_tres_mins);
  put_tres(p.mutable_max_tres_pu(), l.max_tres_pu);
  put_tres(p.mutable_max_tres_pa(), l.max_tres_pa);
  put_tres(p.mutable_min_tres(), l.min_tres);
  put_tres(p.mutable_max_tres_run_mins_pu(), l.max_tres_run_mins_pu);
  put_tres(p.mutable_max_tres_run_mins_pa(), l.max_tres_run_mins_pa);
  return p;
}

AcctLimits limits_of(const pb::AcctLimits& p) {
  AcctLimits l;
  l.grp_jobs = p.grp_jobs();
  l.grp_submit = p.grp_submit();
  l.grp_wall = p.grp_wall();
  l.max_jobs = p.max_jobs();
  l.max_submit = p.max_submit();
  l.max_wall = p.max_wall();
  l.max_jobs_pu = p.max_jobs_pu();
  l.max_jobs_pa = p.max_jobs_pa();
  l.max_submit_pu = p.max_submit_pu();
  l.max_submit_pa = p.max_submit_pa();
  l.grp_tres = get_tres(p.grp_tres());
  l.grp_tres_mins = get_tres(p.grp_tres_mins());
  l.grp_tres_run_mins = get_tres(p.grp_tres_run_mins());
  l.max_tres = get_tres(p.max_tres());
  l.max_tres_per_node = get_tres(p.max_tres_per_node());
  l.max_tres_mins = get_tres(p.max_tres_mins());
  l.max_tres_pu = get_tres(p.max_tres_pu());
  l.max_tres_pa = get_tres(p.max_tres_pa());
  l.min_tres = get_tres(p.min_tres());
  l.max_tres_run_mins_pu = get_tres(p.max_tres_run_mins_pu());
  l.max_tres_run_mins_pa = get_tres(p.max_tres_run_mins_pa());
  return l;
}

pb::AcctClusterRec cluster_pb(const AcctCluster& c) {
  pb::AcctClusterRec p;
  p.set_name(c.name);
  p.set_control_host(c.control_host);
  p.set_control_port(c.control_port);
  p.set_rpc(c.rpc);
  p.set_id(c.id);
  return p;
}

pb::AcctAccountRec account_pb(const AcctAccount& a) {
  pb::AcctAccountRec p;
  p.set_name(a.name);
  p.set_description(a.description);
  p.set_organization(a.organization);
  for (const auto& c : a.coordinators) p.add_coordinators(c);
  return p;
}

pb::AcctUserRec user_pb(const AcctUser& u) {
  pb::AcctUserRec p;
  p.set_name(u.name);
  p.set_default_account(u.default_account);
  p.set_admin_level(static_cast<int32_t>(u.admin));
  return p;
}

pb::AcctAssocRec assoc_pb(const AcctAssoc& a) {
  pb::AcctAssocRec p;
  p.set_id(a.id);
  p.set_cluster(a.cluster);
  p.set_account(a.account);
  p.set_user(a.user);
  p.set_partition(a.partition);
  p.set_parent(a.parent);
  p.set_shares(a.shares);
  p.set_priority(a.priority);
  *p.mutable_limits() = limits_pb(a.limits);
  for (const auto& q : a.qos) p.add_qos(q);
  p.set_def_qos(a.def_qos);
  p.set_placed(a.placed);
  return p;
}

pb::AcctQosRec qos_pb(const AcctQos& q) {
  pb::AcctQosRec p;
  p.set_id(q.id);
  p.set_name(q.name);
  p.set_description(q.description);
  p.set_priority(q.priority);
  p.set_grace_time(q.grace_time);
  p.set_usage_factor(q.usage_factor);
  p.set_usage_threshold(q.usage_threshold);
  for (const auto& f : q.flags) p.add_flags(f);
  for (const auto& f : q.preempt) p.add_preempt(f);
  p.set_preempt_mode(q.preempt_mode);
  *p.mutable_limits() = limits_pb(q.limits);
  return p;
}

Status add_cluster(AcctModel& m, const pb::AcctClusterRec& p) {
  if (p.name().empty()) return invalid("accounting cluster without a name");
  if (p.id() > 0xfff) return invalid("accounting cluster " + p.name() + " has SLUID cluster id " + std::to_string(p.id()) + " (above 4095)");
  m.clusters[p.name()] = AcctCluster{p.name(), p.control_host(), p.control_port(), p.rpc(), p.id()};
  return Status::ok();
}

Status add_account(AcctModel& m, const pb::AcctAccountRec& p) {
  if (p.name().empty()) return invalid("accounting account without a name");
  m.accounts[p.name()] = AcctAccount{p.name(), p.description(), p.organization(),
                                     {p.coordinators().begin(), p.coordinators().end()}};
  return Status::ok();
}

Status add_user(AcctModel& m, const pb::AcctUserRec& p) {
  if (p.name().empty()) return invalid("accounting user without a name");
  int level = p.admin_level();
  if (level < 1 || level > 3) return invalid("accounting user " + p.name() + " has admin level " + std::to_string(level));
  m.users[p.name()] = AcctUser{p.name(), p.default_account(), static_cast<AdminLevel>(level)};
  return Status::ok();
}

Status add_assoc(AcctModel& m, const pb::AcctAssocRec& p) {
  if (p.id() == 0 || p.cluster().empty() || p.account().empty())
    return invalid("accounting association " + std::to_string(p.id()) + " lacks its cluster or account");
  AcctAssoc a;
  a.id = p.id();
  a.cluster = p.cluster();
  a.account = p.account();
  a.user = p.user();
  a.partition = p.partition();
  a.parent = p.parent();
  a.shares = p.shares();
  a.priority = p.priority();
  a.limits = limits_of(p.limits());
  a.qos.assign(p.qos().begin(), p.qos().end());
  a.def_qos = p.def_qos();
  a.placed = p.placed() ? p.placed() : p.id();
  m.assocs[a.id] = std::move(a);
  return Status::ok();
}

Status add_qos(AcctModel& m, const pb::AcctQosRec& p) {
  if (p.name().empty()) return invalid("accounting QOS without a name");
  AcctQos q;
  q.id = p.id();
  q.name = p.name();
  q.description = p.description();
  q.priority = p.priority();
  q.grace_time = p.grace_time();
  q.usage_factor = p.usage_factor();
  q.usage_threshold = p.usage_threshold();
  q.flags.assign(p.flags().begin(), p.flags().end());
  q.preempt.assign(p.preempt().begin(), p.preempt().end());
  q.preempt_mode = p.preempt_mode();
  q.limits = limits_of(p.limits());
  m.qos[q.name] = std::move(q);
  return Status::ok();
}

}  // namespace

pb::AcctModelRec to_pb(const AcctModel& m) {
  pb::AcctModelRec p;
  for (const auto& [k, c] : m.clusters) *p.add_clusters() = cluster_pb(c);
  for (const auto& [k, a] : m.accounts) *p.add_accounts() = account_pb(a);
  for (const auto& [k, u] : m.users) *p.add_users() = user_pb(u);
  for (const auto& [k, a] : m.assocs) *p.add_assocs() = assoc_pb(a);
  for (const auto& [k, q] : m.qos) *p.add_qos() = qos_pb(q);
  p.set_next_assoc_id(m.next_assoc_id);
  p.set_next_qos_id(m.next_qos_id);
  return p;
}

Result<AcctModel> from_pb(const pb::AcctModelRec& p) {
  AcctModel m;
  for (const auto& x : p.clusters())
    if (Status s = add_cluster(m, x); !s) return s;
  for (const auto& x : p.accounts())
    if (Status s = add_account(m, x); !s) return s;
  for (const auto& x : p.users())
    if (Status s = add_user(m, x); !s) return s;
  for (const auto& x : p.assocs())
    if (Status s = add_assoc(m, x); !s) return s;
  for (const auto& x : p.qos())
    if (Status s = add_qos(m, x); !s) return s;
  m.next_assoc_id = std::max<uint32_t>(p.next_assoc_id(), 1);
  m.next_qos_id = std::max<uint32_t>(p.next_qos_id(), 1);
  for (const auto& [id, a] : m.assocs) m.next_assoc_id = std::max(m.next_assoc_id, id + 1);
  for (const auto& [n, q] : m.qos) m.next_qos_id = std::max(m.next_qos_id, q.id + 1);
  return m;
}

AcctRows acct_rows(const AcctModel& m) {
  AcctRows rows;
  for (const auto& [k, c] : m.clusters) rows[{"cluster", k}] = cluster_pb(c).SerializeAsString();
  for (const auto& [k, a] : m.accounts) rows[{"account", k}] = account_pb(a).SerializeAsString();
  for (const auto& [k, u] : m.users) rows[{"user", k}] = user_pb(u).SerializeAsString();
  for (const auto& [k, a] : m.assocs) rows[{"assoc", std::to_string(k)}] = assoc_pb(a).SerializeAsString();
  for (const auto& [k, q] : m.qos) rows[{"qos", k}] = qos_pb(q).SerializeAsString();
  pb::AcctModelRec ids;
  ids.set_next_assoc_id(m.next_assoc_id);
  ids.set_next_qos_id(m.next_qos_id);
  rows[{"meta", "next_ids"}] = ids.SerializeAsString();
  return rows;
}

Result<AcctModel> acct_model_from_rows(const AcctRows& rows) {
  pb::AcctModelRec p;
  for (const auto& [key, bytes] : rows) {
    const auto& [kind, name] = key;
    bool ok = true;
    if (kind == "cluster") ok = p.add_clusters()->ParseFromString(bytes);
    else if (kind == "account") ok = p.add_accounts()->ParseFromString(bytes);
    else if (kind == "user") ok = p.add_users()->ParseFromString(bytes);
    else if (kind == "assoc") ok = p.add_assocs()->ParseFromString(bytes);
    else if (kind == "qos") ok = p.add_qos()->ParseFromString(bytes);
    else if (kind == "meta" && name == "next_ids") {
      pb::AcctModelRec ids;
      ok = ids.ParseFromString(bytes);
      p.set_next_assoc_id(ids.next_assoc_id());
      p.set_next_qos_id(ids.next_qos_id());
    }
    if (!ok) return invalid("the accounting store's " + kind + " row '" + name + "' is damaged");
  }
  return from_pb(p);
}

pb::AcctListedRec to_pb(const AcctListed& listed) {
  pb::AcctListedRec out;
  out.set_kind(listed.kind);
  *out.mutable_records() = to_pb(listed.records);
  for (uint32_t id : listed.assoc_order) out.add_assoc_order(id);
  out.set_with_assoc(listed.with_assoc);
  out.set_with_coord(listed.with_coord);
  for (const auto& [owner, coords] : listed.coords)
    for (const auto& c : coords) {
      auto* p = out.add_coords();
      p->set_owner(owner);
      p->set_name(c.name);
      p->set_direct(c.direct);
    }
  for (const auto& [id, f] : listed.facts) {
    auto* p = out.add_facts();
    p->set_id(id);
    p->set_lineage(f.lineage);
    p->set_is_default(f.is_default);
  }
  return out;
}

}  // namespace hq::net
