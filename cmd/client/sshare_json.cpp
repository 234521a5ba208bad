#include "cmd/client/sshare_json.hpp"

#include <utility>

namespace hq::cmd {
namespace {

constexpr double kNoVal = 4294967294.0;  // Slurm's NO_VAL, where the root row has no value

// The cluster's TRES in Slurm's order, each with the kind hq counts (-1: none).
std::vector<std::pair<std::string, int>> tres_kinds(bool gpus) {
  std::vector<std::pair<std::string, int>> out = {{"cpu", kTresCpu},  {"mem", kTresMem},     {"energy", -1},
                                                  {"node", kTresNode}, {"billing", kTresBilling}, {"fs/disk", -1},
                                                  {"vmem", -1},        {"pages", -1}};
  if (gpus) out.emplace_back("gres/gpu", kTresGpu);
  return out;
}

void share(JsonStream& j, const ShareRow& r, const std::string& cluster, bool gpus) {
  bool root = r.parent.empty() && r.user.empty();  // (-A puts its accounts at depth 0)
  j.object().integer("id", r.assoc).str("cluster", cluster).str("name", r.user.empty() ? r.account : r.user);
  j.str("parent", r.parent).str("partition", r.partition);
  no_val_real(j, "shares_normalized", root ? 1.0 / kNoVal : r.norm_shares, true);
  if (root) j.object("shares").boolean("set", false).boolean("infinite", false).integer("number", 0).end();
  else no_val(j, "shares", r.raw_shares == kSharesParent ? 2147483647 : r.raw_shares);
  auto kinds = tres_kinds(gpus);
  TresList limits;
  if (auto parsed = parse_tres_list(r.grp_tres_mins)) limits = std::move(parsed).value();
  j.object("tres").array("run_seconds");
  for (const auto& [name, k] : kinds) {
    j.object().str("name", name);
    no_val(j, "value", k < 0 ? 0 : r.run_seconds[k]);
    j.end();
  }
  j.end().array("group_minutes");
  for (const auto& [name, k] : kinds) {
    int64_t limit = kNoLimit;
    for (const auto& [n, v] : limits)
      if (n == name) limit = v;
    j.object().str("name", name);
    no_val(j, "value", limit);
    j.end();
  }
  j.end().array("usage");
  for (const auto& [name, k] : kinds) j.object().str("name", name).real("value", k < 0 ? 0.0 : r.used.tres[k]).end();
  j.end().end();
  j.real("effective_usage", r.effective_usage);
  no_val_real(j, "usage_normalized", root ? 0.0 : r.norm_usage, !root, false);
  j.integer("usage", static_cast<int64_t>(r.raw_usage));
  j.object("fairshare").real("factor", r.user.empty() ? 0.0 : r.fair_share).real("level", root ? kNoVal : r.level_fs).end();
  j.array("type").item(r.user.empty() ? "ASSOCIATION" : "USER").end();
  j.end();
}

}  // namespace

std::string sshare_json(const std::vector<ShareRow>& rows, const std::string& cluster, bool gpus, const MetaV40& meta) {
  JsonStream j;
  j.object().object("shares").array("shares");
  for (const ShareRow& r : rows) share(j, r, cluster, gpus);
  j.end().integer("total_shares", 0).end();
  finish_envelope_v40(j, meta);
  return j.text();
}

}  // namespace hq::cmd
