// assign_step_gpus: a step that asks for no GPUs gets all of the job's on its nodes; one that
// asks gets that many per node (--gpus spread, --gpus-per-node, --gpus-per-task), the lowest
// free first; GPUs held by other steps make it wait; more than the job has is Slurm's error.
#include <doctest/doctest.h>

#include "core/step_gpus.hpp"

using namespace hq;

namespace {

std::vector<NodeAlloc> two_nodes() {
  NodeAlloc a, b;
  a.node = "n1";
  a.gpus = {0, 1, 2, 3};
  b.node = "n2";
  b.gpus = {4, 5};
  return {a, b};
}

StepLayout layout_on(std::vector<std::pair<std::string, size_t>> nodes) {
  StepLayout l;
  uint32_t task = 0;
  for (const auto& [name, tasks] : nodes) {
    StepNode n;
    n.name = name;
    for (size_t i = 0; i < tasks; ++i) n.tasks.push_back(task++);
    l.nodes.push_back(n);
  }
  return l;
}

}  // namespace

TEST_CASE("step gpus: none asked is every GPU of the job there - counts per node, per task, or spread") {
  auto all = layout_on({{"n1", 2}, {"n2", 1}});
  REQUIRE(assign_step_gpus(two_nodes(), {}, {}, all));
  CHECK(all.nodes[0].gpus == std::vector<int32_t>{0, 1, 2, 3});
  CHECK(all.nodes[1].gpus == std::vector<int32_t>{4, 5});

  auto per_node = layout_on({{"n1", 2}, {"n2", 1}});
  REQUIRE(assign_step_gpus(two_nodes(), {0, 1, 0}, {}, per_node));
  CHECK(per_node.nodes[0].gpus == std::vector<int32_t>{0});
  CHECK(per_node.nodes[1].gpus == std::vector<int32_t>{4});

  auto per_task = layout_on({{"n1", 1}, {"n2", 1}});
  REQUIRE(assign_step_gpus(two_nodes(), {0, 0, 2}, {{"n1", {0}}}, per_task));
  CHECK(per_task.nodes[0].gpus == std::vector<int32_t>{1, 2});  // the lowest free: 0 is held
  CHECK(per_task.nodes[1].gpus == std::vector<int32_t>{4, 5});

  auto spread = layout_on({{"n1", 1}, {"n2", 1}});
  REQUIRE(assign_step_gpus(two_nodes(), {3, 0, 0}, {}, spread));
  CHECK(spread.nodes[0].gpus == std::vector<int32_t>{0, 1});  // the first node takes the remainder
  CHECK(spread.nodes[1].gpus == std::vector<int32_t>{4});
}

TEST_CASE("step gpus: held GPUs make a step wait - more than the job has is Slurm's gres error") {
  auto busy = layout_on({{"n2", 1}});
  Status held = assign_step_gpus(two_nodes(), {0, 1, 0}, {{"n2", {4, 5}}}, busy);
  CHECK(held.code() == Code::kUnavailable);
  CHECK(held.message() == "Requested nodes are busy");
  CHECK(busy.nodes[0].gpus.empty());  // nothing assigned on failure

  auto too_many = layout_on({{"n2", 1}});
  Status never = assign_step_gpus(two_nodes(), {0, 3, 0}, {}, too_many);
  CHECK(never.code() == Code::kInvalid);
  CHECK(never.message() == "Invalid generic resource (gres) specification");
  auto fewer_than_nodes = layout_on({{"n1", 1}, {"n2", 1}});
  CHECK(assign_step_gpus(two_nodes(), {1, 0, 0}, {}, fewer_than_nodes).code() == Code::kInvalid);
  auto elsewhere = layout_on({{"n9", 1}});
  CHECK(assign_step_gpus(two_nodes(), {}, {}, elsewhere).code() == Code::kInvalid);
}

TEST_CASE("step gpus: a per-task count times the tasks does not overflow into every GPU") {
  auto many = layout_on({{"n1", 512}});
  CHECK(assign_step_gpus(two_nodes(), {0, 0, 1 << 24}, {}, many).code() == Code::kInvalid);
  CHECK(many.nodes[0].gpus.empty());
}
