// squeue --json and sinfo --json speak Slurm 22.05's data_parser shape: every key hq prints
// for a job or a node is one Slurm prints (the lists captured from Slurm 22.05 on the
// slurm-bench, tests/fixtures/slurm/*/json_*_keys.txt), hq's own fields are under "hq", and
// the keys tools read most are there with Slurm's types.
#include <doctest/doctest.h>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <set>
#include <sstream>

#include "cmd/client/slurm_json.hpp"
#include "golden_cases.hpp"
#include "tests/json_struct.hpp"

using namespace hq;

namespace {

// A fixture's non-empty lines, in order.
std::vector<std::string> ordered_lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(test::slurp_file(path));
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

std::set<std::string> lines_of(const std::string& path) {
  auto lines = ordered_lines_of(path);
  return {lines.begin(), lines.end()};
}

// A record's keys but hq's own.
std::set<std::string> keys_of(const google::protobuf::Map<std::string, google::protobuf::Value>& record) {
  std::set<std::string> out;
  for (const auto& [key, value] : record)
    if (key != "hq") out.insert(key);
  return out;
}

}  // namespace

TEST_CASE("squeue --json: Slurm's keys and types, hq's own under hq") {
  pb::QueueReply q;
  q.set_now(1000);
  pb::Job* j = q.add_jobs();
  j->set_job_id(12);
  j->set_state("PENDING");
  j->set_reason("Priority");
  j->set_partition("debug");
  j->set_time_limit(3600);
  j->mutable_spec()->set_name(std::string("n\xff", 2));  // not UTF-8: U+FFFD in JSON
  j->mutable_spec()->set_user("alice");
  j->mutable_spec()->set_ntasks(2);
  auto root = hq::test::parsed_json(cmd::squeue_slurm_json(q, "c1"));
  CHECK(root.fields().at("meta").struct_value().fields().at("plugin").struct_value().fields().at("type").string_value() ==
        "openapi/v0.0.38");
  const auto& job = root.fields().at("jobs").list_value().values(0).struct_value().fields();
  std::set<std::string> slurm = lines_of(test::golden_dir("squeue") + "json_job_keys.txt");
  CHECK(keys_of(job) == slurm);  // every key Slurm prints, none it does not
  CHECK(job.at("job_id").number_value() == 12);
  CHECK(job.at("job_state").string_value() == "PENDING");
  CHECK(job.at("state_reason").string_value() == "Priority");
  CHECK(job.at("name").string_value() == "n\xef\xbf\xbd");
  CHECK(job.at("time_limit").number_value() == 60);  // minutes, as Slurm's
  CHECK(job.at("tasks").number_value() == 2);
  CHECK(job.at("cluster").string_value() == "c1");
  CHECK(job.at("array_task_id").kind_case() == google::protobuf::Value::kNullValue);
  CHECK(job.count("hq"));
}

TEST_CASE("sinfo --json: Slurm's node keys, state and flags") {
  pb::NodesReply r;
  pb::Node* n = r.add_nodes();
  n->set_name("n1");
  n->set_cpus(4);
  n->set_alloc_cpus(1);
  n->set_state("DRAINING");
  n->set_responding(true);
  n->add_partitions("debug");
  auto root = hq::test::parsed_json(cmd::sinfo_slurm_json(r));
  const auto& node = root.fields().at("nodes").list_value().values(0).struct_value().fields();
  std::set<std::string> slurm = lines_of(test::golden_dir("sinfo") + "json_node_keys.txt");
  CHECK(keys_of(node) == slurm);
  CHECK(node.at("state").string_value() == "mixed");
  CHECK(node.at("state_flags").list_value().values(0).string_value() == "DRAIN");
  CHECK(node.at("idle_cpus").number_value() == 3);
  CHECK(node.at("partitions").list_value().values(0).string_value() == "debug");
}

TEST_CASE("squeue --json: a running job has Slurm's keys too, TRES strings and flags, an array's pending tasks one record") {
  pb::QueueReply q;
  q.set_now(1000);
  pb::Job* run = q.add_jobs();
  run->set_job_id(1);
  run->set_state("RUNNING");
  run->set_start_time(900);
  run->mutable_spec()->set_ntasks(2);
  run->mutable_spec()->set_mem_per_node_mib(1000);
  auto* a = run->add_alloc();
  a->set_node("n1");
  a->set_cpus(2);
  a->set_mem_mib(1000);
  for (int t : {0, 3, 6, 9, 12, 15}) {
    pb::Job* task = q.add_jobs();
    task->set_job_id(static_cast<uint64_t>(10 + t));
    task->set_state("PENDING");
    task->set_array_job_id(10);
    task->set_array_task_id(t);
    task->set_array_throttle(2);
  }
  auto root = hq::test::parsed_json(cmd::squeue_slurm_json(q, "c1"));
  const auto& jobs = root.fields().at("jobs").list_value();
  REQUIRE(jobs.values_size() == 2);
  std::set<std::string> slurm = lines_of(test::golden_dir("squeue") + "json_job_keys.txt");
  const auto& running = jobs.values(0).struct_value().fields();
  CHECK(keys_of(running) == slurm);
  CHECK(running.at("tres_alloc_str").string_value() == "cpu=2,mem=1000M,node=1,billing=2");
  CHECK(running.at("tres_req_str").string_value() == "cpu=2,mem=1000M,node=1,billing=2");
  CHECK(running.at("flags").list_value().values(0).string_value() == "JOB_WAS_RUNNING");
  CHECK(running.at("shared").kind_case() == google::protobuf::Value::kNullValue);
  const auto& array = jobs.values(1).struct_value().fields();
  CHECK(array.at("array_task_string").string_value() == "0-15:3%2");  // as Slurm 22.05 wrote --array=0-15:3%2
  CHECK(array.at("array_task_id").kind_case() == google::protobuf::Value::kNullValue);
  CHECK(array.at("tres_alloc_str").string_value().empty());
}

TEST_CASE("sinfo --json: a node in a MAINT reservation has Slurm's MAINTENANCE and RESERVED flags, its TRES") {
  pb::NodesReply r;
  pb::Node* n = r.add_nodes();
  n->set_name("n1");
  n->set_cpus(2);
  n->set_mem_mib(1000);
  n->set_alloc_cpus(1);
  n->set_state("MIXED");
  n->set_responding(true);
  n->set_reservation("m1");
  n->set_maint(true);
  auto root = hq::test::parsed_json(cmd::sinfo_slurm_json(r));
  const auto& node = root.fields().at("nodes").list_value().values(0).struct_value().fields();
  const auto& flags = node.at("state_flags").list_value();  // as Slurm 22.05 printed n1's
  REQUIRE(flags.values_size() == 2);
  CHECK(flags.values(0).string_value() == "MAINTENANCE");
  CHECK(flags.values(1).string_value() == "RESERVED");
  CHECK(node.at("tres").string_value() == "cpu=2,mem=1000M,billing=2");
  CHECK(node.at("tres_used").string_value() == "cpu=1");
}

namespace {

// The keys of the first record after `start`, in order, hq's own left out: each of its lines
// is `prefix`, a key and `sep`; deeper lines, and closing brackets or list items at its
// indent, belong to a key's value.
std::vector<std::string> keys_in_order(const std::string& text, const std::string& start, const std::string& prefix,
                                       const std::string& sep) {
  std::vector<std::string> out;
  size_t at = text.find(start);
  REQUIRE(at != std::string::npos);
  size_t indent = prefix.find_first_not_of(' ');
  std::istringstream in(text.substr(at + start.size()));
  for (std::string l; std::getline(in, l);) {
    size_t n = std::min(l.find_first_not_of(' '), l.size());
    if (n > indent || (n == indent && n < l.size() && (l[n] == ']' || l[n] == '}' || l[n] == '-'))) continue;
    if (l.rfind(prefix, 0) != 0) break;
    size_t end = l.find(sep, prefix.size());
    REQUIRE(end != std::string::npos);
    std::string key = l.substr(prefix.size(), end - prefix.size());
    if (key != "hq") out.push_back(key);
  }
  return out;
}

pb::QueueReply one_running_job() {
  pb::QueueReply q;
  q.set_now(1000);
  pb::Job* run = q.add_jobs();
  run->set_job_id(7);
  run->set_state("RUNNING");
  run->set_start_time(900);
  run->mutable_spec()->set_workdir("/tmp/w");
  auto* a = run->add_alloc();
  a->set_node("n1");
  a->set_cpus(2);
  return q;
}

pb::NodesReply one_node() {
  pb::NodesReply r;
  pb::Node* n = r.add_nodes();
  n->set_name("n1");
  n->set_cpus(4);
  n->set_state("IDLE");
  n->set_responding(true);
  n->add_partitions("debug");
  return r;
}

}  // namespace

TEST_CASE("squeue/sinfo --json and --yaml: each record's keys in Slurm 22.05's order") {
  auto job_keys = ordered_lines_of(test::golden_dir("squeue") + "json_job_keys.txt");  // as Slurm wrote them
  auto node_keys = ordered_lines_of(test::golden_dir("sinfo") + "json_node_keys.txt");
  std::string json = cmd::squeue_slurm_json(one_running_job(), "c1");
  CHECK(keys_in_order(json, "\"jobs\": [\n    {\n", "      \"", "\"") == job_keys);
  std::string yaml = cmd::squeue_slurm_yaml(one_running_job(), "c1");
  CHECK(keys_in_order(yaml, "!!str jobs: !!seq\n- !!map\n", "  !!str ", ":") == job_keys);
  CHECK(keys_in_order(cmd::sinfo_slurm_json(one_node()), "\"nodes\": [\n    {\n", "      \"", "\"") == node_keys);
  CHECK(keys_in_order(cmd::sinfo_slurm_yaml(one_node()), "!!str nodes: !!seq\n- !!map\n", "  !!str ", ":") == node_keys);
  CHECK(yaml.find("!!str meta: !!map\n  !!str plugin: !!map\n    !!str type: !!str openapi/v0.0.38\n"
                  "    !!str name: !!str Slurm OpenAPI v0.0.38\n  !!str Slurm: !!map\n    !!str version: !!map\n"
                  "      !!str major: !!int 22\n      !!str micro: !!int 8\n      !!str minor: !!int 5\n"
                  "    !!str release: !!str 22.05.8\n") != std::string::npos);
}

TEST_CASE("squeue --json prints as Slurm's json-c: \\/, empty lists on two lines, floats with a point, no last newline") {
  std::string json = cmd::squeue_slurm_json(one_running_job(), "c1");
  CHECK(json.rfind("{\n  \"meta\": {\n    \"plugin\": {\n      \"type\": \"openapi\\/v0.0.38\",\n"
                   "      \"name\": \"Slurm OpenAPI v0.0.38\"\n    },\n",
                   0) == 0);
  CHECK(json.find("\n  \"errors\": [\n  ],\n  \"jobs\": [\n    {\n      \"account\": \"\",\n") != std::string::npos);
  CHECK(json.find("\n      \"billable_tres\": 2.0,\n") != std::string::npos);
  CHECK(json.find("\n      \"gres_detail\": [\n      ],\n") != std::string::npos);
  CHECK(json.find("\n      \"current_working_directory\": \"\\/tmp\\/w\",\n") != std::string::npos);
  CHECK(json.substr(json.size() - 12) == "\n    }\n  ]\n}");
  CHECK(hq::test::parsed_json(json).fields().at("jobs").list_value().values(0).struct_value().fields().at("job_id").number_value() == 7);
}
