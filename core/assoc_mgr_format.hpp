// scontrol show assoc_mgr, as Slurm 22.05 prints it: the users, associations and QOS the
// controller enforces with, each limit with what is used against it now ("GrpJobs=N(1)",
// "GrpTRES=cpu=4(2),..."), shares and fair share, usage, and the QOS's per-account and
// per-user use; users=, accounts=, qos= and flags=users,assoc,qos select; -o makes one line
// of each record. TRES columns: cpu, mem, energy, node, billing, fs/disk, vmem, pages, then
// gres/gpu where the cluster has GPUs. Pure; thread-safe.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/acct_model.hpp"
#include "core/acct_policy.hpp"
#include "core/fair_share.hpp"
#include "core/status.hpp"

namespace hq {

struct AssocMgrQuery {
  std::vector<std::string> users, accounts, qos;
  bool users_section = true, assoc_section = true, qos_section = true;
  bool one_liner = false;
  bool gpu_tres = true;  // a gres/gpu column (the controller leaves it out on a cluster without GPUs)
};

// scontrol's words after "show assoc_mgr" (users=, accounts=, qos=, flags=; Slurm's prefixes),
// or its error text ("No value given for option X", "invalid flag ...", "invalid entity: ...").
Result<AssocMgrQuery> parse_assoc_mgr_args(const std::vector<std::string>& words);

// `uid_of(name)`: the user's uid (-1 unknown, printed as 4294967294 as Slurm's NO_VAL-2).
std::string render_assoc_mgr(const AcctModel& model, const std::string& cluster, const FairShare& shares,
                             const AcctUsage& usage, const std::function<int64_t(const std::string&)>& uid_of,
                             const AssocMgrQuery& q);

}  // namespace hq
