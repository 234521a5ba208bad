// The accounting store's requests and answers on the wire (pb::StoreRequest/StoreReply):
// store::AcctJob, AcctJobQuery and model rows to protobuf and back, for the controller's
// remote store (remote_store.hpp) and the `hq accounting` daemon (daemon.cpp).
// Pure functions; thread-safe.
#pragma once
#include "hq.pb.h"
#include "store/acct_store.hpp"

namespace hq::cmd {

void to_pb(const store::AcctJob& job, pb::StoreJobRow& out);
store::AcctJob from_pb(const pb::StoreJobRow& row);
void to_pb(const store::AcctJobQuery& q, pb::StoreJobQuery& out);
store::AcctJobQuery from_pb(const pb::StoreJobQuery& q);
void to_pb(const store::AcctStore::ModelRows& rows, google::protobuf::RepeatedPtrField<pb::StoreModelRow>& out);
store::AcctStore::ModelRows from_pb(const google::protobuf::RepeatedPtrField<pb::StoreModelRow>& rows);

}  // namespace hq::cmd
