#include "cmd/client/acctmgr_json.hpp"

#include <algorithm>
#include <map>

#include "cmd/client/data_parser_v40.hpp"
#include "core/acct_model.hpp"
#include "core/units.hpp"
#include "net/convert_acct.hpp"

namespace hq::cmd {
namespace {

struct Listing {
  AcctModel m;
  const pb::AcctListedRec& rec;
  std::map<std::string, std::vector<const pb::AcctListedRec::Coord*>> coords;  // by owner
  std::map<uint32_t, const pb::AcctListedRec::AssocFacts*> facts;              // by association
};

void assoc_short(JsonStream& j, const AcctAssoc& a, const std::string& key = {}) {
  j.object(key).str("account", a.account).str("cluster", a.cluster).str("partition", a.partition);
  j.str("user", a.user).integer("id", a.id).end();
}

// The associations listed that `pick` takes, as ASSOC_SHORT items, by id (as slurmdbd
// gives a user's or an account's).
template <typename Pick>
void assoc_shorts(JsonStream& j, const Listing& l, bool with, Pick pick) {
  j.array("associations");
  if (with)
    for (const auto& [id, a] : l.m.assocs)
      if (pick(a)) assoc_short(j, a);
  j.end();
}

void coordinators(JsonStream& j, const Listing& l, const std::string& owner) {
  j.array("coordinators");
  if (auto it = l.coords.find(owner); it != l.coords.end())
    for (const auto* c : it->second) j.object().str("name", c->name()).boolean("direct", c->direct()).end();
  j.end();
}

void assoc(JsonStream& j, const Listing& l, const AcctAssoc& a) {
  const AcctLimits& x = a.limits;
  j.object().array("accounting").end();
  j.str("account", a.account).str("cluster", a.cluster).str("comment", "");
  j.object("default").str("qos", a.def_qos).end();
  j.array("flags").end();
  j.object("max");
  j.object("jobs").object("per");
  no_val(j, "count", x.grp_jobs), no_val(j, "accruing", kNoLimit), no_val(j, "submitted", x.grp_submit);
  no_val(j, "wall_clock", x.max_wall);
  j.end();
  no_val(j, "active", x.max_jobs), no_val(j, "accruing", kNoLimit), no_val(j, "total", x.max_submit);
  j.end();
  j.object("tres");
  tres_array(j, "total", x.grp_tres);
  j.object("group");
  tres_array(j, "minutes", x.grp_tres_mins);
  tres_array(j, "active", x.grp_tres_run_mins);
  j.end().object("minutes");
  tres_array(j, "total", {});
  j.object("per");
  tres_array(j, "job", x.max_tres_mins);
  j.end().end().object("per");
  tres_array(j, "job", x.max_tres);
  tres_array(j, "node", x.max_tres_per_node);
  j.end().end();
  j.object("per").object("account");
  no_val(j, "wall_clock", x.grp_wall);
  j.end().end().end();  // account, per, max
  assoc_short(j, a, "id");
  auto f = l.facts.find(a.id);
  j.boolean("is_default", f != l.facts.end() && f->second->is_default());
  j.str("lineage", f != l.facts.end() ? f->second->lineage() : "");
  j.object("min");
  no_val(j, "priority_threshold", kNoLimit);
  j.end();
  j.str("parent_account", a.user.empty() ? a.parent : "").str("partition", a.partition);
  no_val(j, "priority", a.priority);
  j.array("qos");
  for (const auto& q : a.qos) j.item(q);
  j.end();
  j.integer("shares_raw", a.shares == kSharesParent ? 2147483647 : a.shares).str("user", a.user).end();
}

void users(JsonStream& j, const Listing& l) {
  j.array("users");
  for (const auto& [name, u] : l.m.users) {
    j.object().array("administrator_level").item(std::string(admin_level_name(u.admin))).end();
    assoc_shorts(j, l, l.rec.with_assoc(), [&](const AcctAssoc& a) { return a.user == name; });
    coordinators(j, l, name);
    j.object("default").str("account", u.default_account).str("wckey", "").end();
    j.array("flags").item("NONE").end();
    j.str("name", name).str("old_name", "").array("wckeys").end().end();
  }
  j.end();
}

void accounts(JsonStream& j, const Listing& l) {
  j.array("accounts");
  for (const auto& [name, a] : l.m.accounts) {
    j.object();
    assoc_shorts(j, l, l.rec.with_assoc(), [&](const AcctAssoc& x) { return x.account == name; });
    coordinators(j, l, name);
    j.str("description", a.description).str("name", name).str("organization", a.organization);
    j.array("flags").end().end();
  }
  j.end();
}

void associations(JsonStream& j, const Listing& l) {
  j.array("associations");
  for (uint32_t id : l.rec.assoc_order())
    if (auto a = l.m.assocs.find(id); a != l.m.assocs.end()) assoc(j, l, a->second);
  j.end();
}

// sacctmgr's flag names as data_parser writes them, in its order.
void qos_flags(JsonStream& j, const std::vector<std::string>& flags) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"PartitionMinNodes", "PARTITION_MINIMUM_NODE"}, {"PartitionMaxNodes", "PARTITION_MAXIMUM_NODE"},
      {"PartitionTimeLimit", "PARTITION_TIME_LIMIT"},  {"EnforceUsageThreshold", "ENFORCE_USAGE_THRESHOLD"},
      {"NoReserve", "NO_RESERVE"},                     {"RequiresReservation", "REQUIRED_RESERVATION"},
      {"DenyOnLimit", "DENY_LIMIT"},                   {"OverPartQOS", "OVERRIDE_PARTITION_QOS"},
      {"NoDecay", "NO_DECAY"},                         {"UsageFactorSafe", "USAGE_FACTOR_SAFE"},
      {"Relative", "RELATIVE"}};
  j.array("flags");
  for (const auto& [ours, theirs] : kNames)
    if (std::any_of(flags.begin(), flags.end(), [&](const std::string& f) { return iequals(f, ours); })) j.item(theirs);
  j.end();
}

void preempt_mode(JsonStream& j, const std::string& mode) {
  j.array("mode");
  bool any = false;
  for (const char* m : {"suspend", "requeue", "cancel", "gang"})
    if (to_lower(mode).find(m) != std::string::npos) {
      std::string upper(m);
      for (char& c : upper) c = static_cast<char>(c - 'a' + 'A');
      j.item(upper);
      any = true;
    }
  if (!any) j.item("DISABLED");
  j.end();
}

void qos(JsonStream& j, const AcctQos& q) {
  const AcctLimits& x = q.limits;
  j.object().str("description", q.description);
  qos_flags(j, q.flags);
  j.integer("id", q.id);
  j.object("limits").integer("grace_time", q.grace_time).object("max");
  j.object("active_jobs");
  no_val(j, "accruing", kNoLimit), no_val(j, "count", x.grp_jobs);
  j.end().object("tres");
  tres_array(j, "total", x.grp_tres);
  j.object("minutes").object("per");
  tres_array(j, "qos", x.grp_tres_run_mins);
  tres_array(j, "job", x.max_tres_mins);
  tres_array(j, "account", x.max_tres_run_mins_pa);
  tres_array(j, "user", x.max_tres_run_mins_pu);
  j.end().end().object("per");
  tres_array(j, "account", x.max_tres_pa);
  tres_array(j, "job", x.max_tres);
  tres_array(j, "node", x.max_tres_per_node);
  tres_array(j, "user", x.max_tres_pu);
  j.end().end();  // per, tres
  j.object("wall_clock").object("per");
  no_val(j, "qos", x.grp_wall), no_val(j, "job", x.max_wall);
  j.end().end().object("jobs").object("active_jobs").object("per");
  no_val(j, "account", x.max_jobs_pa), no_val(j, "user", x.max_jobs_pu);
  j.end().end().object("per");
  no_val(j, "account", x.max_submit_pa), no_val(j, "user", x.max_submit_pu);
  j.end().end().object("accruing").object("per");
  no_val(j, "account", kNoLimit), no_val(j, "user", kNoLimit);
  j.end().end().end();  // per, accruing, max
  no_val_real(j, "factor", 0, false);
  j.object("min");
  no_val(j, "priority_threshold", kNoLimit);
  j.object("tres").object("per");
  tres_array(j, "job", x.min_tres);
  j.end().end().end().end();  // per, tres, min, limits
  j.str("name", q.name).object("preempt").array("list");
  for (const auto& p : q.preempt) j.item(p);
  j.end();
  preempt_mode(j, q.preempt_mode);
  no_val(j, "exempt_time", kNoLimit);
  j.end();
  no_val(j, "priority", q.priority);
  no_val_real(j, "usage_factor", q.usage_factor, q.usage_factor >= 0);
  no_val_real(j, "usage_threshold", q.usage_threshold, q.usage_threshold >= 0);
  j.end();
}

void qos_list(JsonStream& j, const Listing& l) {
  std::vector<const AcctQos*> rows;
  for (const auto& [name, q] : l.m.qos) rows.push_back(&q);
  std::sort(rows.begin(), rows.end(), [](const AcctQos* a, const AcctQos* b) { return a->id < b->id; });
  j.array("qos");
  for (const auto* q : rows) qos(j, *q);
  j.end();
}

// The cluster TRES in Slurm's order, with this cluster's counts where the controller gave them.
TresList cluster_tres(const pb::AcctListedRec& rec, bool own) {
  auto count = [&](int i) { return own && i < rec.tres_size() ? rec.tres(i) : 0; };
  TresList out = {{"cpu", count(0)},     {"mem", count(1)},     {"energy", 0}, {"node", count(2)},
                  {"billing", count(3)}, {"fs/disk", 0},        {"vmem", 0},   {"pages", 0}};
  if (count(4) > 0) out.emplace_back("gres/gpu", count(4));
  return out;
}

void clusters(JsonStream& j, const Listing& l) {
  j.array("clusters");
  for (const auto& [name, c] : l.m.clusters) {
    bool own = name == l.rec.cluster();
    j.object().object("controller").str("host", c.control_host).integer("port", c.control_port).end();
    j.array("flags").end().str("name", name).str("nodes", own ? l.rec.nodes() : "").str("select_plugin", "cons_tres");
    j.object("associations");
    const AcctAssoc* root = nullptr;
    for (const auto& [id, a] : l.m.assocs)
      if (a.cluster == name && a.account == "root" && a.user.empty()) root = &a;
    if (root) assoc_short(j, *root, "root");
    j.end().integer("rpc_version", 10240);  // 23.11's protocol, as the layout is
    tres_array(j, "tres", cluster_tres(l.rec, own));
    j.end();
  }
  j.end();
}

// The TRES kinds (counts 0, as sacctmgr lists them); gres/gpu where the cluster has GPUs.
void tres_kinds(JsonStream& j, const pb::AcctListedRec& rec) {
  TresList kinds = cluster_tres(rec, false);
  if (rec.tres_size() > 4 && rec.tres(4) > 0) kinds.emplace_back("gres/gpu", 0);
  tres_array(j, "TRES", kinds);
}

}  // namespace

Result<std::string> acctmgr_json(const pb::AcctListedRec& listed, const MetaV40& meta) {
  auto model = net::from_pb(listed.records());
  if (!model) return model.status();
  Listing l{std::move(model).value(), listed, {}, {}};
  for (const auto& c : listed.coords()) l.coords[c.owner()].push_back(&c);
  for (const auto& f : listed.facts()) l.facts[f.id()] = &f;
  JsonStream j;
  j.object();
  const std::string& kind = listed.kind();
  if (kind == "users") users(j, l);
  else if (kind == "accounts") accounts(j, l);
  else if (kind == "associations") associations(j, l);
  else if (kind == "qos") qos_list(j, l);
  else if (kind == "clusters") clusters(j, l);
  else tres_kinds(j, listed);
  finish_envelope_v40(j, meta);
  return j.text();
}

}  // namespace hq::cmd
