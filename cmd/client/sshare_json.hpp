// sshare --json in Slurm 23.11's data_parser v0.0.40 layout: {"shares": {"shares": [...],
// "total_shares"}, "meta", "errors", "warnings"}, a record per row sshare selects (as its
// text), with each TRES's run seconds, GrpTRESMins and usage. Slurm 22.05's sshare has no
// --json. One thread (a client's).
#pragma once
#include <string>
#include <vector>

#include "cmd/client/data_parser_v40.hpp"
#include "core/fair_share.hpp"

namespace hq::cmd {

// `rows`: those sshare selected (sshare_rows); `gpus`: the cluster has a gres/gpu TRES;
// meta.command: as sshare fills it, its arguments but the last.
std::string sshare_json(const std::vector<ShareRow>& rows, const std::string& cluster, bool gpus, const MetaV40& meta);

}  // namespace hq::cmd
