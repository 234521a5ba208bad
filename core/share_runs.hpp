// What running jobs may still use, per sshare row (its TRESRunMins): each running job's
// TRES times its seconds left, summed up its association's path, as Slurm's
// grp_used_tres_run_secs (a job without a time limit counts as 4294967295 minutes long).
// Pure; thread-safe.
#pragma once
#include <string>
#include <vector>

#include "core/cluster_state.hpp"
#include "core/fair_share.hpp"
#include "core/tres_counts.hpp"

namespace hq {

// By row of `fs`: TRES-seconds left of the running jobs below it (saturating).
std::vector<TresCounts> running_tres_seconds(const FairShare& fs, const ClusterState& s, Time now);

// sshare's TRESRunMins text of one row: its seconds / 60, in the cluster's TRES order.
std::string tres_run_mins_text(const TresCounts& seconds);

}  // namespace hq
