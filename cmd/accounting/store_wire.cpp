// Conversions of the accounting store's wire messages (see store_wire.hpp).
#include "cmd/accounting/store_wire.hpp"

namespace hq::cmd {
namespace {

template <typename Repeated, typename Vector>
void copy_into(const Repeated& from, Vector& to) {
  to.assign(from.begin(), from.end());
}

}  // namespace

void to_pb(const store::AcctJob& job, pb::StoreJobRow& out) {
  out.set_seq(job.seq);
  out.set_cluster(job.cluster);
  out.set_job_id(job.job_id);
  out.set_submit_time(job.submit_time);
  out.set_uid(job.uid);
  out.set_name(job.name);
  out.set_state(job.state);
  out.set_partition(job.partition);
  out.set_account(job.account);
  out.set_eligible_time(job.eligible_time);
  out.set_start_time(job.start_time);
  out.set_end_time(job.end_time);
  out.set_array_job_id(job.array_job_id);
  out.set_array_task_id(job.array_task_id);
  out.set_record(job.record);
  out.set_step_id(job.step_id);
  out.set_node_span(job.node_span);
}

store::AcctJob from_pb(const pb::StoreJobRow& row) {
  store::AcctJob job;
  job.seq = row.seq();
  job.cluster = row.cluster();
  job.job_id = row.job_id();
  job.submit_time = row.submit_time();
  job.uid = row.uid();
  job.name = row.name();
  job.state = row.state();
  job.partition = row.partition();
  job.account = row.account();
  job.eligible_time = row.eligible_time();
  job.start_time = row.start_time();
  job.end_time = row.end_time();
  job.array_job_id = row.array_job_id();
  job.array_task_id = row.array_task_id();
  job.record = row.record();
  job.step_id = row.step_id();
  job.node_span = row.node_span();
  return job;
}

void to_pb(const store::AcctJobQuery& q, pb::StoreJobQuery& out) {
  out.set_cluster(q.cluster);
  for (auto [id, task] : q.jobs) {
    auto* sel = out.add_jobs();
    sel->set_job_id(id);
    sel->set_array_task(task);
  }
  for (uint32_t uid : q.uids) out.add_uids(uid);
  for (const auto& n : q.names) out.add_names(n);
  for (const auto& s : q.states) out.add_states(s);
  for (const auto& p : q.partitions) out.add_partitions(p);
  for (const auto& a : q.accounts) out.add_accounts(a);
  out.set_start(q.start);
  out.set_end(q.end);
  out.set_limit(q.limit);
  out.set_started_only(q.started_only);
  out.set_with_steps(q.with_steps);
  out.set_latest_only(q.latest_only);
}

store::AcctJobQuery from_pb(const pb::StoreJobQuery& q) {
  store::AcctJobQuery out;
  out.cluster = q.cluster();
  for (const auto& sel : q.jobs()) out.jobs.emplace_back(sel.job_id(), sel.array_task());
  copy_into(q.uids(), out.uids);
  copy_into(q.names(), out.names);
  copy_into(q.states(), out.states);
  copy_into(q.partitions(), out.partitions);
  copy_into(q.accounts(), out.accounts);
  out.start = q.start();
  out.end = q.end();
  out.limit = static_cast<size_t>(q.limit());
  out.started_only = q.started_only();
  out.with_steps = q.with_steps();
  out.latest_only = q.latest_only();
  return out;
}

void to_pb(const store::AcctStore::ModelRows& rows, google::protobuf::RepeatedPtrField<pb::StoreModelRow>& out) {
  for (const auto& [key, body] : rows) {
    auto* row = out.Add();
    row->set_kind(key.first);
    row->set_key(key.second);
    row->set_body(body);
  }
}

store::AcctStore::ModelRows from_pb(const google::protobuf::RepeatedPtrField<pb::StoreModelRow>& rows) {
  store::AcctStore::ModelRows out;
  for (const auto& row : rows) out[{row.kind(), row.key()}] = row.body();
  return out;
}

}  // namespace hq::cmd
