// slurmrestd v0.0.43 (cmd/rest): hq's replies as a client generated from Slurm's published
// OpenAPI spec decodes them (every field in the schema, of its type, enums kept, required
// ones there), with the values Slinky's exporter reads; request bodies read into hq's
// requests, and bad ones refused with slurmrestd's errors.
#include <doctest/doctest.h>

#include "cmd/controller/http_util.hpp"
#include "cmd/rest/v0043.hpp"
#include "../rest_shapes.hpp"
#include "tests/json_struct.hpp"

using namespace hq;
using namespace hq::cmd;

namespace {

RestMeta meta() { return RestMeta{"alice", "users", "127.0.0.1:5000", "c1"}; }

std::string errors_text(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += e + "\n";
  return out;
}

#define CHECK_SHAPE(schema, json)                                          \
  do {                                                                     \
    std::string text_ = (json);                                            \
    auto errors_ = test::shape_errors(schema, text_);                      \
    INFO(errors_text(errors_));                                            \
    CHECK(errors_.empty());                                                \
  } while (0)

const google::protobuf::Value& field(const google::protobuf::Struct& s, const std::string& k) {
  static const google::protobuf::Value none;
  auto it = s.fields().find(k);
  return it == s.fields().end() ? none : it->second;
}

pb::QueueReply sample_jobs() {
  pb::QueueReply q;
  q.set_now(10'000);
  pb::Job* pending = q.add_jobs();
  pending->set_job_id(7);
  pending->set_state("PENDING");
  pending->set_reason("Priority");
  pending->set_time_limit(-1);
  pending->set_hold(1);
  pending->set_array_job_id(7);
  pending->set_array_task_id(3);
  pending->set_expected_start(12'000);
  pending->mutable_spec()->set_mail_type("BEGIN,END,FAIL,REQUEUE,INVALID_DEPEND,STAGE_OUT,TIME_LIMIT_90");  // hq's names
  pending->mutable_spec()->set_exclusive(true);
  pb::Job* running = q.add_jobs();
  running->set_job_id(8);
  running->set_state("RUNNING");
  running->set_partition("gpu");
  running->set_time_limit(3600);
  running->set_start_time(9'000);
  running->set_nodelist("n[1-2]");
  running->mutable_spec()->set_user("alice");
  running->mutable_spec()->set_gpus_per_node(2);
  running->mutable_spec()->set_gpu_type("a100");
  running->mutable_spec()->set_mem_per_node_mib(1000);
  for (const char* n : {"n1", "n2"}) {
    pb::NodeAlloc* a = running->add_alloc();
    a->set_node(n);
    a->set_cpus(4);
    a->set_mem_mib(1000);
    a->add_gpus(0), a->add_gpus(1);
  }
  pb::Job* failed = q.add_jobs();
  failed->set_job_id(9);
  failed->set_state("FAILED");
  failed->set_exit_code(2);
  failed->set_end_time(9'500);
  pb::Job* cancelled = q.add_jobs();
  cancelled->set_job_id(10);
  cancelled->set_state("CANCELLED");
  cancelled->set_exit_signal(9);
  return q;
}

pb::NodesReply sample_nodes() {
  pb::NodesReply r;
  r.set_now(10'000);
  r.set_cluster("c1");
  pb::Node* idle = r.add_nodes();
  idle->set_name("n1");
  idle->set_cpus(8);
  idle->set_mem_mib(16000);
  idle->set_state("IDLE");
  idle->set_responding(true);
  idle->add_partitions("gpu");
  idle->set_gres("gpu:a100:2");
  pb::Node* drained = r.add_nodes();
  drained->set_name("n2");
  drained->set_cpus(8);
  drained->set_mem_mib(16000);
  drained->set_state("DRAINING");
  drained->set_reason("disk");
  drained->set_responding(true);
  drained->set_alloc_cpus(3);
  drained->set_alloc_mem_mib(500);
  drained->add_features("ib");
  pb::Partition* p = r.add_partitions();
  p->set_name("gpu");
  p->set_nodes("n[1-2]");
  p->set_total_nodes(2);
  p->set_is_default(true);
  p->set_max_time(7200);
  p->set_state("UP");
  return r;
}

}  // namespace

TEST_CASE("REST v0.0.43: the shape checker refuses what a generated client would not decode") {
  CHECK(!test::shape_errors("openapi_job_info_resp", R"({"jobs":[{"job_state":"RUNNING"}],"last_backfill":{},"last_update":{}})").empty());
  CHECK(!test::shape_errors("openapi_job_info_resp", R"({"jobs":[{"job_state":["RUN"]}],"last_backfill":{},"last_update":{}})").empty());
  CHECK(!test::shape_errors("openapi_job_info_resp", R"({"jobs":[{"no_such_field":1}],"last_backfill":{},"last_update":{}})").empty());
  CHECK(!test::shape_errors("openapi_job_info_resp", R"({"jobs":[]})").empty());  // last_backfill, last_update required
  CHECK(!test::shape_errors("openapi_job_info_resp", R"({"jobs":[{"name":"a","name":"b"}],"last_backfill":{},"last_update":{}})").empty());
  CHECK(test::shape_errors("openapi_job_info_resp", R"({"jobs":[{"job_state":["RUNNING"]}],"last_backfill":{},"last_update":{}})").empty());
}

TEST_CASE("REST v0.0.43: jobs as job_info - the schema's types, states as lists, the allocation node by node") {
  std::string json = rest_jobs_json(sample_jobs(), 9'990, meta());
  CHECK_SHAPE("openapi_job_info_resp", json);
  auto doc = hq::test::parsed_json(json);
  const auto& jobs = field(doc, "jobs").list_value();
  REQUIRE(jobs.values_size() == 4);
  const auto& pending = jobs.values(0).struct_value();
  CHECK(field(pending, "job_state").list_value().values(0).string_value() == "PENDING");
  CHECK(field(pending, "hold").bool_value());
  CHECK(field(field(pending, "time_limit").struct_value(), "infinite").bool_value());
  CHECK(field(field(pending, "start_time").struct_value(), "number").number_value() == 12'000);  // the expected start
  CHECK(field(field(pending, "array_task_id").struct_value(), "number").number_value() == 3);
  const auto& mail = field(pending, "mail_type").list_value();  // in slurmrestd's enum
  REQUIRE(mail.values_size() == 7);
  CHECK(mail.values(4).string_value() == "INVALID_DEPENDENCY");
  CHECK(mail.values(6).string_value() == "TIME=90%");
  CHECK(field(pending, "shared").list_value().values(0).string_value() == "none");
  const auto& running = jobs.values(1).struct_value();
  CHECK(field(field(running, "time_limit").struct_value(), "number").number_value() == 60);  // minutes
  CHECK(field(running, "tres_per_node").string_value() == "gres/gpu:a100:2");
  const auto& res = field(running, "job_resources").struct_value();
  const auto& alloc = field(field(res, "nodes").struct_value(), "allocation").list_value();
  REQUIRE(alloc.values_size() == 2);
  CHECK(field(field(alloc.values(1).struct_value(), "cpus").struct_value(), "count").number_value() == 4);
  CHECK(field(field(alloc.values(1).struct_value(), "memory").struct_value(), "allocated").number_value() == 1000);
  CHECK(field(running, "gres_detail").list_value().values(0).string_value() == "gpu:a100:2(IDX:0,1)");
  CHECK(field(pending, "job_resources").kind_case() == google::protobuf::Value::KIND_NOT_SET);  // none before it starts
  const auto& failed = jobs.values(2).struct_value();
  const auto& code = field(failed, "exit_code").struct_value();
  CHECK(field(code, "status").list_value().values(0).string_value() == "ERROR");
  CHECK(field(field(code, "return_code").struct_value(), "number").number_value() == 2);
  const auto& killed = field(jobs.values(3).struct_value(), "exit_code").struct_value();
  CHECK(field(killed, "status").list_value().values(0).string_value() == "SIGNALED");
  const auto& m = field(doc, "meta").struct_value();
  CHECK(field(field(m, "client").struct_value(), "user").string_value() == "alice");
  CHECK(field(field(m, "slurm").struct_value(), "cluster").string_value() == "c1");
}

TEST_CASE("REST v0.0.43: nodes and partitions - state lists with flags, CPUs and memory as the exporter adds them") {
  std::string nodes = rest_nodes_json(sample_nodes(), "", meta());
  CHECK_SHAPE("openapi_nodes_resp", nodes);
  auto doc = hq::test::parsed_json(nodes);
  const auto& list = field(doc, "nodes").list_value();
  REQUIRE(list.values_size() == 2);
  const auto& n2 = list.values(1).struct_value();
  CHECK(field(n2, "state").list_value().values_size() == 2);
  CHECK(field(n2, "state").list_value().values(0).string_value() == "MIXED");
  CHECK(field(n2, "state").list_value().values(1).string_value() == "DRAIN");
  CHECK(field(n2, "alloc_cpus").number_value() == 3);
  CHECK(field(n2, "alloc_idle_cpus").number_value() == 5);
  CHECK(field(n2, "alloc_memory").number_value() == 500);
  CHECK(field(n2, "reason").string_value() == "disk");
  CHECK(hq::test::parsed_json(rest_nodes_json(sample_nodes(), "n1", meta())).fields().at("nodes").list_value().values_size() == 1);
  std::string parts = rest_partitions_json(sample_nodes(), "", meta());
  CHECK_SHAPE("openapi_partition_resp", parts);
  auto parts_doc = hq::test::parsed_json(parts);
  const auto& p = parts_doc.fields().at("partitions").list_value().values(0).struct_value();
  CHECK(field(field(p, "cpus").struct_value(), "total").number_value() == 8);  // n1's: n2 is in no partition
  CHECK(field(field(field(p, "maximums").struct_value(), "time").struct_value(), "number").number_value() == 120);
}

TEST_CASE("REST v0.0.43: ping, diag, submit, kill, plain and error replies in their schemas") {
  CHECK_SHAPE("openapi_ping_array_resp", rest_ping_json("ctl", 12, meta()));
  RestDiag d;
  d.now = 100;
  d.sched.passes.add(1500, 3);
  d.sched.backfill.add(2500, 3);
  d.requests["submit"] = {4, 0.002};
  d.jobs_pending = 2;
  std::string diag = rest_diag_json(d, meta());
  CHECK_SHAPE("openapi_diag_resp", diag);
  auto diag_doc = hq::test::parsed_json(diag);
  const auto& stats = diag_doc.fields().at("statistics").struct_value();
  CHECK(field(stats, "schedule_cycle_last").number_value() == 1500);
  CHECK(field(stats, "bf_cycle_last").number_value() == 2500);
  CHECK(field(stats, "rpcs_by_message_type").list_value().values(0).struct_value().fields().at("count").number_value() == 4);
  CHECK_SHAPE("openapi_job_submit_response", rest_submit_json(42, {"Field job.x is not supported by hq: ignored"}, meta()));
  CHECK(hq::test::parsed_json(rest_submit_json(42, {}, meta())).fields().at("job_id").number_value() == 42);
  CHECK_SHAPE("openapi_kill_job_resp", rest_kill_json({{42, "", 0}, {43, "Invalid job id specified", 2017}}, meta()));
  CHECK_SHAPE("openapi_resp", rest_ok_json(meta(), {"w"}));
  RestError e = rest_error_of(denied("no"));
  CHECK(e.http == 403);
  CHECK(e.error_number == slurm_errno::kAccessDenied);
  CHECK_SHAPE("openapi_resp", rest_error_json({e}, meta()));
  CHECK(rest_error_of(not_found("x")).http == 404);
  CHECK(rest_error_of(invalid("x")).http == 422);
}

TEST_CASE("REST v0.0.43: job/submit's body read into a batch job's spec") {
  RestError error;
  auto r = rest_parse_submit(R"({"script": "#!/bin/sh\necho hi\n", "job": {
      "name": "train", "partition": "gpu", "account": "proj", "qos": "high",
      "current_working_directory": "/home/alice", "environment": ["PATH=/bin", "HOME=/home/alice"],
      "standard_output": "out-%j.txt", "time_limit": {"set": true, "infinite": false, "number": 90},
      "nodes": "2-4", "tasks": 8, "cpus_per_task": 2, "memory_per_node": {"set": true, "number": 4096},
      "tres_per_node": "gres/gpu:a100:2", "shared": ["none"], "hold": true, "requeue": false,
      "mail_type": ["END", "fail"], "argv": ["train.sh", "--epochs", "3"], "begin_time": 5000,
      "flags": ["KILL_INVALID_DEPENDENCY"], "dependency": "afterok:1", "array": "1-4%2",
      "comment": "c", "exotic_field": 1}})",
                            &error);
  REQUIRE_MESSAGE(r, error.description);
  const JobSpec& s = r->spec;
  CHECK(s.name == "train");
  CHECK(*s.script == "#!/bin/sh\necho hi\n");
  CHECK(s.partition == "gpu");
  CHECK(s.account == "proj");
  CHECK(s.extra->qos == "high");
  CHECK(s.workdir == "/home/alice");
  CHECK(s.env->size() == 2);
  CHECK(s.output == "out-%j.txt");
  CHECK(s.time_limit == 90 * 60);
  CHECK(s.nodes_min == 2);
  CHECK(s.nodes_max == 4);
  CHECK(s.ntasks == 8);
  CHECK(s.ntasks_set);
  CHECK(s.cpus_per_task == 2);
  CHECK(s.mem_per_node_mib == 4096);
  CHECK(s.gpus_per_node == 2);
  CHECK(s.gpu_type == "a100");
  CHECK(s.exclusive);
  CHECK(s.hold);
  CHECK(s.requeue == 0);
  CHECK(s.extra->mail_type == "END,FAIL");
  CHECK(s.argv == std::vector<std::string>{"--epochs", "3"});
  CHECK(s.begin_time == 5000);
  CHECK(s.kill_on_invalid_dep);
  CHECK(s.dependency == "afterok:1");
  CHECK(s.array == "1-4%2");
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0] == "Field job.exotic_field is not supported by hq: ignored");

  auto unlimited = rest_parse_submit(R"({"jobs": [{"script": "#!/bin/sh\n", "environment": {"A": "1"},
      "current_working_directory": "/", "time_limit": {"set": true, "infinite": true}, "memory_per_node": 0}]})",
                                     &error);
  REQUIRE_MESSAGE(unlimited, error.description);
  CHECK(unlimited->spec.time_limit == -1);
  CHECK(unlimited->spec.mem_all);
  CHECK(*unlimited->spec.env == std::vector<std::string>{"A=1"});

  // null and {"set": false} are "not given"; slurmrestd's mail names become hq's.
  auto unset = rest_parse_submit(R"({"script": "#!/bin/sh\n", "job": {"environment": ["A=1"], "current_working_directory": "/",
      "name": null, "requeue": null, "time_limit": {"set": false, "number": 5}, "mail_type": ["ALL", "TIME=90%"]}})", &error);
  REQUIRE_MESSAGE(unset, error.description);
  CHECK(unset->spec.name == "sbatch");
  CHECK(unset->spec.requeue == -1);
  CHECK(unset->spec.time_limit == kTimeUnset);
  CHECK(unset->spec.extra->mail_type.find("TIME_LIMIT_90") != std::string::npos);
  CHECK(unset->spec.extra->mail_type.find("INVALID_DEPEND") != std::string::npos);
}

TEST_CASE("REST v0.0.43: bad job/submit bodies get slurmrestd's errors, never a job") {
  struct Case {
    const char* body;
    int http, error_number;
    const char* says;
  } cases[] = {
      {"", 400, slurm_errno::kRestFailParsing, "not a JSON object"},
      {"[1,2]", 400, slurm_errno::kRestFailParsing, "not a JSON object"},
      {R"({"job": {"name": )", 400, slurm_errno::kRestFailParsing, "malformed JSON"},
      {R"({"script": "x"})", 400, slurm_errno::kRestInvalidJobsDesc, "no \"job\""},
      {R"({"job": {"tasks": "many"}})", 400, slurm_errno::kRestFailParsing, "job.tasks"},
      {R"({"job": {"tasks": 1.5}})", 400, slurm_errno::kRestFailParsing, "job.tasks"},
      {R"({"job": {"tasks": -3}})", 400, slurm_errno::kRestFailParsing, "job.tasks"},
      {R"({"job": {"nodes": "2-x"}})", 400, slurm_errno::kRestFailParsing, "job.nodes"},
      {R"({"job": {"environment": "PATH"}})", 400, slurm_errno::kRestFailParsing, "NAME=VALUE"},
      {R"({"job": {"tres_per_node": "gres/fpga:1"}})", 400, slurm_errno::kRestFailParsing, "GPUs only"},
      {R"({"job": {"shared": ["sometimes"]}})", 400, slurm_errno::kRestFailParsing, "job.shared"},
      {R"({"job": {"cpus_per_task": {"set": true, "infinite": true}}})", 400, slurm_errno::kRestFailParsing, "infinite"},
      {R"({"job": {"environment": ["A=1"], "current_working_directory": "/"}})", 422, slurm_errno::kScriptMissing, "script"},
      {R"({"script": "#!/bin/sh", "job": {"current_working_directory": "/"}})", 422, slurm_errno::kEnvironmentMissing, "environment"},
      {R"({"script": "#!/bin/sh", "job": {"environment": ["A=1"]}})", 422, slurm_errno::kMissingWorkDir, "current_working_directory"},
      {R"({"script": "#!/bin/sh", "jobs": [{}, {}]})", 422, slurm_errno::kRestInvalidJobsDesc, "one job only"},
      {R"({"jobs": 3})", 400, slurm_errno::kRestInvalidJobsDesc, "not a list"},
      {R"({"job": {"mail_type": ["BOGUS"]}})", 400, slurm_errno::kRestFailParsing, "job.mail_type"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body);
    RestError error;
    auto r = rest_parse_submit(c.body, &error);
    CHECK(!r);
    CHECK(error.http == c.http);
    CHECK(error.error_number == c.error_number);
    CHECK(error.description.find(c.says) != std::string::npos);
  }
}

TEST_CASE("REST v0.0.43: node updates - drain with a reason, resume, features and weight") {
  RestError error;
  auto drain = rest_parse_node_update(R"({"state": ["DRAIN"], "reason": "fan", "weight": {"set": true, "number": 5}})", "n1", &error);
  REQUIRE_MESSAGE(drain, error.description);
  REQUIRE(drain->requests.size() == 2);
  CHECK(drain->requests[0].action() == "drain");
  CHECK(drain->requests[0].reason() == "fan");
  CHECK(drain->requests[0].nodes() == "n1");
  CHECK(drain->requests[1].action() == "update");
  CHECK(drain->requests[1].set_weight());
  CHECK(drain->requests[1].weight() == 5);
  CHECK(!drain->requests[1].set_features());
  auto resume = rest_parse_node_update(R"({"state": "RESUME", "comment": "x"})", "n[1-2]", &error);
  REQUIRE(resume);
  CHECK(resume->requests.at(0).action() == "resume");
  CHECK(resume->warnings.at(0).find("node.comment") != std::string::npos);
  auto by_name = rest_parse_node_update(R"({"name": ["n1", "n3"], "features": "ib,nvme"})", "", &error);
  REQUIRE(by_name);
  CHECK(by_name->requests.at(0).nodes() == "n1,n3");
  CHECK(by_name->requests.at(0).features_size() == 2);
  CHECK(!rest_parse_node_update(R"({"state": ["DRAIN"]})", "n1", &error));
  CHECK(error.http == 422);
  CHECK(error.description.find("reason") != std::string::npos);
  CHECK(!rest_parse_node_update(R"({"state": ["FUTURE"]})", "n1", &error));
  CHECK(error.error_number == slurm_errno::kInvalidNodeState);
  CHECK(!rest_parse_node_update(R"({"state": ["DRAIN", "RESUME"], "reason": "x"})", "n1", &error));
  CHECK(!rest_parse_node_update(R"({"state": ["RESUME"]})", "", &error));
  CHECK(error.http == 400);
  CHECK(!rest_parse_node_update(R"({"weight": "heavy"})", "n1", &error));
  CHECK(error.http == 400);
  CHECK(!rest_parse_node_update(R"({"weight": 3000000000})", "n1", &error));  // beyond a weight's range
  auto nulls = rest_parse_node_update(R"({"state": ["DRAIN"], "reason": "x", "features": null, "weight": {"set": false}, "topology_str": null})", "n1", &error);
  REQUIRE(nulls);
  CHECK(nulls->requests.size() == 1);  // the drain alone: nothing else was given
}

TEST_CASE("HTTP paths and queries: decoded segments, traversal and bad escapes refused") {
  std::vector<std::string> p;
  REQUIRE(split_path("/slurm/v0.0.43/node/n%201/", p));
  CHECK(p == std::vector<std::string>{"slurm", "v0.0.43", "node", "n 1"});
  CHECK(!split_path("/hq/v1/../etc", p));
  CHECK(!split_path("/hq/v1/%2e%2e/x", p));
  CHECK(!split_path("/hq/v1/a%2Fb", p));
  CHECK(!split_path("/hq//v1", p));
  CHECK(!split_path("/hq/%zz", p));
  CHECK(!split_path("/hq/%0", p));
  CHECK(!split_path("relative", p));
  CHECK(query_value("signal=USR1&flags=x", "signal") == "USR1");
  CHECK(query_value("a=1&user=bob%20b", "user") == "bob b");
  CHECK(query_value("a=1", "user").empty());
}
