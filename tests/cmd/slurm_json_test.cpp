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

using namespace hq;

namespace {

std::set<std::string> lines_of(const std::string& path) {
  std::set<std::string> out;
  std::istringstream in(test::slurp_file(path));
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.insert(l);
  return out;
}

google::protobuf::Struct parsed(const std::string& json) {
  google::protobuf::Struct s;
  REQUIRE(google::protobuf::util::JsonStringToMessage(json, &s).ok());
  return s;
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
  auto root = parsed(cmd::squeue_slurm_json(q, "c1"));
  CHECK(root.fields().at("meta").struct_value().fields().at("plugin").struct_value().fields().at("type").string_value() ==
        "openapi/v0.0.38");
  const auto& job = root.fields().at("jobs").list_value().values(0).struct_value().fields();
  std::set<std::string> slurm = lines_of(test::golden_dir("squeue") + "json_job_keys.txt");
  for (const auto& [key, value] : job)
    if (key != "hq") CHECK_MESSAGE(slurm.count(key), key);
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
  auto root = parsed(cmd::sinfo_slurm_json(r));
  const auto& node = root.fields().at("nodes").list_value().values(0).struct_value().fields();
  std::set<std::string> slurm = lines_of(test::golden_dir("sinfo") + "json_node_keys.txt");
  for (const auto& [key, value] : node)
    if (key != "hq") CHECK_MESSAGE(slurm.count(key), key);
  CHECK(node.at("state").string_value() == "mixed");
  CHECK(node.at("state_flags").list_value().values(0).string_value() == "DRAIN");
  CHECK(node.at("idle_cpus").number_value() == 3);
  CHECK(node.at("partitions").list_value().values(0).string_value() == "debug");
}
