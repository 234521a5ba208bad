// sreport on the controller: the command line parsed as the caller's (its time and UTC
// offset), then what the report needs besides the job records: the cluster's size (its
// nodes now), the nodes' spans out of service open now, the association tree of this
// cluster and the users' proper names; the store's thread adds the records and the stored
// spans of the window and works the report out (core/sreport). Event loop only.
#include <set>

#include "cmd/controller/controller.hpp"
#include "cmd/users.hpp"
#include "core/acct_model.hpp"

namespace hq::cmd {
namespace {

SreportTres node_tres(const Node& n) {
  SreportTres t{{"cpu", n.cpus}, {"mem", n.mem_mib}, {"energy", 0}, {"node", 1}, {"billing", n.cpus},
                {"fs/disk", 0},  {"vmem", 0},        {"pages", 0}};
  t["gres/gpu"] = static_cast<int64_t>(n.gpus.size());
  return t;
}

// hq keeps no history of its size: the nodes it has now, over the whole window.
void add_nodes(const ClusterState& state, SreportData& d) {
  CapacitySpan all;
  for (const auto& [name, n] : state.nodes) {
    for (const auto& [k, v] : node_tres(n)) all.tres[k] += v;
  }
  if (!state.nodes.empty()) d.capacity.push_back(std::move(all));
}

void add_assocs(const AcctModel& m, const std::string& cluster, SreportData& d) {
  std::set<std::string> users;
  for (uint32_t id : lft_order(m)) {
    const AcctAssoc& a = m.assocs.at(id);
    if (a.cluster != cluster || (!a.user.empty() && !a.partition.empty())) continue;
    d.assocs.push_back({a.id, a.account, a.user, a.parent});
    if (!a.user.empty()) users.insert(a.user);
  }
  for (const std::string& u : users)
    if (auto pw = passwd_by_name(u)) d.proper_names[u] = pw->gecos;
}

}  // namespace

void Controller::report(const pb::ReportRequest& req, std::function<void(Result<pb::ReportReply>)> reply) {
  pb::ReportReply out;
  out.set_enabled(acct_ != nullptr && acct_->enabled());
  if (!out.enabled()) return reply(std::move(out));
  SreportParse p = parse_sreport({req.words().begin(), req.words().end()}, req.now(), req.utc_offset());
  if (!p.cmd) {
    out.set_out(p.diag.out), out.set_err(p.diag.err), out.set_rc(p.diag.rc);
    return reply(std::move(out));
  }
  SreportData data;
  data.cluster = config_.name;
  add_nodes(state_, data);
  add_assocs(acct_->model(), config_.name, data);
  acct_->report(*p.cmd, std::move(data), open_node_spans(state_), req.now(), [diag = p.diag, out, reply](Result<SreportOutput> r) mutable {
    if (!r) return reply(r.status());
    out.set_out(diag.out + r->out), out.set_err(diag.err + r->err), out.set_rc(std::max(diag.rc, r->rc));
    reply(std::move(out));
  });
}

}  // namespace hq::cmd
