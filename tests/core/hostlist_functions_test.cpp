// Slurm's hostlist functions (core/hostlist_functions): block{}, blockwith{}, switch{},
// switchwith{}, feature{}, mixed with plain hostlists, and Slurm's errors.
#include <doctest/doctest.h>

#include "builders.hpp"
#include "core/hostlist.hpp"
#include "core/hostlist_functions.hpp"

using namespace hq;

namespace {

// n[1-8] in blocks b1 (n[1-4]) and b2 (n[5-8]) by the config; n[9-10] labelled b3 by
// their agents; n1 and n5 have feature gpu; n9 and n10 hang off switch s9.
ClusterState topo_cluster() {
  ClusterState s = test::cluster("n[1-10]", 4);
  s.topology.present = true;
  s.topology.block_sizes = {4, 8};
  s.topology.blocks = {{"b1", "n[1-4]", *expand_hostlist("n[1-4]")}, {"b2", "n[5-8]", *expand_hostlist("n[5-8]")}};
  s.nodes.at("n9").block = s.nodes.at("n10").block = "b3";
  s.nodes.at("n9").switch_name = s.nodes.at("n10").switch_name = "s9";
  s.nodes.at("n1").features = s.nodes.at("n5").features = {"gpu", "ib"};
  return s;
}

std::string expanded(const ClusterState& s, const std::string& text) {
  auto names = expand_node_list(s, text);
  REQUIRE_MESSAGE(names.is_ok(), names.status().message());
  return compress_hostlist(*names);
}

std::string error_of(const ClusterState& s, const std::string& text) {
  auto names = expand_node_list(s, text);
  REQUIRE(!names.is_ok());
  return names.status().message();
}

}  // namespace

TEST_CASE("hostlist functions: blocks by name, the block of a node, switches, features, with plain names") {
  ClusterState s = topo_cluster();
  CHECK(expanded(s, "block{b2}") == "n[5-8]");
  CHECK(expanded(s, "block{b3}") == "n[9-10]");         // a block the agents made
  CHECK(expanded(s, "block{b[1-2]}") == "n[1-8]");      // an aggregated block, by its name
  CHECK(expanded(s, "blockwith{n6}") == "n[5-8]");
  CHECK(expanded(s, "switch{s9}") == "n[9-10]");
  CHECK(expanded(s, "switchwith{n10}") == "n[9-10]");
  CHECK(expanded(s, "switchwith{n2}") == "n[1-4]");     // no switch label: its block, as Slurm's block plugin answers
  CHECK(expanded(s, "switch{b1}") == "n[1-4]");
  CHECK(expanded(s, "feature{gpu}") == "n[1,5]");
  CHECK(expanded(s, "feature{nope}").empty());          // an unknown feature names no node
  CHECK(expanded(s, "n10,block{b1},n[1-2]") == "n[10,1-4]");  // each node once, in the order given
  CHECK(expanded(s, "n[3-4]") == "n[3-4]");
  s.topology.blocks.pop_back();  // n[5-8] in no block now: blockwith{} of one is itself, as in Slurm
  CHECK(expanded(s, "blockwith{n6}") == "n6");
}

TEST_CASE("hostlist functions: Slurm's errors") {
  ClusterState s = topo_cluster();
  CHECK(error_of(s, "rack{r1}") == "Invalid hostlist_function specified: rack{r1}");
  CHECK(error_of(s, "block{b1") == "invalid node specified in hostlist function: \"block{b1\" (missing closing '}')");
  CHECK(error_of(s, "block{b9}") == "invalid block or switch specified in hostlist function: \"block{b9}\"");
  CHECK(error_of(s, "blockwith{n99}") == "invalid node specified in hostlist function: \"blockwith{n99}\"");
  // An empty name names no unit (not every unlabelled node).
  CHECK(error_of(s, "block{}") == "invalid block or switch specified in hostlist function: \"block{}\"");
  CHECK(error_of(s, "switch{}") == "invalid block or switch specified in hostlist function: \"switch{}\"");
  CHECK(resolve_hostlist_functions(s, "n[1-3]").value() == "n[1-3]");  // nothing to answer: as given
  CHECK(resolve_hostlist_functions(s, "blockwith{n1},n9").value() == "n[1-4,9]");
}
