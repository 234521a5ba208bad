// slurmrestd's v0.0.43 shapes (Slurm 24.11's data_parser, what SchedMD's Slinky slurm-client
// and slurm-exporter speak): hq's replies written as those JSON documents, and the request
// bodies (job_submit_req, update_node_msg) read into hq's own requests. Pure conversion:
// no I/O, no controller state; the caller (cmd/controller/rest_api.cpp) authenticates and
// acts. One thread (the controller's loop).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job.hpp"
#include "core/metrics.hpp"
#include "core/status.hpp"
#include "hq.pb.h"

namespace hq::cmd {

// What the envelope's "meta" tells of the exchange: who asked, from where, on which cluster.
struct RestMeta {
  std::string user, group, source, cluster;
};

// An error in slurmrestd's shape: the HTTP status it is sent with, Slurm's errno and text.
struct RestError {
  int http = 500;
  int error_number = 0;  // Slurm's (ESLURM_...), 0 for hq's own
  std::string error, description;
};

inline RestError rest_error(int http, int error_number, std::string error, std::string description) {
  return RestError{http, error_number, std::move(error), std::move(description)};
}

// Slurm's errno values the REST layer answers with.
namespace slurm_errno {
inline constexpr int kInvalidPartition = 2000, kAccessDenied = 2002, kScriptMissing = 2009;
inline constexpr int kInvalidJobId = 2017, kInvalidNodeName = 2018, kAlreadyDone = 2021;
inline constexpr int kInvalidNodeState = 2028, kMissingWorkDir = 2063, kEnvironmentMissing = 2127;
inline constexpr int kAuthFailure = 1007, kRestInvalidQuery = 9000, kRestFailParsing = 9001;
inline constexpr int kRestInvalidJobsDesc = 9002, kUrlInvalidPath = 11008, kInvalidMethod = 12004;
}  // namespace slurm_errno

// An hq Status as slurmrestd would answer it: not found 404, denied 403, unauthenticated 401,
// refused by the controller 422 (Slurm's range of controller errors), the rest 500.
RestError rest_error_of(const Status& s);

// The documents (compact JSON, one line, ending in a newline). `warnings`: texts for the
// envelope's "warnings".
std::string rest_error_json(const std::vector<RestError>& errors, const RestMeta& meta);
std::string rest_ok_json(const RestMeta& meta, const std::vector<std::string>& warnings = {});  // openapi_resp
std::string rest_ping_json(const std::string& host, int64_t latency_us, const RestMeta& meta);
// openapi_job_info_resp: the jobs of `q` (as the controller lists them, redacted for the
// caller), `last_backfill` the last full pass.
std::string rest_jobs_json(const pb::QueueReply& q, int64_t last_backfill, const RestMeta& meta);
// openapi_nodes_resp and openapi_partition_resp from `r` (controller's nodes and partitions);
// `only`: that node alone ("" all).
std::string rest_nodes_json(const pb::NodesReply& r, std::string_view only, const RestMeta& meta);
std::string rest_partitions_json(const pb::NodesReply& r, std::string_view only, const RestMeta& meta);

// What /diag reports: the controller's counters (sdiag's).
struct RestDiag {
  SchedulerCounters sched;
  std::map<std::string, RequestCount> requests;
  int64_t now = 0;
  int64_t jobs_pending = 0, jobs_running = 0;
  int64_t queue_length = 0;  // pending jobs the scheduler looks at
};
std::string rest_diag_json(const RestDiag& d, const RestMeta& meta);

// openapi_job_submit_response and openapi_kill_job_resp.
std::string rest_submit_json(uint64_t job_id, const std::vector<std::string>& warnings, const RestMeta& meta);
// One entry per job asked for: cancelled, or the error it met.
struct KillOutcome {
  uint64_t job_id = 0;
  std::string error;   // "" done
  int error_number = 0;
};
std::string rest_kill_json(const std::vector<KillOutcome>& outcomes, const RestMeta& meta,
                           const std::vector<RestError>& errors = {});

// POST /job/submit's body: {"script": ..., "job": {job_desc_msg}} (or one-entry "jobs"), as a
// batch job's spec. Who runs it is the caller's (the controller sets it from the token), not
// the body's. Fields hq does not act on are named in `warnings`; wrong types, bad values and
// a batch job without script, environment or working directory are errors (400 or 422).
struct RestSubmit {
  JobSpec spec;
  std::string user_id, group_id;  // as the body gives them ("" none): must be the caller's
  std::vector<std::string> warnings;
};
Result<RestSubmit> rest_parse_submit(std::string_view body, RestError* error);

// POST /job/{id}'s body (job_desc_msg): "hold" (true holds, false releases) and the fields
// scontrol update JobId= changes, as its settings ("TimeLimit=90"); others are warnings.
struct RestJobUpdate {
  std::optional<bool> hold;
  std::vector<std::string> settings;
  std::vector<std::string> warnings;
};
Result<RestJobUpdate> rest_parse_job_update(std::string_view body, RestError* error);
// openapi_job_post_response: the job, and what was refused ("" none).
std::string rest_job_post_json(uint64_t job_id, const std::vector<std::string>& problems, const RestMeta& meta,
                               const std::vector<std::string>& warnings);

// POST /node/{name}'s body (update_node_msg): drain (state DRAIN with a reason), resume
// (RESUME, UNDRAIN or IDLE), down (DOWN), features and weight: the node_control requests
// that carry it out, in order; `nodes` the path's hostlist ("": the body's "name" list).
struct RestNodeUpdate {
  std::vector<pb::NodeControlRequest> requests;
  std::vector<std::string> warnings;
};
Result<RestNodeUpdate> rest_parse_node_update(std::string_view body, const std::string& nodes, RestError* error);

}  // namespace hq::cmd
