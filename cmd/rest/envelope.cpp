#include "cmd/rest/envelope.hpp"

#include "cmd/commands.hpp"

namespace hq::cmd {
namespace rest {

void no_val(JsonStream& j, std::string_view key, int64_t v, bool set) {
  j.object(key).boolean("set", set).boolean("infinite", false).integer("number", set ? v : 0).end();
}

void no_val_limit(JsonStream& j, std::string_view key, int64_t v, bool infinite) {
  j.object(key).boolean("set", !infinite).boolean("infinite", infinite).integer("number", infinite ? 0 : v).end();
}

void strings(JsonStream& j, std::string_view key, const std::vector<std::string>& items) {
  j.array(key);
  for (const auto& s : items) j.item(s);
  j.end();
}

namespace {

// Slurm 24.11 speaks v0.0.43; hq says so, and its own version in "release".
void write_meta(JsonStream& j, const RestMeta& meta) {
  j.object("meta");
  j.object("plugin").str("type", "openapi/slurmctld").str("name", "Slurm OpenAPI slurmctld");
  j.str("data_parser", "data_parser/v0.0.43").str("accounting_storage", "").end();
  j.object("client").str("source", meta.source).str("user", meta.user).str("group", meta.group).end();
  j.array("command").end();
  j.object("slurm").object("version").str("major", "24").str("micro", "0").str("minor", "11").end();
  j.str("release", std::string("24.11.0 (hq ") + kHqVersion + ")").str("cluster", meta.cluster).end();
  j.end();
}

}  // namespace

void finish(JsonStream& j, const RestMeta& meta, const std::vector<RestError>& errors,
            const std::vector<std::string>& warnings) {
  write_meta(j, meta);
  j.array("errors");
  for (const RestError& e : errors) {
    j.object().str("description", e.description).integer("error_number", e.error_number);
    j.str("error", e.error).str("source", "hq").end();
  }
  j.end().array("warnings");
  for (const std::string& w : warnings) j.object().str("description", w).str("source", "hq").end();
  j.end().end();
}

}  // namespace rest

RestError rest_error_of(const Status& s) {
  RestError e;
  e.description = s.message();
  switch (s.code()) {
    case Code::kNotFound: e.http = 404, e.error = "Not found"; break;
    case Code::kDenied: e.http = 403, e.error = "Access/permission denied", e.error_number = slurm_errno::kAccessDenied; break;
    case Code::kInvalid: e.http = 422, e.error = "Unable to process the request"; break;
    case Code::kUnavailable: e.http = 503, e.error = "Service unavailable"; break;
    default: e.http = 500, e.error = "Internal error"; break;
  }
  return e;
}

std::string rest_error_json(const std::vector<RestError>& errors, const RestMeta& meta) {
  JsonStream j(true);
  j.object();
  rest::finish(j, meta, errors);
  return j.take();
}

std::string rest_ok_json(const RestMeta& meta, const std::vector<std::string>& warnings) {
  JsonStream j(true);
  j.object();
  rest::finish(j, meta, {}, warnings);
  return j.take();
}

std::string rest_ping_json(const std::string& host, int64_t latency_us, const RestMeta& meta) {
  JsonStream j(true);
  j.object().array("pings").object();
  j.str("hostname", host).str("pinged", "UP").boolean("responding", true).integer("latency", latency_us);
  j.str("mode", "primary").boolean("primary", true).end().end();
  rest::finish(j, meta);
  return j.take();
}

std::string rest_submit_json(uint64_t job_id, const std::vector<std::string>& warnings, const RestMeta& meta) {
  JsonStream j(true);
  j.object().integer("job_id", static_cast<int64_t>(job_id)).str("step_id", "batch").str("job_submit_user_msg", "");
  rest::finish(j, meta, {}, warnings);
  return j.take();
}

std::string rest_kill_json(const std::vector<KillOutcome>& outcomes, const RestMeta& meta,
                           const std::vector<RestError>& errors) {
  JsonStream j(true);
  j.object().array("status");
  for (const KillOutcome& k : outcomes) {
    j.object().object("error").str("string", k.error.empty() ? "No error" : k.error);
    j.integer("code", k.error_number).str("message", k.error).end();
    j.str("step_id", "batch");
    rest::no_val(j, "job_id", static_cast<int64_t>(k.job_id));
    j.object("federation").str("sibling", "").end().end();
  }
  j.end();
  rest::finish(j, meta, errors);
  return j.take();
}

}  // namespace hq::cmd
