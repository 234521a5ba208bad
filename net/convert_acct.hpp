// The accounting model (core/acct_model.hpp) on the wire and in the store: the whole model as
// one message (controller copies), and as rows (kind, key) -> bytes, one per entity, which the
// store keeps and a change rewrites only where bytes differ. Pure; thread-safe.
#pragma once
#include <map>
#include <string>
#include <utility>

#include "core/acct_model.hpp"
#include "core/acctmgr.hpp"
#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::net {

pb::AcctModelRec to_pb(const AcctModel& m);
Result<AcctModel> from_pb(const pb::AcctModelRec& p);

// What a sacctmgr list selected, for its --json (the cluster's own fields are the caller's).
pb::AcctListedRec to_pb(const AcctListed& listed);

using AcctRows = std::map<std::pair<std::string, std::string>, std::string>;  // (kind, key) -> bytes
AcctRows acct_rows(const AcctModel& m);
Result<AcctModel> acct_model_from_rows(const AcctRows& rows);

}  // namespace hq::net
