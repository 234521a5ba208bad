// GET /slurm/v0.0.43/diag/: the controller's counters as v0.0.43 stats_msg (sdiag's
// numbers: scheduling passes, backfill, jobs by outcome, requests by type). One thread.
#include "cmd/rest/envelope.hpp"

namespace hq::cmd {
namespace {

int64_t mean(int64_t sum, int64_t count) { return count > 0 ? sum / count : 0; }

void main_scheduler(JsonStream& j, const RestDiag& d) {
  const PassTally& p = d.sched.passes;
  j.integer("schedule_cycle_max", p.max_us).integer("schedule_cycle_last", p.last_us);
  j.integer("schedule_cycle_sum", p.sum_us).integer("schedule_cycle_total", p.count);
  j.integer("schedule_cycle_mean", mean(p.sum_us, p.count)).integer("schedule_cycle_mean_depth", mean(p.depth_sum, p.count));
  int64_t minutes = (d.now - d.sched.started_at) / 60;
  j.integer("schedule_cycle_per_minute", minutes > 0 ? p.count / minutes : p.count);
  j.integer("schedule_cycle_depth", p.depth_sum).integer("schedule_queue_length", d.queue_length);
  j.object("schedule_exit");
  for (const char* k : {"end_job_queue", "default_queue_depth", "max_job_start", "max_rpc_cnt", "max_sched_time", "licenses"})
    j.integer(k, k == std::string_view("end_job_queue") ? p.count : 0);
  j.end();
}

void backfill(JsonStream& j, const RestDiag& d) {
  const PassTally& b = d.sched.backfill;
  j.integer("bf_backfilled_jobs", d.sched.bf_started).integer("bf_last_backfilled_jobs", d.sched.bf_started);
  j.integer("bf_backfilled_het_jobs", 0).integer("bf_cycle_counter", b.count);
  j.integer("bf_cycle_mean", mean(b.sum_us, b.count)).integer("bf_depth_mean", mean(b.depth_sum, b.count));
  j.integer("bf_depth_mean_try", mean(b.depth_sum, b.count)).integer("bf_cycle_sum", b.sum_us);
  j.integer("bf_cycle_last", b.last_us).integer("bf_cycle_max", b.max_us);
  j.object("bf_exit");
  for (const char* k : {"end_job_queue", "bf_max_job_start", "bf_max_job_test", "bf_max_time", "bf_node_space_size",
                        "state_changed"})
    j.integer(k, k == std::string_view("end_job_queue") ? b.count : 0);
  j.end();
  j.integer("bf_last_depth", b.depth_last).integer("bf_last_depth_try", b.depth_last);
  j.integer("bf_depth_sum", b.depth_sum).integer("bf_depth_try_sum", b.depth_sum);
  j.integer("bf_queue_len", d.queue_length).integer("bf_queue_len_mean", mean(b.depth_sum, b.count));
  j.integer("bf_queue_len_sum", b.depth_sum);
  j.integer("bf_table_size", 0).integer("bf_table_size_sum", 0).integer("bf_table_size_mean", 0);
  rest::no_val_time(j, "bf_when_last_cycle", d.sched.bf_last_time);
  j.boolean("bf_active", false);
}

void requests(JsonStream& j, const RestDiag& d) {
  j.array("rpcs_by_message_type");
  int id = 0;
  for (const auto& [type, c] : d.requests) {
    int64_t total_us = static_cast<int64_t>(c.seconds * 1e6);
    j.object().integer("type_id", ++id).str("message_type", type).integer("count", c.count);
    j.integer("queued", 0).integer("dropped", 0).integer("cycle_last", 0).integer("cycle_max", 0);
    j.integer("total_time", total_us);
    rest::no_val(j, "average_time", mean(total_us, c.count));
    j.end();
  }
  j.end().array("rpcs_by_user").end().array("pending_rpcs").end().array("pending_rpcs_by_hostlist").end();
}

}  // namespace

std::string rest_diag_json(const RestDiag& d, const RestMeta& meta) {
  JsonStream j(true);
  j.object().object("statistics");
  j.integer("parts_packed", 1);
  rest::no_val_time(j, "req_time", d.now);
  rest::no_val_time(j, "req_time_start", d.sched.started_at);
  j.integer("server_thread_count", 1).integer("agent_queue_size", 0).integer("agent_count", 0);
  j.integer("agent_thread_count", 0).integer("dbd_agent_queue_size", 0).integer("gettimeofday_latency", 0);
  main_scheduler(j, d);
  j.integer("jobs_submitted", d.sched.jobs_submitted).integer("jobs_started", d.sched.jobs_started);
  j.integer("jobs_completed", d.sched.jobs_completed).integer("jobs_canceled", d.sched.jobs_canceled);
  j.integer("jobs_failed", d.sched.jobs_failed).integer("jobs_pending", d.jobs_pending);
  j.integer("jobs_running", d.jobs_running);
  rest::no_val_time(j, "job_states_ts", d.now);
  backfill(j, d);
  requests(j, d);
  j.end();
  rest::finish(j, meta);
  return j.take();
}

}  // namespace hq::cmd
