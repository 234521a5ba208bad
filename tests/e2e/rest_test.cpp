// End to end: slurmrestd's v0.0.43 API and hq's /hq/v1 on the controller's HTTPS port, as
// a small client written against Slurm's published OpenAPI shapes (tests/rest_shapes.hpp)
// uses them over curl: submit, watch, cancel, drain and resume, every reply decoded field by
// field; bad input refused with slurmrestd's errors; and no one acting as another user.
#include <doctest/doctest.h>

#include <google/protobuf/util/json_util.h>

#include <fstream>

#include "../rest_shapes.hpp"
#include "http_fixture.hpp"

using namespace hq::test;

namespace {

struct Reply {
  int status = 0;
  std::string body;
};

// curl against the cluster's HTTPS port with a token (and extra headers), a body from a file.
class RestClient {
 public:
  RestClient(const LocalCluster& c, std::string token) : c_(c), token_(std::move(token)) {
    std::string addr = http_addr(c);
    port_ = addr.substr(addr.find(':') + 1);
  }
  Reply call(const std::string& method, const std::string& path, const std::string& body = "",
             const std::string& headers = "") const {
    std::string file = c_.dir() + "/body.json";
    std::ofstream(file) << body;
    std::string cmd = "curl -sS --max-time 20 --cacert " + c_.dir() + "/keys/ca.pem --resolve hq-controller:" + port_ +
                      ":127.0.0.1 -X " + method + " -w '\\n%{http_code}' -H 'Content-Type: application/json' " + headers +
                      (token_.empty() ? "" : " -H 'X-SLURM-USER-TOKEN: " + token_ + "'") +
                      (body.empty() ? "" : " --data-binary @" + file) + " 'https://hq-controller:" + port_ + path + "'";
    auto r = sh(cmd);
    Reply out;
    size_t nl = r.out.rfind('\n');
    if (nl == std::string::npos) return out;
    out.body = r.out.substr(0, nl);
    out.status = std::atoi(r.out.c_str() + nl + 1);
    return out;
  }
  Reply get(const std::string& path) const { return call("GET", path); }

 private:
  const LocalCluster& c_;
  std::string token_, port_;
};

std::string errors_text(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += e + "\n";
  return out;
}

// `reply` is evaluated once (it is often the request itself).
#define CHECK_REPLY(reply, want_status, schema)               \
  do {                                                        \
    const Reply reply_ = (reply);                             \
    INFO(reply_.body.substr(0, 600));                         \
    CHECK(reply_.status == (want_status));                    \
    auto errors_ = shape_errors(schema, reply_.body);         \
    INFO(errors_text(errors_));                               \
    CHECK(errors_.empty());                                   \
  } while (0)

google::protobuf::Struct parsed_or_empty(const std::string& json) {
  google::protobuf::Struct s;
  if (!google::protobuf::util::JsonStringToMessage(json, &s).ok()) s.Clear();
  return s;
}

// The one job of a job_info reply: its job_state's first entry ("" none).
std::string state_of(const Reply& r) {
  auto doc = parsed_or_empty(r.body);
  auto it = doc.fields().find("jobs");
  if (it == doc.fields().end() || it->second.list_value().values_size() != 1) return "";
  const auto& job = it->second.list_value().values(0).struct_value().fields();
  auto st = job.find("job_state");
  return st == job.end() || st->second.list_value().values_size() == 0 ? "" : st->second.list_value().values(0).string_value();
}

std::string submit_body(const std::string& script, const std::string& dir, const std::string& more = "") {
  return R"({"script": ")" + script + R"(", "job": {"name": "rest", "environment": ["PATH=/usr/bin:/bin"],
    "current_working_directory": ")" + dir + "\"" + more + "}}";
}

int64_t job_id_of(const Reply& r) {
  auto doc = parsed_or_empty(r.body);
  auto it = doc.fields().find("job_id");
  return it == doc.fields().end() ? 0 : static_cast<int64_t>(it->second.number_value());
}

std::string token_of(const CmdResult& r) { return r.rc == 0 && r.out.rfind("SLURM_JWT=", 0) == 0 ? trimmed(r.out.substr(10)) : ""; }

constexpr const char* kApi = "/slurm/v0.0.43";

}  // namespace

TEST_CASE("e2e: slurmrestd v0.0.43 - submit, watch, cancel, drain and resume as a generated client decodes them") {
  LocalCluster c(2, 2, 20, "http_port = 0\n");
  REQUIRE(c.ready());
  REQUIRE(!http_addr(c).empty());
  RestClient api(c, token_of(c.hq("token")));
  std::string api_path = kApi;

  CHECK_REPLY(api.get(api_path + "/ping/"), 200, "openapi_ping_array_resp");
  CHECK_REPLY(api.get(api_path + "/partitions/"), 200, "openapi_partition_resp");
  CHECK_REPLY(api.get(api_path + "/partition/debug"), 200, "openapi_partition_resp");

  Reply sub = api.call("POST", api_path + "/job/submit",
                       submit_body("#!/bin/bash\\necho from-rest\\n" + until_file("never"), c.dir(), R"(, "tasks": 1, "unknown_key": 3)"));
  CHECK_REPLY(sub, 200, "openapi_job_submit_response");
  CHECK(sub.body.find("job.unknown_key is not supported") != std::string::npos);
  std::string id = std::to_string(job_id_of(sub));
  REQUIRE(id != "0");
  REQUIRE(wait_until([&] { return state_of(api.get(api_path + "/job/" + id)) == "RUNNING"; }, 30));
  CHECK(c.state(id) == "RUNNING");  // the CLI sees the same job
  Reply job = api.get(api_path + "/job/" + id);
  CHECK_REPLY(job, 200, "openapi_job_info_resp");
  CHECK(job.body.find("\"allocation\":[{\"index\":0,\"name\":\"e") != std::string::npos);
  CHECK(job.body.find("\"user_name\":\"root\"") != std::string::npos);
  CHECK_REPLY(api.get(api_path + "/jobs/"), 200, "openapi_job_info_resp");
  Reply nodes = api.get(api_path + "/nodes/");
  CHECK_REPLY(nodes, 200, "openapi_nodes_resp");
  CHECK(nodes.body.find("\"alloc_cpus\":1") != std::string::npos);
  CHECK_REPLY(api.get(api_path + "/diag/"), 200, "openapi_diag_resp");

  // drain and resume
  CHECK_REPLY(api.call("POST", api_path + "/node/e2", R"({"state": ["DRAIN"], "reason": "rest test"})"), 200, "openapi_resp");
  CHECK(c.hq("nodes").out.find("drain") != std::string::npos);
  Reply e2 = api.get(api_path + "/node/e2");
  CHECK_REPLY(e2, 200, "openapi_nodes_resp");
  CHECK(e2.body.find("\"DRAIN\"") != std::string::npos);
  CHECK(e2.body.find("\"reason\":\"rest test\"") != std::string::npos);
  CHECK(api.call("POST", api_path + "/node/e2", R"({"state": ["DRAIN"]})").status == 422);  // no reason
  CHECK_REPLY(api.call("POST", api_path + "/node/e2", R"({"state": ["RESUME"]})"), 200, "openapi_resp");
  CHECK(api.get(api_path + "/node/e2").body.find("\"DRAIN\"") == std::string::npos);

  // hq's own: expected starts, explain, topology
  Reply hq_jobs = api.get("/hq/v1/jobs");
  CHECK(hq_jobs.status == 200);
  CHECK(hq_jobs.body.find("\"job_id\":" + id) != std::string::npos);
  CHECK(api.get("/hq/v1/jobs/" + id + "/explain").body.find("\"lines\":[") != std::string::npos);
  CHECK(api.get("/hq/v1/jobs/999999/explain").status == 404);
  CHECK(wait_until([&] { return api.get("/hq/v1/jobs/" + id + "/output").body.find("from-rest") != std::string::npos; }, 10));
  Reply devnull = api.call("POST", api_path + "/job/submit",
                           submit_body("#!/bin/sh\\ntrue\\n", c.dir(), R"(, "hold": true, "standard_output": "/dev/null")"));
  std::string devnull_id = std::to_string(job_id_of(devnull));
  CHECK(api.get("/hq/v1/jobs/" + devnull_id + "/output").status == 404);  // not a regular file: never opened
  CHECK(api.call("POST", api_path + "/job/999999", R"({"comment": "x"})").status == 404);
  c.hq("cancel " + devnull_id);
  CHECK(api.get("/hq/v1/whoami").body.find("\"admin\":true") != std::string::npos);
  CHECK(api.get("/hq/v1/topology").status == 200);
  CHECK(api.get("/hq/v1/topology/nowhere").status == 404);

  // update a held job, then release it (POST /job/{id})
  Reply held = api.call("POST", api_path + "/job/submit", submit_body("#!/bin/sh\\ntrue\\n", c.dir(), R"(, "hold": true)"));
  CHECK_REPLY(held, 200, "openapi_job_submit_response");
  std::string held_id = std::to_string(job_id_of(held));
  CHECK(c.state(held_id) == "PENDING");
  Reply update = api.call("POST", api_path + "/job/" + held_id, R"({"time_limit": {"set": true, "number": 7}, "comment": "via rest"})");
  CHECK_REPLY(update, 200, "openapi_job_post_response");
  CHECK(c.hq("show job " + held_id).out.find("TimeLimit=00:07:00") != std::string::npos);
  CHECK(api.call("POST", api_path + "/job/" + held_id, R"({"time_limit": "long"})").status == 400);
  CHECK_REPLY(api.call("POST", api_path + "/job/" + held_id, R"({"hold": false})"), 200, "openapi_job_post_response");
  CHECK(c.wait_state(held_id, "COMPLETED", 30));

  // cancel
  Reply kill = api.call("DELETE", api_path + "/job/" + id);
  CHECK_REPLY(kill, 200, "openapi_kill_job_resp");
  CHECK(c.wait_state(id, "CANCELLED", 30));
  CHECK(state_of(api.get(api_path + "/job/" + id)) == "CANCELLED");
  CHECK(slurp(c.dir() + "/slurm-" + id + ".out").find("from-rest") != std::string::npos);
}

TEST_CASE("e2e: slurmrestd v0.0.43 - bad input gets slurmrestd's errors, the controller goes on") {
  LocalCluster c(1, 1, 20, "http_port = 0\n");
  REQUIRE(c.ready());
  REQUIRE(!http_addr(c).empty());
  std::string token = token_of(c.hq("token"));
  RestClient api(c, token), anonymous(c, ""), forged(c, "AAAAAAAAAAAAAAAAAAAAAAAA");
  std::string api_path = kApi;
  CHECK_REPLY(anonymous.get(api_path + "/jobs/"), 401, "openapi_resp");
  CHECK_REPLY(forged.get(api_path + "/jobs/"), 401, "openapi_resp");
  CHECK_REPLY(api.call("GET", api_path + "/jobs/", "", "-H 'X-SLURM-USER-NAME: someone-else'"), 403, "openapi_resp");
  CHECK(api.call("GET", api_path + "/jobs/", "", "-H 'X-SLURM-USER-NAME: root'").status == 200);
  CHECK_REPLY(api.get("/slurm/v0.0.40/jobs/"), 404, "openapi_resp");
  CHECK_REPLY(api.get(api_path + "/nothing"), 404, "openapi_resp");
  CHECK_REPLY(api.get(api_path + "/job/999999"), 404, "openapi_resp");
  CHECK_REPLY(api.get(api_path + "/job/12abc"), 404, "openapi_resp");
  CHECK_REPLY(api.get(api_path + "/node/nope"), 404, "openapi_resp");
  CHECK_REPLY(api.call("PUT", api_path + "/jobs/"), 405, "openapi_resp");
  CHECK_REPLY(api.get("/hq/v1/%2e%2e/%2e%2e/etc/passwd"), 404, "openapi_resp");
  CHECK_REPLY(api.call("POST", api_path + "/job/submit", "{\"job\": {"), 400, "openapi_resp");
  CHECK_REPLY(api.call("POST", api_path + "/job/submit", "{\"job\": {\"tasks\": \"x\"}}"), 400, "openapi_resp");
  Reply no_env = api.call("POST", api_path + "/job/submit", R"({"script": "#!/bin/sh\ntrue\n", "job": {"current_working_directory": "/tmp"}})");
  CHECK_REPLY(no_env, 422, "openapi_resp");
  CHECK(no_env.body.find("Environment is missing in job") != std::string::npos);
  Reply bad_part = api.call("POST", api_path + "/job/submit", submit_body("#!/bin/sh\\ntrue\\n", c.dir(), R"(, "partition": "nope")"));
  CHECK_REPLY(bad_part, 422, "openapi_resp");
  std::string huge(2 << 20, 'x');
  CHECK(api.call("POST", api_path + "/job/submit", "{\"script\": \"" + huge + "\"}").status == 413);
  // Nothing above made a job, and the controller still answers.
  CHECK(c.hq("queue -t all -h").out.empty());
  CHECK_REPLY(api.get(api_path + "/ping/"), 200, "openapi_ping_array_resp");
}

TEST_CASE("e2e: slurmrestd v0.0.43 - a user's token acts as that user only") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2, 20, "http_port = 0\n");
  REQUIRE(c.ready());
  REQUIRE(!http_addr(c).empty());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  std::string theirs = token_of(as_user(65534, shared, "token"));
  REQUIRE(!theirs.empty());
  RestClient root(c, token_of(c.hq("token"))), nobody(c, theirs);
  std::string api_path = kApi;
  std::string root_job = c.fill_cluster();
  REQUIRE(!root_job.empty());

  Reply mine = nobody.call("POST", api_path + "/job/submit", submit_body("#!/bin/sh\\ntrue\\n", shared));
  CHECK_REPLY(mine, 200, "openapi_job_submit_response");
  std::string id = std::to_string(job_id_of(mine));
  Reply seen = root.get(api_path + "/job/" + id);
  CHECK(seen.body.find("\"user_id\":65534") != std::string::npos);  // the token's user
  CHECK(nobody.call("POST", api_path + "/job/submit", submit_body("#!/bin/sh\\ntrue\\n", shared, R"(, "user_id": "0")")).status == 403);
  CHECK(nobody.call("GET", api_path + "/jobs/", "", "-H 'X-SLURM-USER-NAME: root'").status == 403);
  Reply kill = nobody.call("DELETE", api_path + "/job/" + root_job);
  CHECK_REPLY(kill, 403, "openapi_kill_job_resp");
  CHECK(c.state(root_job) == "RUNNING");
  CHECK_REPLY(nobody.call("POST", api_path + "/node/e1", R"({"state": ["DRAIN"], "reason": "mine"})"), 403, "openapi_resp");
  CHECK(nobody.call("POST", api_path + "/job/" + root_job, R"({"comment": "mine now"})").status == 403);
  CHECK(nobody.get("/hq/v1/jobs/" + root_job + "/output").status == 403);
  c.hq("cancel " + root_job);
  CHECK(c.wait_state(id, "COMPLETED", 30));
  CHECK(nobody.get("/hq/v1/jobs/" + id + "/output").status == 200);  // their own file, read as them
  CHECK(root.get("/hq/v1/jobs/" + id + "/output").status == 200);    // an administrator reads it as them too
  CHECK(c.hq("nodes").out.find("drain") == std::string::npos);
  c.hq("cancel " + root_job);
}
