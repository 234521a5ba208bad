// The accounting model, as Slurm's database keeps it: clusters, an account tree, users,
// associations (cluster, account, user, partition) with shares and limits, coordinators,
// QOS, and TRES limits with Slurm's fixed ids. The store persists it; the controller keeps a
// copy for enforcement; sacctmgr (core/acctmgr) changes and lists it. Also Slurm's value
// forms: TRES strings ("cpu=4,mem=8G,gres/gpu=2"), wall limits in minutes ("[D-]HH:MM:SS"),
// admin levels. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.hpp"

namespace hq {

constexpr int64_t kNoLimit = -1;

// TRES counts by name in Slurm's order (cpu, mem, energy, node, billing, fs/disk, vmem,
// pages, then the others by name); mem in MiB.
using TresList = std::vector<std::pair<std::string, int64_t>>;

// "cpu=4,mem=8G,gres/gpu=2": names as Slurm knows them (cpu, mem, energy, node, billing,
// fs/disk, vmem, pages, gres/NAME[:TYPE], license/NAME), counts >= 0 or -1 ("remove it").
// Errors in sacctmgr's words.
Result<TresList> parse_tres_list(std::string_view text);
// Merges `change` into `base`: -1 removes a TRES, others replace or add. Sorted.
TresList merge_tres(TresList base, const TresList& change);
// Slurm's print form: mem with a unit ("8G", "512M"), the rest as numbers.
std::string format_tres(const TresList& tres);
// Slurm's static TRES ids (1 cpu .. 8 pages); 1001 on for the others, by name.
int tres_id(std::string_view name);

// Minutes as sacctmgr prints a wall limit: "[D-]HH:MM:SS".
std::string format_wall_minutes(int64_t minutes);
// A wall limit as sacctmgr takes it (Slurm's time forms; "-1" clears): minutes.
Result<int64_t> parse_wall_minutes(std::string_view text);

// The limits an association or a QOS can carry (kNoLimit / empty: none). Associations use
// the job and group ones; QOS also the per-user and per-account ones.
struct AcctLimits {
  int64_t grp_jobs = kNoLimit, grp_submit = kNoLimit, grp_wall = kNoLimit;
  int64_t max_jobs = kNoLimit, max_submit = kNoLimit, max_wall = kNoLimit;  // wall in minutes
  int64_t max_jobs_pu = kNoLimit, max_jobs_pa = kNoLimit, max_submit_pu = kNoLimit, max_submit_pa = kNoLimit;
  TresList grp_tres, grp_tres_mins, grp_tres_run_mins, max_tres, max_tres_per_node, max_tres_mins;
  TresList max_tres_pu, max_tres_pa, min_tres, max_tres_run_mins_pu, max_tres_run_mins_pa;
  bool operator==(const AcctLimits&) const = default;
};

enum class AdminLevel { kNone = 1, kOperator = 2, kAdministrator = 3 };
std::string_view admin_level_name(AdminLevel level);  // "None", "Operator", "Administrator"
std::optional<AdminLevel> parse_admin_level(std::string_view text);

struct AcctCluster {
  std::string name, control_host;
  uint32_t control_port = 0, rpc = 0;
  uint32_t id = 0;  // the SLUIDs' cluster bits (core/sluid), 2..4094, given at registration; 0 none yet
  bool operator==(const AcctCluster&) const = default;
};

struct AcctAccount {
  std::string name, description, organization;
  std::vector<std::string> coordinators;  // user names
  bool operator==(const AcctAccount&) const = default;
};

struct AcctUser {
  std::string name, default_account;
  AdminLevel admin = AdminLevel::kNone;
  bool operator==(const AcctUser&) const = default;
};

// An association: an account's own (user empty, `parent` its parent account; root's parent
// is empty) or a user's in an account (and maybe a partition).
struct AcctAssoc {
  uint32_t id = 0;
  std::string cluster, account, user, partition, parent;
  int64_t shares = 1;       // -2: "parent"
  int64_t priority = kNoLimit;
  AcctLimits limits;
  std::vector<std::string> qos;  // names; empty: inherit the parent's
  std::string def_qos;
  uint32_t placed = 0;  // when it took its place in the tree (the id; a move renews it): slurmdbd's order
  bool operator==(const AcctAssoc&) const = default;
};
constexpr int64_t kSharesParent = -2;

struct AcctQos {
  uint32_t id = 0;
  std::string name, description;
  int64_t priority = 0, grace_time = 0;  // grace in seconds
  double usage_factor = 1.0, usage_threshold = -1;
  std::vector<std::string> flags, preempt;
  std::string preempt_mode = "cluster";
  AcctLimits limits;
  bool operator==(const AcctQos&) const = default;
};

struct AcctModel {
  std::map<std::string, AcctCluster> clusters;
  std::map<std::string, AcctAccount> accounts;
  std::map<std::string, AcctUser> users;
  std::map<uint32_t, AcctAssoc> assocs;
  std::map<std::string, AcctQos> qos;
  uint32_t next_assoc_id = 1, next_qos_id = 1;

  // Lookups.
  const AcctAssoc* account_assoc(std::string_view cluster, std::string_view account) const;
  const AcctAssoc* user_assoc(std::string_view cluster, std::string_view account, std::string_view user,
                              std::string_view partition) const;
  // A user's associations on a cluster, in account order.
  std::vector<const AcctAssoc*> user_assocs(std::string_view cluster, std::string_view user) const;
  // The QOS an association may use: its own list, else its nearest ancestor's.
  std::vector<std::string> effective_qos(const AcctAssoc& a) const;
  // The association above `a` in the tree (a user's: its account's; root's: none).
  const AcctAssoc* parent_of(const AcctAssoc& a) const;
  // `a` as it applies: the Max limits, QOS, default QOS and priority it does not set come
  // from its nearest ancestor that does; the group limits are its own (sacctmgr lists this,
  // enforcement uses it).
  AcctAssoc inherited(const AcctAssoc& a) const;
  // True when `account` is `ancestor` or below it on `cluster`.
  bool account_under(std::string_view cluster, std::string_view account, std::string_view ancestor) const;
  // Adds an association with a fresh id.
  AcctAssoc& add_assoc(AcctAssoc a);
  AcctQos& add_qos(AcctQos q);
};

// Association ids in slurmdbd's storage order (its nested-set "lft"): depth first from each
// cluster's root, a new child placed before its older siblings. sacctmgr's modify and delete
// list their objects in it, as does `list user -s`; sreport orders by it.
std::vector<uint32_t> lft_order(const AcctModel& m);

// What a new store holds, and what registering a cluster adds: Slurm's defaults (account root
// "default root account"; user root, Administrator, in root; QOS normal).
AcctModel default_acct_model();
// Adds `cluster` with its root associations (root, root/root) if missing, and gives it a
// SLUID cluster id (the lowest free from 2) if it has none; true if it added the cluster.
bool register_cluster(AcctModel& m, const std::string& cluster, const std::string& host, uint32_t port);

}  // namespace hq
