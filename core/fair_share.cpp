#include "core/fair_share.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace hq {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string row_key(std::string_view account, std::string_view user, std::string_view partition) {
  std::string key(account);
  key.push_back('\0');
  key.append(user).push_back('\0');
  key.append(partition);
  return key;
}

bool same_fs(double a, double b) {
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

// Shares as a number: "parent" counts as one share here.
double shares_of(const ShareRow& r) { return r.raw_shares == kSharesParent ? 1.0 : static_cast<double>(std::max<int64_t>(0, r.raw_shares)); }

}  // namespace

double decayed_seconds(const UsageRecord& r, Time now, Duration half_life) {
  Time end = r.end > 0 ? std::min(r.end, now) : (r.cap > 0 ? std::min(r.cap, now) : now);
  if (r.start <= 0 || end <= r.start) return 0;
  if (half_life <= 0) return static_cast<double>(end - r.start);
  // ∫ 2^-((now - t) / H) dt over [start, end] = H / ln2 * (2^-((now-end)/H) - 2^-((now-start)/H))
  double h = static_cast<double>(half_life);
  double to_end = std::exp2(-static_cast<double>(now - end) / h), to_start = std::exp2(-static_cast<double>(now - r.start) / h);
  return h / std::log(2.0) * (to_end - to_start);
}

namespace {
// Slurm applies a QOS's UsageFactor only when it is not negative.
double factor_of(const UsageRecord& r) { return r.factor >= 0 ? r.factor : 1.0; }
}  // namespace

double decayed_usage(const UsageRecord& r, Time now, Duration half_life) {
  if (r.billing <= 0) return 0;
  return static_cast<double>(r.billing) * factor_of(r) * decayed_seconds(r, now, half_life);
}

void UsedSum::add(const UsageRecord& r, double seconds) {
  if (seconds <= 0) return;
  double factor = factor_of(r);
  for (int k = 0; k < kTresKinds; ++k) {
    int64_t count = k == kTresBilling ? r.billing : r.tres[k];
    if (count > 0) tres[k] += static_cast<double>(count) * factor * seconds;
  }
  wall += factor * seconds;
}

void UsedSum::add(const UsedSum& other) {
  for (int k = 0; k < kTresKinds; ++k) tres[k] += other.tres[k];
  wall += other.wall;
}

FairShare::FairShare(const AcctModel& model, const std::string& cluster, const std::vector<UsageRecord>& records, Time now,
                     const FairShareConfig& cfg) {
  // The tree as sshare lists it: under each account its users (by name), then its sub-accounts (by name).
  std::map<std::string, std::vector<const AcctAssoc*>> users_of, accounts_of;
  const AcctAssoc* root = nullptr;
  for (const auto& [id, a] : model.assocs) {
    if (a.cluster != cluster) continue;
    if (!a.user.empty()) users_of[a.account].push_back(&a);
    else if (a.parent.empty()) root = &a;
    else accounts_of[a.parent].push_back(&a);
  }
  if (!root) return;
  auto by_name = [](const AcctAssoc* x, const AcctAssoc* y) {
    return std::tie(x->user, x->account, x->partition) < std::tie(y->user, y->account, y->partition);
  };
  std::vector<std::vector<int32_t>> children;
  auto add = [&](auto&& self, const AcctAssoc& a, int depth, int32_t parent) -> void {
    auto at = static_cast<int32_t>(rows_.size());
    ShareRow row;
    row.assoc = a.id, row.depth = depth, row.account = a.account, row.user = a.user, row.partition = a.partition;
    row.raw_shares = a.shares;
    row.parent = a.user.empty() ? a.parent : a.account;
    row.grp_tres_mins = format_tres(a.limits.grp_tres_mins);
    rows_.push_back(row);
    parent_.push_back(parent);
    children.emplace_back();
    if (parent >= 0) children[static_cast<size_t>(parent)].push_back(at);
    if (!a.user.empty()) {
      user_rows_[row_key(a.account, a.user, a.partition)] = at;
      return;
    }
    auto users = users_of[a.account];
    std::sort(users.begin(), users.end(), by_name);
    for (const AcctAssoc* u : users) self(self, *u, depth + 1, at);
    auto subs = accounts_of[a.account];
    std::sort(subs.begin(), subs.end(), by_name);
    for (const AcctAssoc* s : subs)
      if (depth < 64) self(self, *s, depth + 1, at);
  };
  add(add, *root, 0, -1);
  for (const auto& [name, u] : model.users) default_account_[name] = u.default_account;
  for (const UsageRecord& given : records) {
    if (cfg.reset_at > 0 && given.end != 0 && given.end <= cfg.reset_at) continue;  // ended before the reset
    UsageRecord r = given;
    if (r.start < cfg.reset_at) r.start = cfg.reset_at;  // the part of its run since the reset
    UsedSum used;
    used.add(r, decayed_seconds(r, now, cfg.half_life));
    if (!r.qos.empty()) {
      QosUsage& q = qos_usage_[{r.qos, r.partition}];
      q.decayed.add(used);
      q.flat.add(r, decayed_seconds(r, now, 0));
    }
    int32_t row = user_row(r.user, r.account, r.partition);
    if (row < 0) continue;  // its association is gone: its usage with it
    for (int32_t at = row; at >= 0; at = parent_[static_cast<size_t>(at)]) rows_[static_cast<size_t>(at)].used.add(used);
  }
  for (ShareRow& r : rows_) r.raw_usage = r.used.billing();
  double total = rows_.front().raw_usage;
  for (ShareRow& r : rows_) r.norm_usage = total > 0 ? r.raw_usage / total : 0;
  rows_.front().effective_usage = 1.0;  // the whole tree's: all of it (sshare prints 1.000000)
  if (cfg.classic) classic(children, cfg.dampening);
  else fair_tree(children);
}

void FairShare::fair_tree(const std::vector<std::vector<int32_t>>& children) {
  // Level shares and usage among each set of siblings, then LevelFS = S / U.
  for (const auto& kids : children) {
    double shares = 0, usage = 0;
    for (int32_t k : kids) {
      shares += shares_of(rows_[static_cast<size_t>(k)]);
      usage += rows_[static_cast<size_t>(k)].raw_usage;
    }
    for (int32_t k : kids) {
      ShareRow& r = rows_[static_cast<size_t>(k)];
      r.norm_shares = shares > 0 ? shares_of(r) / shares : 0;
      r.effective_usage = usage > 0 ? r.raw_usage / usage : 0;
      r.level_fs = r.norm_shares == 0 ? 0 : r.effective_usage == 0 ? kInf : r.norm_shares / r.effective_usage;
    }
  }
  // Depth first in LevelFS order, users ranked from the top. A user tied with the sibling
  // before it shares that one's rank (the count still drops); an account tied with the one
  // before it passes the tie on to its first child, and tied sibling accounts have their
  // children merged into one set (Slurm's fair_tree.c).
  auto users = static_cast<double>(user_rows_.size());
  double rank = users, tied_rank = users;
  auto walk = [&](auto&& self, std::vector<int32_t> set, bool tied_in, int depth) -> void {
    std::stable_sort(set.begin(), set.end(), [&](int32_t a, int32_t b) {
      return rows_[static_cast<size_t>(a)].level_fs > rows_[static_cast<size_t>(b)].level_fs;
    });
    for (size_t i = 0; i < set.size();) {
      ShareRow& r = rows_[static_cast<size_t>(set[i])];
      bool tied = i == 0 ? tied_in : same_fs(rows_[static_cast<size_t>(set[i - 1])].level_fs, r.level_fs);
      if (!r.user.empty()) {
        if (!tied) tied_rank = rank;
        r.fair_share = users > 0 ? tied_rank / users : 0;
        rank -= 1;
        ++i;
        continue;
      }
      std::vector<int32_t> merged;
      size_t j = i;
      for (; j < set.size() && rows_[static_cast<size_t>(set[j])].user.empty() &&
             same_fs(rows_[static_cast<size_t>(set[j])].level_fs, r.level_fs);
           ++j) {
        const auto& kids = children[static_cast<size_t>(set[j])];
        merged.insert(merged.end(), kids.begin(), kids.end());
      }
      if (depth < 64) self(self, std::move(merged), tied, depth + 1);
      i = j;
    }
  };
  walk(walk, children.front(), false, 0);
}

void FairShare::classic(const std::vector<std::vector<int32_t>>& children, double dampening) {
  rows_.front().norm_shares = 1.0;
  for (size_t at = 0; at < rows_.size(); ++at) {  // parents come before their children
    const auto& kids = children[at];
    double shares = 0;
    for (int32_t k : kids) shares += shares_of(rows_[static_cast<size_t>(k)]);
    for (int32_t k : kids) {
      ShareRow& r = rows_[static_cast<size_t>(k)];
      double level = shares > 0 ? shares_of(r) / shares : 0;
      r.norm_shares = rows_[at].norm_shares * level;
      // The tier below the root: its own usage; deeper: pulled toward the parent's.
      r.effective_usage = at == 0 ? r.norm_usage : r.norm_usage + (rows_[at].effective_usage - r.norm_usage) * level;
      double d = dampening > 0 ? dampening : 1.0;
      r.fair_share = r.norm_shares > 0 ? std::exp2(-r.effective_usage / r.norm_shares / d) : 0;
      r.level_fs = 0;
    }
  }
}

int32_t FairShare::user_row(const std::string& user, const std::string& given, const std::string& partition) const {
  const std::string* account = &given;
  if (given.empty()) {
    auto d = default_account_.find(user);
    if (d == default_account_.end()) return -1;
    account = &d->second;
  }
  return user_row_in(user, *account, partition);
}

int32_t FairShare::user_row_in(const std::string& user, const std::string& account, const std::string& partition) const {
  auto it = partition.empty() ? user_rows_.end() : user_rows_.find(row_key(account, user, partition));
  if (it == user_rows_.end()) it = user_rows_.find(row_key(account, user, ""));
  return it == user_rows_.end() ? -1 : it->second;
}

double FairShare::factor(const std::string& user, const std::string& account, const std::string& partition) const {
  int32_t at = user_row(user, account, partition);
  return at < 0 ? 0 : rows_[static_cast<size_t>(at)].fair_share;
}

std::vector<int32_t> FairShare::path(const std::string& user, const std::string& account, const std::string& partition) const {
  std::vector<int32_t> out;
  for (int32_t at = user_row(user, account, partition); at >= 0 && out.size() < 66; at = parent_[static_cast<size_t>(at)])
    out.push_back(at);
  return out;
}

}  // namespace hq
