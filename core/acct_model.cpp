// The accounting model's lookups, defaults and value forms (see acct_model.hpp).
#include "core/acct_model.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "core/units.hpp"

namespace hq {
namespace {

constexpr std::array<std::string_view, 8> kStaticTres = {"cpu",     "mem",     "energy", "node",
                                                         "billing", "fs/disk", "vmem",   "pages"};

bool tres_less(const std::pair<std::string, int64_t>& a, const std::pair<std::string, int64_t>& b) {
  int ia = tres_id(a.first), ib = tres_id(b.first);
  return ia != ib ? ia < ib : a.first < b.first;
}

bool known_tres(std::string_view name) {
  if (tres_id(name) < 1000) return true;
  return name == "gres/gpu" || name.starts_with("gres/gpu:") || name.starts_with("license/");
}

}  // namespace

int tres_id(std::string_view name) {
  for (size_t i = 0; i < kStaticTres.size(); ++i)
    if (kStaticTres[i] == name) return static_cast<int>(i) + 1;
  if (name == "gres/gpu") return 1001;
  return 1002;
}

Result<TresList> parse_tres_list(std::string_view text) {
  TresList out;
  for (auto item : split(text, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) return invalid("no value given as TRES type/id for '" + std::string(item) + "'");
    std::string name = to_lower(trim(item.substr(0, eq)));
    std::string_view value = trim(item.substr(eq + 1));
    if (!known_tres(name)) return invalid("no TRES known by type " + name);
    int64_t count = 0;
    if (value == "-1") {
      count = kNoLimit;
    } else if (name == "mem") {
      auto mib = parse_size_mib(value);
      if (!mib) return invalid("invalid TRES count '" + std::string(value) + "' for mem");
      count = *mib;
    } else {
      auto n = parse_int(value, 0, INT64_MAX / 2);
      if (!n) return invalid("invalid TRES count '" + std::string(value) + "' for " + name);
      count = *n;
    }
    std::erase_if(out, [&](const auto& p) { return p.first == name; });
    out.emplace_back(name, count);
  }
  std::sort(out.begin(), out.end(), tres_less);
  return out;
}

TresList merge_tres(TresList base, const TresList& change) {
  for (const auto& item : change) {
    const std::string& name = item.first;
    int64_t count = item.second;
    std::erase_if(base, [&](const auto& p) { return p.first == name; });
    if (count != kNoLimit) base.emplace_back(name, count);
  }
  std::sort(base.begin(), base.end(), tres_less);
  return base;
}

std::string format_tres(const TresList& tres) {
  std::string out;
  for (const auto& [name, count] : tres) {
    if (!out.empty()) out += ',';
    out += name + "=" + (name == "mem" ? format_size_mib(count) : std::to_string(count));
  }
  return out;
}

std::string format_wall_minutes(int64_t minutes) {
  int64_t days = minutes / 1440, hours = minutes / 60 % 24, mins = minutes % 60;
  char buf[64];
  if (days > 0)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:00", static_cast<long long>(days),
                  static_cast<long long>(hours), static_cast<long long>(mins));
  else
    std::snprintf(buf, sizeof buf, "%02lld:%02lld:00", static_cast<long long>(hours), static_cast<long long>(mins));
  return buf;
}

Result<int64_t> parse_wall_minutes(std::string_view text) {
  text = trim(text);
  if (text == "-1") return kNoLimit;
  auto secs = parse_duration(text);
  if (!secs || *secs < 0) return invalid("Invalid time limit '" + std::string(text) + "'");
  return (*secs + 59) / 60;
}

std::string_view admin_level_name(AdminLevel level) {
  switch (level) {
    case AdminLevel::kOperator: return "Operator";
    case AdminLevel::kAdministrator: return "Administrator";
    default: return "None";
  }
}

std::optional<AdminLevel> parse_admin_level(std::string_view text) {
  std::string t = to_lower(trim(text));
  if (t.empty()) return std::nullopt;
  if (std::string_view("none").starts_with(t)) return AdminLevel::kNone;
  if (std::string_view("operator").starts_with(t)) return AdminLevel::kOperator;
  if (std::string_view("administrator").starts_with(t) || t == "admin") return AdminLevel::kAdministrator;
  return std::nullopt;
}

const AcctAssoc* AcctModel::account_assoc(std::string_view cluster, std::string_view account) const {
  for (const auto& [id, a] : assocs)
    if (a.user.empty() && a.cluster == cluster && a.account == account) return &a;
  return nullptr;
}

const AcctAssoc* AcctModel::user_assoc(std::string_view cluster, std::string_view account, std::string_view user,
                                       std::string_view partition) const {
  for (const auto& [id, a] : assocs)
    if (a.cluster == cluster && a.account == account && a.user == user && a.partition == partition) return &a;
  return nullptr;
}

std::vector<const AcctAssoc*> AcctModel::user_assocs(std::string_view cluster, std::string_view user) const {
  std::vector<const AcctAssoc*> out;
  for (const auto& [id, a] : assocs)
    if (a.cluster == cluster && a.user == user) out.push_back(&a);
  std::sort(out.begin(), out.end(), [](const AcctAssoc* x, const AcctAssoc* y) {
    return x->account != y->account ? x->account < y->account : x->partition < y->partition;
  });
  return out;
}

std::vector<std::string> AcctModel::effective_qos(const AcctAssoc& a) const {
  const AcctAssoc* at = &a;
  for (int depth = 0; at && depth < 64; ++depth) {
    if (!at->qos.empty()) return at->qos;
    at = parent_of(*at);
  }
  return {};
}

const AcctAssoc* AcctModel::parent_of(const AcctAssoc& a) const {
  if (!a.user.empty()) return account_assoc(a.cluster, a.account);
  return a.parent.empty() ? nullptr : account_assoc(a.cluster, a.parent);
}

AcctAssoc AcctModel::inherited(const AcctAssoc& a) const {
  AcctAssoc out = a;
  out.qos = effective_qos(a);
  auto inherit = [](int64_t& v, int64_t from) {
    if (v == kNoLimit) v = from;
  };
  auto inherit_tres = [](TresList& v, const TresList& from) {
    if (v.empty()) v = from;
  };
  const AcctAssoc* at = &a;
  for (int depth = 0; depth < 64 && (at = parent_of(*at)); ++depth) {
    inherit(out.limits.max_jobs, at->limits.max_jobs);
    inherit(out.limits.max_submit, at->limits.max_submit);
    inherit(out.limits.max_wall, at->limits.max_wall);
    inherit(out.priority, at->priority);
    inherit_tres(out.limits.max_tres, at->limits.max_tres);
    inherit_tres(out.limits.max_tres_per_node, at->limits.max_tres_per_node);
    inherit_tres(out.limits.max_tres_mins, at->limits.max_tres_mins);
    if (out.def_qos.empty()) out.def_qos = at->def_qos;
  }
  return out;
}

bool AcctModel::account_under(std::string_view cluster, std::string_view account, std::string_view ancestor) const {
  std::string at(account);
  for (int depth = 0; depth < 64 && !at.empty(); ++depth) {
    if (at == ancestor) return true;
    const AcctAssoc* a = account_assoc(cluster, at);
    if (!a) return false;
    at = a->parent;
  }
  return false;
}

AcctAssoc& AcctModel::add_assoc(AcctAssoc a) {
  a.id = next_assoc_id++;
  a.placed = a.id;
  return assocs[a.id] = std::move(a);
}

AcctQos& AcctModel::add_qos(AcctQos q) {
  q.id = next_qos_id++;
  std::string name = q.name;
  return qos[name] = std::move(q);
}

AcctModel default_acct_model() {
  AcctModel m;
  m.accounts["root"] = AcctAccount{"root", "default root account", "root", {}};
  m.users["root"] = AcctUser{"root", "root", AdminLevel::kAdministrator};
  AcctQos normal;
  normal.name = "normal";
  normal.description = "Normal QOS default";
  m.add_qos(normal);
  return m;
}

namespace {
// The lowest SLUID cluster id no cluster has (Slurm's: 0 and 1 reserved, 0xfff too).
uint32_t free_cluster_id(const AcctModel& m) {
  std::set<uint32_t> taken;
  for (const auto& [name, c] : m.clusters) taken.insert(c.id);
  uint32_t id = 2;
  while (taken.count(id) && id < 0xffe) ++id;
  return id;
}
}  // namespace

bool register_cluster(AcctModel& m, const std::string& cluster, const std::string& host, uint32_t port) {
  auto& c = m.clusters[cluster];
  bool fresh = c.name.empty();
  c.name = cluster;
  if (!host.empty()) c.control_host = host;
  if (port) c.control_port = port;
  if (c.id == 0) c.id = free_cluster_id(m);
  if (!m.account_assoc(cluster, "root")) {
    AcctAssoc root;
    root.cluster = cluster;
    root.account = "root";
    root.qos = {"normal"};
    m.add_assoc(root);
  }
  if (!m.user_assoc(cluster, "root", "root", "")) {
    AcctAssoc a;
    a.cluster = cluster;
    a.account = "root";
    a.user = "root";
    m.add_assoc(a);
  }
  return fresh;
}

namespace {

void lft_walk(const AcctModel& m, const AcctAssoc& at, std::vector<uint32_t>& out, int depth) {
  out.push_back(at.id);
  if (!at.user.empty() || depth > 64) return;
  std::vector<const AcctAssoc*> kids;
  for (const auto& [id, a] : m.assocs)
    if (a.cluster == at.cluster && a.id != at.id &&
        ((a.user.empty() && a.parent == at.account) || (!a.user.empty() && a.account == at.account)))
      kids.push_back(&a);
  std::sort(kids.begin(), kids.end(), [](const AcctAssoc* x, const AcctAssoc* y) { return x->placed > y->placed; });
  for (const auto* k : kids) lft_walk(m, *k, out, depth + 1);
}

}  // namespace

std::vector<uint32_t> lft_order(const AcctModel& m) {
  std::vector<uint32_t> out;
  for (const auto& [name, c] : m.clusters)
    if (const AcctAssoc* root = m.account_assoc(name, "root")) lft_walk(m, *root, out, 0);
  return out;
}

}  // namespace hq
