// sacct --json/--yaml: every key Slurm 22.05's sacct --json writes for a job with a batch
// script and a step, in its order and at its depth (compared with the text Slurm printed on
// the slurm-bench with slurmdbd, tests/fixtures/slurm/sacct/json_*.json), and the values
// tools read: exit codes (SUCCESS, FAILED with its code, SIGNALED with the signal), array
// ids, states, steps' ids, TRES lists.
#include <doctest/doctest.h>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <sstream>
#include <vector>

#include "cmd/client/sacct_json.hpp"
#include "golden_cases.hpp"
#include "tests/json_struct.hpp"

using namespace hq;
using google::protobuf::Struct;

namespace {

// Each key's path ("jobs/steps/nodes/list") in the order its first line comes in a json-c
// pretty text: a key's depth is its indent, lists add no key; hq's own keys left out.
std::vector<std::string> key_paths(const std::string& json) {
  std::vector<std::string> out, at_depth;
  std::istringstream in(json);
  for (std::string line; std::getline(in, line);) {
    size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    size_t depth = indent / 2;
    at_depth.resize(depth + 1);
    at_depth[depth].clear();
    if (line[indent] != '"') continue;
    size_t end = line.find("\": ", indent);
    if (end == std::string::npos) continue;
    at_depth[depth] = line.substr(indent + 1, end - indent - 1);
    std::string path;
    for (const auto& k : at_depth)
      if (!k.empty()) path += (path.empty() ? "" : "/") + k;
    if (path.find("hq") == std::string::npos && std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

pb::Job ran_job(uint64_t id, int32_t code, int32_t sig) {
  pb::Job j;
  j.set_job_id(id);
  j.set_state(code || sig ? "FAILED" : "COMPLETED");
  j.set_partition("debug");
  j.set_submit_time(1000), j.set_eligible_time(1000), j.set_start_time(1001), j.set_end_time(1003);
  j.set_exit_code(code), j.set_exit_signal(sig);
  j.set_nodelist("n1");
  auto* a = j.add_alloc();
  a->set_node("n1"), a->set_cpus(2), a->set_mem_mib(1000);
  j.mutable_spec()->set_name("ok"), j.mutable_spec()->set_account("root"), j.mutable_spec()->set_workdir("/tmp/w");
  j.mutable_spec()->set_ntasks(2);
  return j;
}

pb::StepRecord step_of(const pb::Job& j) {
  pb::StepRecord s;
  s.set_job_id(j.job_id()), s.set_step_id(0), s.set_name("true"), s.set_state("COMPLETED");
  s.set_nodelist("n1"), s.set_ntasks(1), s.set_ncpus(1), s.set_nnodes(1);
  s.set_start_time(1002), s.set_end_time(1002), s.set_distribution("Cyclic");
  return s;
}

const google::protobuf::Map<std::string, google::protobuf::Value>& job_at(const Struct& root, int i) {
  return root.fields().at("jobs").list_value().values(i).struct_value().fields();
}

}  // namespace

TEST_CASE("sacct --json: a job with its batch script and a step has Slurm's keys, in Slurm's order and places") {
  pb::Job job = ran_job(7, 0, 0);
  pb::StepRecord step = step_of(job);
  std::string json = cmd::sacct_slurm_json({{&job, {&step}, ""}}, "c1", 2000, true);
  auto slurm = key_paths(test::slurp_file(test::golden_dir("sacct") + "json_job_with_steps.json"));
  CHECK(key_paths(json) == slurm);
  REQUIRE(slurm.size() > 80);  // the fixture's own paths, so the comparison means something
  pb::Job killed = ran_job(8, 0, 9);
  auto signaled = key_paths(test::slurp_file(test::golden_dir("sacct") + "json_job_signaled.json"));
  CHECK(key_paths(cmd::sacct_slurm_json({{&killed, {}, ""}}, "c1", 2000, true)) == signaled);
}

TEST_CASE("sacct --json: exit codes, states, array ids, steps and TRES as tools read them") {
  pb::Job ok = ran_job(7, 0, 0), failed = ran_job(8, 3, 0), killed = ran_job(9, 0, 9);
  pb::Job task = ran_job(12, 0, 0);
  task.set_array_job_id(10), task.set_array_task_id(2);
  pb::Job held = ran_job(10, 0, 0);
  held.set_array_job_id(10), held.set_array_task_id(3), held.set_start_time(0), held.set_state("CANCELLED by 0");
  pb::StepRecord step = step_of(ok);
  auto root = hq::test::parsed_json(cmd::sacct_slurm_json({{&ok, {&step}, ""}, {&failed, {}, ""}, {&killed, {}, ""}, {&task, {}, ""},
                                            {&held, {}, "3-5"}},
                                           "c1", 2000, true));
  CHECK(root.fields().at("meta").struct_value().fields().at("plugin").struct_value().fields().at("type").string_value() ==
        "openapi/dbv0.0.38");
  const auto& first = job_at(root, 0);
  CHECK(first.at("exit_code").struct_value().fields().at("status").string_value() == "SUCCESS");
  CHECK(first.at("state").struct_value().fields().at("current").string_value() == "COMPLETED");
  CHECK(first.at("time").struct_value().fields().at("elapsed").number_value() == 2);
  const auto& steps = first.at("steps").list_value();
  REQUIRE(steps.values_size() == 2);
  CHECK(steps.values(0).struct_value().fields().at("step").struct_value().fields().at("id").string_value() == "batch");
  CHECK(steps.values(1).struct_value().fields().at("step").struct_value().fields().at("id").number_value() == 0);
  CHECK(steps.values(1).struct_value().fields().at("task").struct_value().fields().at("distribution").string_value() ==
        "Cyclic");
  const auto& alloc = first.at("tres").struct_value().fields().at("allocated").list_value();
  REQUIRE(alloc.values_size() >= 2);
  CHECK(alloc.values(0).struct_value().fields().at("type").string_value() == "cpu");
  CHECK(alloc.values(0).struct_value().fields().at("count").number_value() == 2);
  const auto& bad = job_at(root, 1).at("exit_code").struct_value().fields();
  CHECK(bad.at("status").string_value() == "FAILED");
  CHECK(bad.at("return_code").number_value() == 3);
  const auto& sig = job_at(root, 2).at("exit_code").struct_value().fields();
  CHECK(sig.at("status").string_value() == "SIGNALED");
  CHECK(sig.at("signal").struct_value().fields().at("signal_id").number_value() == 9);
  const auto& array = job_at(root, 3).at("array").struct_value().fields();
  CHECK(array.at("job_id").number_value() == 10);
  CHECK(array.at("task_id").number_value() == 2);
  const auto& rest = job_at(root, 4);
  CHECK(rest.at("array").struct_value().fields().at("task").string_value() == "3-5");
  CHECK(rest.at("state").struct_value().fields().at("current").string_value() == "CANCELLED");
  CHECK(rest.at("kill_request_user").string_value() == "root");
  CHECK(rest.at("steps").list_value().values_size() == 0);  // it never started: no batch script
  auto no_steps = hq::test::parsed_json(cmd::sacct_slurm_json({{&ok, {&step}, ""}}, "c1", 2000, false));  // -X
  CHECK(job_at(no_steps, 0).at("steps").list_value().values_size() == 0);
}

TEST_CASE("sacct --yaml: the same records in Slurm's YAML") {
  pb::Job job = ran_job(7, 3, 0);
  std::string yaml = cmd::sacct_slurm_yaml({{&job, {}, ""}}, "c1", 2000, true);
  CHECK(yaml.rfind("%YAML 1.1\n--- !!map\n!!str meta: !!map\n  !!str plugin: !!map\n"
                   "    !!str type: !!str openapi/dbv0.0.38\n",
                   0) == 0);
  CHECK(yaml.find("\n!!str jobs: !!seq\n- !!map\n  !!str account: !!str root\n  !!str comment: !!map\n") !=
        std::string::npos);
  CHECK(yaml.find("\n  !!str exit_code: !!map\n    !!str status: !!str FAILED\n    !!str return_code: !!int 3\n") !=
        std::string::npos);
}
