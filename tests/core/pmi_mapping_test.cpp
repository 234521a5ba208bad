// PMI_process_mapping (core/pmi_mapping) in Slurm's form, on the reference's examples
// (steps-and-mpi.md §2.6) and on the layouts hq's steps make.
#include <doctest/doctest.h>

#include "core/pmi_mapping.hpp"

using namespace hq;

namespace {
std::string mapping(const std::vector<std::vector<uint32_t>>& tasks) {
  auto m = pmi_process_mapping(tasks);
  REQUIRE(m);
  return *m;
}
}  // namespace

TEST_CASE("pmi mapping: the reference's examples - block, cyclic, uneven block") {
  CHECK(mapping({{0, 1}, {2, 3}, {4, 5}}) == "(vector,(0,3,2))");
  CHECK(mapping({{0, 3}, {1, 4}, {2, 5}}) == "(vector,(0,3,1),(0,3,1))");
  CHECK(mapping({{0, 1}, {2}, {3}}) == "(vector,(0,1,2),(1,2,1))");
}

TEST_CASE("pmi mapping: one node, one rank per node, cyclic remainder, plane") {
  CHECK(mapping({{0, 1, 2}}) == "(vector,(0,1,3))");
  CHECK(mapping({{0}, {1}, {2}}) == "(vector,(0,3,1))");
  CHECK(mapping({{0, 3}, {1}, {2}}) == "(vector,(0,3,1),(0,1,1))");       // -n4 -m cyclic on 3 nodes
  CHECK(mapping({{0, 1, 4, 5}, {2, 3}}) == "(vector,(0,2,2),(0,1,2))");   // plane=2, 6 ranks on 2 nodes
  CHECK(mapping({{0}, {1, 2}, {3, 4}}) == "(vector,(0,1,1),(1,2,2))");
}

TEST_CASE("pmi mapping: ranks missing, repeated or out of order are refused") {
  CHECK_FALSE(pmi_process_mapping({{0, 2}}));
  CHECK_FALSE(pmi_process_mapping({{0, 1}, {1}}));
  CHECK_FALSE(pmi_process_mapping({{1, 0}}));
  CHECK(mapping({}) == "(vector)");
}
