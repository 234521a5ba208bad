// sacctmgr list|show --json: the records a list selected (pb::AcctListedRec) in Slurm 23.11's
// data_parser v0.0.40 layout ({"users"|"accounts"|"associations"|"qos"|"clusters"|"TRES":
// [...], "meta", "errors", "warnings"}), keys in its parser's order. Slurm 22.05's sacctmgr
// has no --json; 23.11's is the first whose layout slurmrestd shares. One thread.
#pragma once
#include <string>
#include <vector>

#include "cmd/client/data_parser_v40.hpp"
#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// meta.command: as sacctmgr fills it, the words after the entity but the last.
// An error when the controller's records do not decode.
Result<std::string> acctmgr_json(const pb::AcctListedRec& listed, const MetaV40& meta);

}  // namespace hq::cmd
