// GPUs as a schedulable resource: GPU choice by affinity, reconciling an agent's report
// with the config, job shapes, the time map's GPU dimension, RestrictedCoresPerGPU,
// scheduler placement (typed, mixed nodes, exclusive), submit options and the job
// environment.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "builders.hpp"
#include "core/explain.hpp"
#include "core/gpu_select.hpp"
#include "core/job_env.hpp"
#include "core/job_shape.hpp"
#include "core/scheduler.hpp"
#include "core/submit_options.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;

namespace {

// Eight GPUs, 0-3 next to CPUs 0-63 and 4-7 next to 64-127 (like the h100x8 fixture).
std::vector<NodeGpu> two_socket_gpus(const std::string& type = "h100") {
  std::vector<NodeGpu> g;
  for (int i = 0; i < 8; ++i) g.push_back({type, i < 4 ? "0-63" : "64-127"});
  return g;
}

Job gpu_job(uint64_t id, int32_t gpus, const std::string& type = "") {
  Job j = JobBuilder(id).build();
  j.spec.gpus = gpus;
  j.spec.gpu_type = type;
  return j;
}

Plan run(const ClusterState& s) { return Scheduler(SchedulerConfig{}).schedule(s, 0); }

std::vector<int32_t> gpus_of(const Plan& p, uint64_t id) {
  for (const auto& st : p.starts)
    if (st.job.value == id) return st.alloc.front().gpus;
  return {};
}
bool started(const Plan& p, uint64_t id) {
  return std::any_of(p.starts.begin(), p.starts.end(), [&](const StartDecision& s) { return s.job.value == id; });
}

}  // namespace

TEST_CASE("pick_gpus: best-fit affinity group, then the fewest groups - type filter") {
  auto g = two_socket_gpus();
  std::vector<char> used(8, 0);
  CHECK(pick_gpus(g, used, 4, "") == std::vector<int32_t>{0, 1, 2, 3});
  used[0] = 1;  // socket 0 has three free: a job of 3 takes exactly them, a job of 4 the other socket
  CHECK(pick_gpus(g, used, 3, "") == std::vector<int32_t>{1, 2, 3});
  CHECK(pick_gpus(g, used, 4, "") == std::vector<int32_t>{4, 5, 6, 7});
  CHECK(pick_gpus(g, used, 6, "") == std::vector<int32_t>{1, 2, 4, 5, 6, 7});  // fuller group first
  CHECK(pick_gpus(g, used, 8, "").empty());
  CHECK(pick_gpus(g, used, 1, "a100").empty());
  CHECK(free_gpus_of_type(g, used, "h100") == 7);
  CHECK(free_gpus_of_type(g, {}, "") == 8);  // an empty mask: all free
  g[7].type = "a100";
  CHECK(pick_gpus(g, used, 1, "a100") == std::vector<int32_t>{7});
}

TEST_CASE("reconcile_gpus: found GPUs must cover the config's gres") {
  std::vector<NodeGpu> found = two_socket_gpus();
  found[7].type = "a100";
  CHECK(reconcile_gpus({}, found)->size() == 8);
  CHECK(reconcile_gpus({{"h100", 7}, {"a100", 1}}, found).is_ok());
  CHECK(reconcile_gpus({{"", 8}}, found).is_ok());
  auto short_typed = reconcile_gpus({{"h100", 8}}, found);
  REQUIRE(!short_typed);
  CHECK(short_typed.status().message() == "gres/gpu count reported lower than configured: found 7 h100, configured 8");
  CHECK(!reconcile_gpus({{"a100", 1}, {"", 8}}, found));  // the typed entry's GPU is not counted twice
  CHECK(!reconcile_gpus({}, std::vector<NodeGpu>(256)));
}

TEST_CASE("job shapes: GPUs per node, per task, in all - --cpus-per-gpu and --mem-per-gpu") {
  PartitionConfig part;
  JobSpec s;
  s.gpus = 4;
  s.cpus_per_gpu = 8;
  s.mem_per_gpu_mib = 1000;
  JobShape sh = job_shape(s, part, 1);
  CHECK(!sh.spread);
  CHECK(sh.need.gpus == 4);
  CHECK(sh.need.cpus == 32);
  CHECK(sh.need.mem == 4000);
  s = JobSpec{};
  s.nodes_min = 2;
  s.nodes_set = true;
  s.gpus = 3;  // over two nodes: two each (rounded up)
  CHECK(job_shape(s, part, 1).need.gpus == 2);
  s = JobSpec{};
  s.ntasks = 6;
  s.ntasks_set = true;
  s.gpus_per_task = 1;
  s.cpus_per_task = 2;
  sh = job_shape(s, part, 1);
  CHECK(sh.spread);
  CHECK(sh.need.gpus == 1);
  CHECK(sh.need.cpus == 2);
  s.gpus_per_task = 0;
  s.gpus = 2;  // --gpus without -N keeps the job on one node
  sh = job_shape(s, part, 1);
  CHECK(!sh.spread);
  CHECK(sh.need.gpus == 2);
  CHECK(sh.need.cpus == 12);
}

TEST_CASE("time map: GPUs bound units - restricted CPUs are kept from CPU-only jobs while GPUs idle") {
  TimeMap map(100);
  int32_t n = map.add_node(0, 16, 16000, 16, 16000, 4, 4, 2);
  map.finalize();
  UnitNeed per_gpu{.cpus = 1, .max_units = 16, .gpus = 1};
  CHECK(map.units_at(n, per_gpu, 0) == 4);
  UnitNeed cpu_only{.cpus = 1, .max_units = 16};
  CHECK(map.units_at(n, cpu_only, 0) == 8);  // 16 CPUs less 2 for each of 4 idle GPUs
  map.take(n, 0, 10, 2, 0, 3);               // a GPU job holds 3 GPUs for 10 slots
  CHECK(map.units_at(n, per_gpu, 0) == 1);
  CHECK(map.units_at(n, per_gpu, 10) == 4);
  CHECK(map.units_at(n, cpu_only, 0) == 12);  // 14 free, 2 kept for the one idle GPU
  UnitNeed whole{.cpus = 1, .whole_node = true};
  CHECK(map.units_at(n, whole, 0) == 0);
  CHECK(map.units_at(n, whole, 10) == 1);
}

TEST_CASE("scheduler: GPU jobs get disjoint GPUs - a job for more GPUs than are free waits") {
  auto s = cluster("g1", 16);
  s.nodes.at("g1").gpus = two_socket_gpus();
  apply(s, JobSubmitted{gpu_job(1, 4)});
  apply(s, JobSubmitted{gpu_job(2, 4)});
  apply(s, JobSubmitted{gpu_job(3, 1)});
  Plan p = run(s);
  CHECK(gpus_of(p, 1) == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(gpus_of(p, 2) == std::vector<int32_t>{4, 5, 6, 7});
  CHECK(!started(p, 3));
  // Once started, the node's state keeps them: the next pass gives job 3 nothing either.
  for (const auto& st : p.starts) apply(s, JobStarted{st.job, 0, st.alloc, st.partition});
  CHECK(s.nodes.at("g1").alloc_gpus == 8);
  CHECK(node_gres_used(s.nodes.at("g1")) == "gpu:h100:8(IDX:0-7)");
  CHECK(!started(run(s), 3));
  auto why = explain_job(s, s.jobs.at(JobId{3}), 0, 10);
  CHECK(std::any_of(why.begin(), why.end(), [](const std::string& l) { return l.find("busy: needs 1 GPU(s), 0 of 8 GPUs free") != std::string::npos; }));
  apply(s, JobEnded{JobId{1}, 10, JobState::kCompleted, 0, 0});
  CHECK(gpus_of(run(s), 3) == std::vector<int32_t>{0});
}

TEST_CASE("scheduler: typed requests go to nodes of that type - mixed nodes count by type") {
  auto s = cluster("g[1-2]", 16);
  s.nodes.at("g1").gpus = two_socket_gpus("a100");
  auto mixed = two_socket_gpus("a100");
  mixed[6].type = mixed[7].type = "h100";
  s.nodes.at("g2").gpus = mixed;
  apply(s, JobSubmitted{gpu_job(1, 2, "h100")});
  apply(s, JobSubmitted{gpu_job(2, 1, "h100")});
  Plan p = run(s);
  CHECK(p.starts.size() == 1);
  CHECK(p.starts.front().alloc.front().node == "g2");
  CHECK(gpus_of(p, 1) == std::vector<int32_t>{6, 7});
  CHECK(!started(p, 2));  // g2 still has six free GPUs, but none is an h100
}

TEST_CASE("scheduler: CPU-only jobs leave restricted cores - exclusive jobs take every GPU") {
  auto s = cluster("g1", 16);
  Node& g1 = s.nodes.at("g1");
  g1.gpus = two_socket_gpus();
  g1.restricted_cpus_per_gpu = 1;
  Job wide = JobBuilder(1).tasks(10).build();
  apply(s, JobSubmitted{wide});
  CHECK(!started(run(s), 1));  // 16 CPUs less 8 kept for 8 idle GPUs
  Job fits = JobBuilder(2).tasks(8).build();
  apply(s, JobSubmitted{fits});
  Plan p = run(s);
  CHECK(started(p, 2));
  auto t = cluster("g1", 16);
  t.nodes.at("g1").gpus = two_socket_gpus();
  apply(t, JobBuilder(3).exclusive());
  p = run(t);
  REQUIRE(started(p, 3));
  CHECK(p.starts.front().alloc.front().gpus.size() == 8);
}

TEST_CASE("submit options: --gpus, --gres, per node and per task - errors are named") {
  SubmitRequest req;
  REQUIRE(apply_submit_options({"--gpus=h100:4", "--cpus-per-gpu=8", "--mem-per-gpu=10G"}, req, nullptr).is_ok());
  CHECK(req.spec.gpus == 4);
  CHECK(req.spec.gpu_type == "h100");
  CHECK(req.spec.cpus_per_gpu == 8);
  CHECK(req.spec.mem_per_gpu_mib == 10240);
  REQUIRE(apply_submit_options({"--gres=gpu:a100:2"}, req, nullptr).is_ok());
  CHECK(req.spec.gpus == 0);
  CHECK(req.spec.gpus_per_node == 2);
  CHECK(req.spec.gpu_type == "a100");
  REQUIRE(apply_submit_options({"--gres=gpu"}, req, nullptr).is_ok());
  CHECK(req.spec.gpus_per_node == 1);
  CHECK(req.spec.gpu_type.empty());
  REQUIRE(apply_submit_options({"-G", "2"}, req, nullptr).is_ok());
  CHECK(req.spec.gpus == 2);
  REQUIRE(apply_submit_options({"--gpus-per-task=1"}, req, nullptr).is_ok());
  CHECK(req.spec.gpus_per_task == 1);
  CHECK(req.spec.gpus == 0);
  CHECK(!apply_submit_options({"--gpus=h100:x"}, req, nullptr).is_ok());
  CHECK(!apply_submit_options({"--gres=fpga:1"}, req, nullptr).is_ok());
  JobSpec spec;
  spec.script = "#!/bin/sh\n";
  spec.cpus_per_gpu = 4;
  CHECK(validate_spec(spec).message().find("needs a GPU count") != std::string::npos);
  spec.cpus_per_gpu = 0;
  spec.gpus = 1;
  spec.gpus_per_node = 1;
  CHECK(!validate_spec(spec));
  spec.gpus_per_node = 0;
  spec.gpu_type = "a:b";
  CHECK(!validate_spec(spec));
}

TEST_CASE("job environment: vendor ordinals in PCI order, node indices in SLURM_JOB_GPUS") {
  std::vector<Gpu> node(4);
  node[0].vendor = node[1].vendor = GpuVendor::kNvidia;
  node[2].vendor = node[3].vendor = GpuVendor::kAmd;
  Job job = JobBuilder(7).build();
  job.spec.gpus = 2;
  LaunchContext ctx{"g1", "c", "g1", 0, 4, {1, 3}, &node, false};
  std::map<std::string, std::string> env;
  for (const auto& kv : job_environment(job, ctx)) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  CHECK(env["SLURM_JOB_GPUS"] == "1,3");
  CHECK(env["SLURM_GPUS_ON_NODE"] == "2");
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "1");
  CHECK(env["ROCR_VISIBLE_DEVICES"] == "1");  // the second AMD GPU
  CHECK(env["GPU_DEVICE_ORDINAL"] == "1");
  CHECK(env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID");
  ctx.gpus_renumbered = true;  // devices confined: the job sees only its own, from 0
  env.clear();
  for (const auto& kv : job_environment(job, ctx)) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  CHECK(env["CUDA_VISIBLE_DEVICES"] == "0");
  CHECK(env["ROCR_VISIBLE_DEVICES"] == "0");
  CHECK(env["SLURM_JOB_GPUS"] == "1,3");
  ctx.gpus.clear();
  env.clear();
  for (const auto& kv : job_environment(job, ctx)) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  CHECK(env.count("CUDA_VISIBLE_DEVICES") == 0);
}

TEST_CASE("step GPU environment: node ordinals, the job's when its group hides the node's others, the step's own when its group hides the job's others too") {
  std::vector<Gpu> node(4);
  for (auto& g : node) g.vendor = GpuVendor::kNvidia;
  std::vector<int32_t> job_gpus{1, 2, 3}, step{3};
  auto env_of = [&](bool renumbered, const std::vector<int32_t>& visible) {
    std::map<std::string, std::string> env;
    for (const auto& kv : step_gpu_environment(job_gpus, step, &node, renumbered, visible))
      env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    return env;
  };
  auto open = env_of(false, job_gpus);  // nothing confined: the node's own numbering
  CHECK(open["CUDA_VISIBLE_DEVICES"] == "3");
  CHECK(open["SLURM_JOB_GPUS"] == "1,2,3");
  CHECK(open["SLURM_STEP_GPUS"] == "3");
  auto job_confined = env_of(true, job_gpus);  // the job sees GPUs 1-3 as 0-2
  CHECK(job_confined["CUDA_VISIBLE_DEVICES"] == "2");
  auto step_confined = env_of(true, step);  // the step sees only its own GPU, as 0
  CHECK(step_confined["CUDA_VISIBLE_DEVICES"] == "0");
  CHECK(step_confined["SLURM_JOB_GPUS"] == "1,2,3");
  CHECK(step_confined["SLURM_GPUS_ON_NODE"] == "1");
}
