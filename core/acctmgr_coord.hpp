// What a coordinator may change with sacctmgr (Slurm's acct_coord_table, with 24.05's
// rules): a user with no admin level who coordinates accounts may add users (with no admin
// level: CVE-2025-43904) and sub-accounts under those accounts, and add, change or remove the
// associations of their subtrees, but no job limit of an association above its parent's
// (Slurm 24.05), and nothing else: no other user's record, no cluster, no QOS. The check
// compares the model before and after a command, so every verb and option is covered by the
// same rule. Pure; thread-safe.
#pragma once
#include <string>

#include "core/acct_model.hpp"
#include "core/status.hpp"

namespace hq {

// Whether `user` coordinates any account.
bool is_coordinator(const AcctModel& m, const std::string& user);
// Ok when coordinator `user` may make the change from `before` to `after`; else what is
// refused (Denied).
Status coordinator_change(const AcctModel& before, const AcctModel& after, const std::string& user);

}  // namespace hq
