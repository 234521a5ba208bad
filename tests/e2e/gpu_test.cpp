// End to end: GPU scheduling on a local cluster whose agent probes a fake 8x H100 tree
// (tests/fixtures/hw/h100x8): disjoint GPU sets and their environment, GPUs in the node
// views, submit-time rejection, a node that finds fewer GPUs than configured, and a step's
// tasks on each node of a job seeing that node's GPUs.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "steps_fixture.hpp"

using namespace hq::test;

namespace {

const char* const kH100 = "gres = \"gpu:nvidia_h100_80gb_hbm3:8\"\n";

// A fake hardware tree for agents to probe (HQ_PROBE_ROOT).
std::string hw_fixture(const std::string& name) { return std::string(HQ_SOURCE_DIR) + "/tests/fixtures/hw/" + name; }

std::set<int> int_set(const std::string& csv) {
  std::set<int> out;
  std::stringstream in(csv);
  for (std::string x; std::getline(in, x, ',');)
    if (!x.empty()) out.insert(std::stoi(x));
  return out;
}

// The first line of a file, without its newline.
std::string first_line(const std::string& path) {
  std::string text = slurp(path);
  return text.substr(0, text.find('\n'));
}

}  // namespace

TEST_CASE("e2e: two --gpus=4 jobs on an 8-GPU node get disjoint GPUs, local to one socket each") {
  ScopedEnv root("HQ_PROBE_ROOT", hw_fixture("h100x8"));
  LocalCluster c(1, 8, 20, "", "", kH100);
  REQUIRE(c.ready());
  std::string out = c.dir() + "/gpu-%j.out";
  std::string wrap = "--wrap 'echo \"$CUDA_VISIBLE_DEVICES|$SLURM_JOB_GPUS|$SLURM_GPUS_ON_NODE|$CUDA_DEVICE_ORDER\"; " +
                     until_file("go") + "'";
  std::string a = c.submit("--gpus=4 -c 2 -o " + out + " " + wrap);
  std::string b = c.submit("--gres=gpu:nvidia_h100_80gb_hbm3:4 -c 2 -o " + out + " " + wrap);
  REQUIRE(c.wait_state(a, "RUNNING", 10));
  REQUIRE(c.wait_state(b, "RUNNING", 10));
  std::string third = c.submit("--gpus-per-node=1 --wrap true");
  REQUIRE(c.wait_considered(third, 10));
  CHECK(c.state(third) == "PENDING");  // 4 CPUs are free, but no GPU

  auto node = c.hq("show node e1");
  CHECK(node.out.find("Gres=gpu:nvidia_h100_80gb_hbm3:8") != std::string::npos);
  CHECK(node.out.find("GresUsed=gpu:nvidia_h100_80gb_hbm3:8(IDX:0-7)") != std::string::npos);
  CHECK(node.out.find("AllocTRES=cpu=4,mem=0M,gres/gpu=8") != std::string::npos);
  auto nodes = c.hq("nodes");
  CHECK(nodes.out.find("GPUS(USED/TOTAL)") != std::string::npos);
  CHECK(nodes.out.find("nvidia_h100_80gb_hbm3:8/8") != std::string::npos);
  auto job = c.hq("show job " + a);
  CHECK(job.out.find("TresPerJob=gres/gpu:4") != std::string::npos);

  c.release("go");
  REQUIRE(c.wait_state(a, "COMPLETED", 15));
  REQUIRE(c.wait_state(b, "COMPLETED", 15));
  REQUIRE(c.wait_state(third, "COMPLETED", 15));
  std::string la = first_line(c.dir() + "/gpu-" + a + ".out");
  std::string lb = first_line(c.dir() + "/gpu-" + b + ".out");
  INFO("job a: " << la << "  job b: " << lb);
  auto fields = [](const std::string& line) {
    std::vector<std::string> f;
    std::stringstream in(line);
    for (std::string x; std::getline(in, x, '|');) f.push_back(x);
    f.resize(4);
    return f;
  };
  auto fa = fields(la), fb = fields(lb);
  std::set<int> ga = int_set(fa[0]), gb = int_set(fb[0]);
  CHECK(ga.size() == 4);
  CHECK(gb.size() == 4);
  std::set<int> both;
  std::set_union(ga.begin(), ga.end(), gb.begin(), gb.end(), std::inserter(both, both.end()));
  CHECK(both == std::set<int>{0, 1, 2, 3, 4, 5, 6, 7});
  // GPUs 0-3 sit next to CPUs 0-63 and 4-7 next to 64-127: each job keeps to one socket.
  CHECK((ga == std::set<int>{0, 1, 2, 3} || ga == std::set<int>{4, 5, 6, 7}));
  CHECK(fa[1] == fa[0]);  // one vendor in PCI order: ordinals are node indices
  CHECK(fa[2] == "4");
  CHECK(fa[3] == "PCI_BUS_ID");

  auto too_many = c.hq("submit --gpus=9 --wrap true");
  CHECK(too_many.rc != 0);
  CHECK(too_many.out.find("GPU") != std::string::npos);
  auto wrong_type = c.hq("submit --gres=gpu:nvidia_a100:1 --wrap true");
  CHECK(wrong_type.rc != 0);
  CHECK(wrong_type.out.find("nvidia_a100") != std::string::npos);
}

TEST_CASE("e2e: a node whose agent finds fewer GPUs than its gres says goes DOWN with the reason") {
  ScopedEnv root("HQ_PROBE_ROOT", hw_fixture("a100x4"));
  LocalCluster c(1, 4, 20, "", "", "gres = \"gpu:8\"\n");
  REQUIRE(c.ready());
  auto node = c.hq("show node e1");
  CHECK(node.out.find("State=DOWN") != std::string::npos);
  CHECK(node.out.find("gres/gpu count reported lower than configured: found 4 GPU(s), configured 8") !=
        std::string::npos);
}

TEST_CASE("e2e: a step's tasks on each node of a job see that node's own GPUs, not the first node's") {
  ScopedEnv root("HQ_PROBE_ROOT", hw_fixture("h100x8"));
  LocalCluster c(2, 8, 20, "", "", kH100);
  REQUIRE(c.ready());
  // A job on e2 alone takes 3 of its GPUs, so the 2-node job's GPUs differ between its nodes.
  std::string hold = c.submit("-w e2 --gpus-per-node=3 -c 2 -o " + c.dir() + "/hold.out --wrap 'echo $SLURM_JOB_GPUS; " +
                              until_file("go") + "'");
  REQUIRE(c.wait_state(hold, "RUNNING", 15));
  std::string id = submit_steps(c, "-N2 --gpus-per-node=2 -c 2 -o gpus-%j.out",
                                "echo batch $SLURM_JOB_GPUS $SLURMD_NODENAME $SLURM_JOB_NODELIST\n"
                                "srun -N2 -n2 sh -c 'echo task $SLURMD_NODENAME $SLURM_JOB_GPUS $SLURM_GPUS_ON_NODE' | sort\n");
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  c.release("go");
  std::string held = first_line(c.dir() + "/hold.out");
  std::string out = slurp(c.dir() + "/gpus-" + id + ".out");
  INFO("held on e2: " << held << "\n" << out);
  auto value = [&](const std::string& head) {
    size_t at = out.find(head);
    if (at == std::string::npos) return std::string();
    at += head.size();
    return out.substr(at, out.find(' ', at) - at);
  };
  std::string batch = out.substr(6, out.find('\n') - 6);
  std::set<int> on_e1 = int_set(value("task e1 ")), on_e2 = int_set(value("task e2 "));
  CHECK(on_e1 == int_set(batch));  // the first node's: the batch script's
  CHECK(on_e2.size() == 2);
  for (int g : int_set(held)) CHECK(on_e2.count(g) == 0);  // e2's own, not the held job's
  CHECK(out.find("task e2 " + value("task e2 ") + " 2\n") != std::string::npos);
}

TEST_CASE("e2e: srun --gpus inside a job - concurrent steps get disjoint GPUs of the job's - more than the job has is refused") {
  ScopedEnv root("HQ_PROBE_ROOT", hw_fixture("h100x8"));
  LocalCluster c(1, 8, 20, "", "", kH100);
  REQUIRE(c.ready());
  // Each step holds its GPUs until both run (a bounded wait), so they surely overlap.
  std::string show = "sh -c 'echo $0 $SLURM_STEP_GPUS $SLURM_JOB_GPUS $SLURM_GPUS_ON_NODE; touch $0.up; "
                     "for i in $(seq 300); do [ -e A.up ] && [ -e B.up ] && break; sleep 0.05; done'";
  std::string id = submit_steps(c, "--gpus=4 -c 4 -o steps-%j.out",
                                "srun --exact -n1 -c1 --gpus=1 " + show + " A &\n" +
                                "srun --exact -n1 -c1 --gpus=2 " + show + " B &\n" +
                                "wait\nsrun --gpus=5 true; echo \"too many rc=$?\"\n" +
                                "srun -n1 sh -c 'echo all $SLURM_STEP_GPUS'\n");
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  std::string out = slurp(c.dir() + "/steps-" + id + ".out");
  INFO(out);
  auto fields = [&](const std::string& head) {
    size_t at = out.find(head + " ");
    std::vector<std::string> f;
    if (at == std::string::npos) return f;
    std::stringstream in(out.substr(at, out.find('\n', at) - at));
    for (std::string x; in >> x;) f.push_back(x);
    return f;
  };
  auto a = fields("A"), b = fields("B"), all = fields("all");
  REQUIRE(a.size() == 4);
  REQUIRE(b.size() == 4);
  REQUIRE(all.size() == 2);
  std::set<int> job = int_set(a[2]), ga = int_set(a[1]), gb = int_set(b[1]);
  CHECK(job.size() == 4);
  CHECK(int_set(b[2]) == job);
  CHECK(ga.size() == 1);
  CHECK(gb.size() == 2);
  CHECK(a[3] == "1");
  CHECK(b[3] == "2");
  for (int g : ga) CHECK((job.count(g) == 1 && gb.count(g) == 0));  // the job's, not the other step's
  for (int g : gb) CHECK(job.count(g) == 1);
  CHECK(out.find("srun: error: Unable to create step for job " + id + ": Invalid generic resource (gres) specification") !=
        std::string::npos);
  CHECK(out.find("too many rc=1") != std::string::npos);
  CHECK(int_set(all[1]) == job);  // a step that asks for none gets all of them
}
