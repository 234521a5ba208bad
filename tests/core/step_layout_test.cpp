// plan_step: the layouts, warnings and errors real Slurm 22.05 gives inside a 3-node x
// 2-CPU allocation (tests/fixtures/slurm/steps-inside-allocation.golden). Inside a batch
// job srun reads SLURM_NNODES=3 as -N3 and, for `sbatch -n6`, SLURM_NTASKS=6 as -n6.
#include <doctest/doctest.h>

#include "core/step_layout.hpp"

using namespace hq;

namespace {

std::vector<NodeAlloc> three_by_two() { return {{"n1", 2, 0, 2, {}}, {"n2", 2, 0, 2, {}}, {"n3", 2, 0, 2, {}}}; }

StepRequest in_batch(int32_t ntasks) {
  StepRequest r;
  r.nodes_min = 3;  // SLURM_NNODES
  r.ntasks = ntasks;
  return r;
}

Result<StepLayout> plan(const StepRequest& r, const std::map<std::string, int32_t>& busy = {}) {
  return plan_step(three_by_two(), busy, r, 1);
}

// "n1:0,1 n2:2 n3:3"
std::string tasks_of(const StepLayout& l) {
  std::string out;
  for (const StepNode& n : l.nodes) {
    if (!out.empty()) out += ' ';
    out += n.name;
    out += ':';
    for (size_t i = 0; i < n.tasks.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(n.tasks[i]);
    }
  }
  return out;
}

std::string cpus_of(const StepLayout& l) {
  std::string out;
  for (const StepNode& n : l.nodes) {
    if (!out.empty()) out += ' ';
    out += std::to_string(n.cpus);
  }
  return out;
}

}  // namespace

TEST_CASE("step layout: -n4 on 3 nodes is block by default - -m cyclic deals round-robin") {
  auto block = plan(in_batch(4));
  REQUIRE(block.is_ok());
  CHECK(tasks_of(*block) == "n1:0,1 n2:2 n3:3");
  CHECK(tasks_per_node(*block) == "2,1(x2)");
  CHECK(distribution_name(block->distribution) == "block");
  CHECK(block->warnings.empty());
  StepRequest r = in_batch(4);
  r.distribution = TaskDistribution::kCyclic;
  auto cyclic = plan(r);
  REQUIRE(cyclic.is_ok());
  CHECK(tasks_of(*cyclic) == "n1:0,3 n2:1 n3:2");
}

TEST_CASE("step layout: fewer tasks than nodes warns and uses fewer nodes, cyclic, with every job CPU there") {
  auto two = plan(in_batch(2));
  REQUIRE(two.is_ok());
  CHECK(tasks_of(*two) == "n1:0 n2:1");
  REQUIRE(two->warnings.size() == 1);
  CHECK(two->warnings[0] == "can't run 2 processes on 3 nodes, setting nnodes to 2");
  CHECK(distribution_name(two->distribution) == "cyclic");
  CHECK(cpus_of(*two) == "2 2");  // not --exact: SLURM_CPUS_ON_NODE=2
  StepRequest exact = in_batch(2);
  exact.exact = true;
  auto e = plan(exact);
  REQUIRE(e.is_ok());
  CHECK(cpus_of(*e) == "1 1");
  StepRequest one;
  one.nodes_min = 2;
  one.ntasks = 1;
  auto o = plan(one);
  REQUIRE(o.is_ok());
  CHECK(o->warnings.at(0) == "can't run 1 processes on 2 nodes, setting nnodes to 1");
  CHECK(tasks_of(*o) == "n1:0");
}

TEST_CASE("step layout: the allocation's 6 tasks, --ntasks-per-node and -c") {
  auto six = plan(in_batch(6));
  REQUIRE(six.is_ok());
  CHECK(tasks_of(*six) == "n1:0,1 n2:2,3 n3:4,5");
  CHECK(tasks_per_node(*six) == "2(x3)");
  StepRequest per_node;
  per_node.nodes_min = 3;
  per_node.ntasks_per_node = 2;
  auto p = plan(per_node);
  REQUIRE(p.is_ok());
  CHECK(p->ntasks == 6);
  CHECK(tasks_of(*p) == "n1:0,1 n2:2,3 n3:4,5");
  StepRequest c2 = in_batch(3);
  c2.cpus_per_task = 2;
  c2.cpus_per_task_set = true;
  auto c = plan(c2);
  REQUIRE(c.is_ok());
  CHECK(tasks_of(*c) == "n1:0 n2:1 n3:2");
  CHECK(cpus_of(*c) == "2 2 2");
  // -n4 --ntasks-per-node=1 cannot hold the maximum on 3 nodes: Slurm 22.05 runs it anyway.
  StepRequest over = in_batch(4);
  over.ntasks_per_node = 1;
  CHECK(plan(over).is_ok());
}

TEST_CASE("step layout: requests the allocation can never hold are refused with Slurm's words") {
  StepRequest four;
  four.nodes_min = 4;
  auto n4 = plan(four);
  REQUIRE_FALSE(n4.is_ok());
  CHECK(n4.status().code() == Code::kInvalid);
  CHECK(n4.status().message() == "Only allocated 3 nodes asked for 4");
  auto n7 = plan(in_batch(7));
  REQUIRE_FALSE(n7.is_ok());
  CHECK(n7.status().message() == "Unable to create step for job 1: More processors requested than permitted");
  StepRequest excluded = in_batch(6);
  excluded.exclude = {"n1"};
  auto x = plan(excluded);
  REQUIRE_FALSE(x.is_ok());
  CHECK(x.status().message() == "Only allocated 2 nodes asked for 3\nAre required nodes explicitly excluded?");
  StepRequest stranger = in_batch(1);
  stranger.nodes_min = 1;
  stranger.nodelist = {"n9"};
  CHECK_FALSE(plan(stranger).is_ok());
  StepRequest bad = in_batch(1);
  bad.cpus_per_task = 0;
  CHECK_FALSE(plan(bad).is_ok());
}

TEST_CASE("step layout: -w puts its nodes in the step - -O allows more tasks than CPUs") {
  StepRequest on3;
  on3.nodes_min = 1;
  on3.nodelist = {"n3"};
  auto w = plan(on3);
  REQUIRE(w.is_ok());
  CHECK(tasks_of(*w) == "n3:0");
  StepRequest many;
  many.nodes_min = 1;
  many.ntasks = 5;
  many.overcommit = true;
  auto o = plan(many);
  REQUIRE(o.is_ok());
  CHECK(tasks_of(*o) == "n1:0,1,2,3,4");
}

TEST_CASE("step layout: steps do not share CPUs unless one overlaps - a busy step waits") {
  std::map<std::string, int32_t> whole_step{{"n1", 2}, {"n2", 2}, {"n3", 2}};  // a default step runs
  auto again = plan(in_batch(3), whole_step);
  REQUIRE_FALSE(again.is_ok());
  CHECK(again.status().code() == Code::kUnavailable);
  CHECK(again.status().message() == "Requested nodes are busy");
  StepRequest overlap = in_batch(3);
  overlap.overlap = true;
  CHECK(plan(overlap, whole_step).is_ok());
  // --exact steps take free CPUs: with n1 half used, a 1-task step still fits there; with
  // n1 full it goes to n2; a whole-node step needs a node nobody uses.
  StepRequest small;
  small.nodes_min = 1;
  small.ntasks = 1;
  small.exact = true;
  auto half = plan(small, {{"n1", 1}});
  REQUIRE(half.is_ok());
  CHECK(tasks_of(*half) == "n1:0");
  CHECK(cpus_of(*half) == "1");
  auto full = plan(small, {{"n1", 2}});
  REQUIRE(full.is_ok());
  CHECK(tasks_of(*full) == "n2:0");
  StepRequest whole;
  whole.nodes_min = 1;
  auto w = plan(whole, {{"n1", 1}});
  REQUIRE(w.is_ok());
  CHECK(tasks_of(*w) == "n2:0");
  CHECK(cpus_of(*w) == "2");
}

TEST_CASE("step memory: --mem is each node's limit and is held - more than the job has is refused, more than is free waits") {
  std::vector<NodeAlloc> alloc{{"n1", 2, 100, 2, {}}, {"n2", 2, 100, 2, {}}};
  StepRequest two;
  two.ntasks = 2;
  auto layout = plan_step(alloc, {}, two, 9);
  REQUIRE(layout.is_ok());
  StepLayout l = *layout;
  REQUIRE(assign_step_memory(alloc, 60, {}, l, 9).is_ok());
  for (const StepNode& n : l.nodes) CHECK(n.mem_mib == 60);
  StepLayout none = *layout;  // no --mem: the step shares the job's memory, holds none
  REQUIRE(assign_step_memory(alloc, 0, {}, none, 9).is_ok());
  for (const StepNode& n : none.nodes) CHECK(n.mem_mib == 0);
  StepLayout big = *layout;
  Status too_big = assign_step_memory(alloc, 101, {}, big, 9);
  CHECK(too_big.code() == Code::kInvalid);
  CHECK(too_big.message() == "Unable to create step for job 9: Memory required by task is not available");
  StepLayout busy = *layout;
  Status wait = assign_step_memory(alloc, 60, {{"n2", 50}}, busy, 9);  // another step holds 50 on n2
  CHECK(wait.code() == Code::kUnavailable);
  CHECK(wait.message() == "Requested nodes are busy");
  CHECK(assign_step_memory(alloc, 50, {{"n2", 50}}, busy, 9).is_ok());  // exactly what is left
  std::vector<NodeAlloc> unlimited{{"n1", 2, 0, 2, {}}, {"n2", 2, 0, 2, {}}};
  StepLayout free_for_all = *layout;  // a job without a memory figure: any --mem is a limit only
  REQUIRE(assign_step_memory(unlimited, 4096, {{"n1", 9999}}, free_for_all, 9).is_ok());
  CHECK(free_for_all.nodes.front().mem_mib == 4096);
}
