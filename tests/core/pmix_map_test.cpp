#include <doctest/doctest.h>

#include "core/pmix_map.hpp"

using namespace hq;

TEST_CASE("pmix_map: a block layout of 4 tasks on 3 nodes as node 0 sees it") {
  std::vector<StepNode> layout{{"e1", 2, {0, 1}}, {"e2", 2, {2}}, {"e3", 2, {3}}};
  PmixStepMap m = pmix_step_map(12, 3, layout, 0);
  CHECK(m.nspace == "slurm.pmix.12.3");
  CHECK(m.job_id == "12.3");
  CHECK(m.nodes == "e1,e2,e3");
  CHECK(m.proc_map == "0,1;2;3");
  CHECK(m.local_peers == "0,1");
  CHECK(m.local == std::vector<uint32_t>{0, 1});
  REQUIRE(m.ranks.size() == 4);
  CHECK(m.ranks[1].node == 0);
  CHECK(m.ranks[1].local_rank == 1);
  CHECK(m.ranks[3].node == 2);
  CHECK(m.ranks[3].local_rank == 0);
  CHECK(m.hosts == std::vector<std::string>{"e1", "e2", "e3"});
}

TEST_CASE("pmix_map: a cyclic layout keeps each node's ranks and local ranks") {
  std::vector<StepNode> layout{{"a", 1, {0, 3}}, {"b", 1, {1, 4}}, {"c", 1, {2, 5}}};
  PmixStepMap m = pmix_step_map(7, 0, layout, 1);
  CHECK(m.proc_map == "0,3;1,4;2,5");
  CHECK(m.local_peers == "1,4");
  CHECK(m.ranks[4].node == 1);
  CHECK(m.ranks[4].local_rank == 1);
  CHECK(m.ranks[5].node == 2);
}

TEST_CASE("pmix_map: Open MPI's transport key is Slurm's format") {
  CHECK(precondition_transports(12, 3) == "0000000c00000003-0000000c00000003");
  CHECK(precondition_transports(0x1234567890ULL, 1) == "3456789000000001-3456789000000001");
}

TEST_CASE("pmix_map: PMIx's variables win over the task's, the user's transport key is kept") {
  auto env = with_pmix_env({"PATH=/bin", "PMIX_RANK=9"}, {"PMIX_RANK=1", "PMIX_NAMESPACE=slurm.pmix.12.3"}, 12, 3);
  CHECK(env == std::vector<std::string>{"PATH=/bin", "PMIX_RANK=1", "PMIX_NAMESPACE=slurm.pmix.12.3",
                                        "OMPI_MCA_orte_precondition_transports=0000000c00000003-0000000c00000003"});
  auto mine = with_pmix_env({"OMPI_MCA_orte_precondition_transports=abc"}, {}, 12, 3);
  CHECK(mine == std::vector<std::string>{"OMPI_MCA_orte_precondition_transports=abc"});
}
