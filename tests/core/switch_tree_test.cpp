// Switch tree (Slurm's topology/tree, core/switch_tree): levels, parents and nodes, `scontrol
// show topology` lines and SLURM_TOPOLOGY_ADDR checked against Slurm 22.05.8's own output
// (tests/fixtures/slurm/topology-tree: capture.sh made them from topology.conf there), agents'
// labels, the helpers placement will use, Slurm's refusals of a bad tree, and the hostlist
// functions switch{} / switchwith{} over a configured tree.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "builders.hpp"
#include "core/hostlist.hpp"
#include "core/hostlist_functions.hpp"
#include "core/switch_tree.hpp"
#include "core/topology.hpp"

using namespace hq;

namespace {

const std::string kSwitchTreeDir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/topology-tree/";

std::string read_fixture(const std::string& name) {
  std::ifstream in(kSwitchTreeDir + name);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// topology.conf's `SwitchName=s1 Nodes=n[1-2] LinkSpeed=100` lines as the config loader
// would make them from [[topology.switch]] tables.
SwitchConfig switch_of_conf_line(const std::string& line) {
  SwitchConfig c;
  std::istringstream words(line);
  for (std::string word; words >> word;) {
    size_t eq = word.find('=');
    std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "SwitchName") c.name = value;
    if (key == "LinkSpeed") c.link_speed = static_cast<uint32_t>(std::stoul(value));
    if (key == "Nodes") c.nodes_expr = value, c.nodes = *expand_hostlist(value);
    if (key == "Switches") c.switches_expr = value, c.switches = *expand_hostlist(value);
  }
  return c;
}

TopologyConfig tree_config(const std::string& conf_text) {
  TopologyConfig t;
  t.present = true;
  std::istringstream lines(conf_text);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) t.switches.push_back(switch_of_conf_line(line));
  return t;
}

// The captured cluster: n[1-8] on leaves s1-s4; mid above s1, s2; s0 above mid, s3; s4 alone.
TopologyConfig captured_config() { return tree_config(read_fixture("topology.conf")); }

std::vector<std::pair<std::string, std::string>> nodes_labelled(const std::string& names, const std::string& label = "") {
  std::vector<std::pair<std::string, std::string>> out;
  auto expanded = expand_hostlist(names);  // kept: a loop over *expand_hostlist(...) would read a dead temporary
  for (const auto& n : *expanded) out.emplace_back(n, label);
  return out;
}

// capture.txt's sections: "--- what" -> the lines after it (rc= lines dropped, "scontrol:
// error:" lines kept).
std::map<std::string, std::vector<std::string>> captured_sections() {
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream lines(read_fixture("capture.txt"));
  std::string at;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("--- ")) at = line.substr(4), out[at];
    else if (!at.empty() && !line.starts_with("rc=")) out[at].push_back(line);
  }
  return out;
}

std::string switch_name(const SwitchTree& t, int32_t index) { return index < 0 ? "(none)" : t.switches[static_cast<size_t>(index)].name; }

std::vector<std::string> names_of(const SwitchTree& t, const std::vector<int32_t>& indices) {
  std::vector<std::string> out;
  for (int32_t i : indices) out.push_back(switch_name(t, i));
  return out;
}

std::string refusal(const std::string& conf_text) {
  auto e = check_switches(tree_config(conf_text).switches);
  return e ? e->message : "";
}

}  // namespace

TEST_CASE("switch tree: scontrol show topology's lines are Slurm 22.05's, byte for byte") {
  auto golden = captured_sections();
  REQUIRE(golden.count("show topology"));
  SwitchTree tree = build_switch_tree(captured_config(), nodes_labelled("n[1-8]"));
  REQUIRE(tree.active());
  CHECK(tree.show_lines() == golden.at("show topology"));
}

TEST_CASE("switch tree: scontrol show topology NAME picks Slurm 22.05's lines (a switch alone, or those above all the nodes)") {
  auto golden = captured_sections();
  auto lines = build_switch_tree(captured_config(), nodes_labelled("n[1-8]")).show_lines();
  int checked = 0;
  for (const auto& [what, expected] : golden) {
    if (!what.starts_with("show topology ")) continue;
    std::string name = what.substr(14);
    std::vector<std::string> want = expected;
    if (want.size() == 1 && want[0].starts_with("scontrol: error:")) want.clear();  // no match: the client's error
    CHECK_MESSAGE(topology_lines_matching(lines, name) == want, name);
    ++checked;
  }
  CHECK(checked == 10);
}

TEST_CASE("switch tree: SLURM_TOPOLOGY_ADDR and its pattern are Slurm 22.05's (a blank level where no switch holds the node)") {
  auto golden = captured_sections();
  SwitchTree tree = build_switch_tree(captured_config(), nodes_labelled("n[1-8]"));
  int checked = 0;
  for (const std::string node : {"n1", "n3", "n5", "n7"}) {
    REQUIRE(golden.count("srun -w " + node));
    const auto& out = golden.at("srun -w " + node);
    REQUIRE(out.size() == 1);
    CHECK(tree.node_addr(node) + " " + tree.node_addr_pattern() == out[0]);
    ++checked;
  }
  CHECK(checked == 4);
  // Without switches Slurm's topology/none: the node alone.
  SwitchTree none = build_switch_tree(TopologyConfig{}, nodes_labelled("n[1-8]"));
  CHECK_FALSE(none.active());
  CHECK(none.node_addr("n1") == "n1");
  CHECK(none.node_addr_pattern() == "node");
}

TEST_CASE("switch tree: levels (one more than the highest child), parents, children and the nodes below each switch") {
  SwitchTree tree = build_switch_tree(captured_config(), nodes_labelled("n[1-8]"));
  REQUIRE(tree.switches.size() == 6);
  std::map<std::string, const TopoSwitch*> by_name;
  for (const auto& s : tree.switches) by_name[s.name] = &s;
  CHECK(by_name.at("s1")->level == 0);
  CHECK(by_name.at("mid")->level == 1);
  CHECK(by_name.at("s0")->level == 2);  // above a level-1 and a level-0 child
  CHECK(tree.max_level() == 2);
  CHECK(switch_name(tree, by_name.at("s1")->parent) == "mid");
  CHECK(switch_name(tree, by_name.at("mid")->parent) == "s0");
  CHECK(switch_name(tree, by_name.at("s3")->parent) == "s0");
  CHECK(by_name.at("s4")->parent == -1);  // a second root: Slurm only warns
  CHECK(by_name.at("s0")->parent == -1);
  CHECK(names_of(tree, by_name.at("s0")->children) == std::vector<std::string>{"mid", "s3"});
  CHECK(by_name.at("s0")->own_nodes.empty());
  CHECK(compress_hostlist(by_name.at("s0")->nodes) == "n[1-6]");
  CHECK(by_name.at("s3")->link_speed == 100);
  CHECK(switch_name(tree, tree.node_leaf.at("n4")) == "s2");
  CHECK(tree.outside == 0);
}

TEST_CASE("switch tree: agents' --switch labels place the nodes the config leaves out") {
  auto labels = nodes_labelled("n[1-8]");
  labels.emplace_back("n1", "s4");      // on s1 by the config: the config wins
  labels.emplace_back("n9", "s2");      // joins leaf s2, and so mid and s0
  labels.emplace_back("n10", "rack9");  // a new root leaf
  labels.emplace_back("n11", "rack9");
  labels.emplace_back("n12", "mid");    // not a leaf: on no switch (Slurm: "isn't a leaf switch")
  labels.emplace_back("n13", "");       // unlabelled: on no switch
  SwitchTree tree = build_switch_tree(captured_config(), labels);
  CHECK(switch_name(tree, tree.node_leaf.at("n1")) == "s1");
  CHECK(switch_name(tree, tree.node_leaf.at("n9")) == "s2");
  REQUIRE(tree.switches.size() == 7);
  const TopoSwitch& fresh = tree.switches.back();
  CHECK(fresh.name == "rack9");
  CHECK(fresh.level == 0);
  CHECK(fresh.parent == -1);
  CHECK(fresh.own_nodes == std::vector<std::string>{"n10", "n11"});
  CHECK(tree.outside == 2);
  CHECK_FALSE(tree.node_leaf.count("n12"));
  auto lines = tree.show_lines();
  CHECK(lines[1] == "SwitchName=s2 Level=0 LinkSpeed=1 Nodes=n[3-4,9]");  // grown: no longer as written
  CHECK(lines[4] == "SwitchName=mid Level=1 LinkSpeed=1 Nodes=n[1-4,9] Switches=s[1-2]");
  CHECK(lines[6] == "SwitchName=rack9 Level=0 LinkSpeed=1 Nodes=n[10-11]");
  CHECK(tree.node_addr("n9") == "s0.mid.s2.n9");
  CHECK(tree.node_addr("n10") == "..rack9.n10");
  CHECK(tree.node_addr("n13") == "...n13");  // on no switch: every level blank
}

TEST_CASE("switch tree: candidate switches for N nodes (lowest level, then tightest) and common ancestors") {
  SwitchTree tree = build_switch_tree(captured_config(), nodes_labelled("n[1-8]"));
  CHECK(names_of(tree, tree.candidates_for(2)) == std::vector<std::string>{"s1", "s2", "s3", "s4", "mid", "s0"});
  CHECK(names_of(tree, tree.candidates_for(3)) == std::vector<std::string>{"mid", "s0"});
  CHECK(names_of(tree, tree.candidates_for(5)) == std::vector<std::string>{"s0"});
  CHECK(tree.candidates_for(7).empty());  // no switch holds 7: s4's nodes hang off no common root
  auto at = [&](const std::string& name) { return tree.find(name); };
  CHECK(switch_name(tree, tree.common_ancestor({at("s1"), at("s2")})) == "mid");
  CHECK(switch_name(tree, tree.common_ancestor({at("s1"), at("s3")})) == "s0");
  CHECK(switch_name(tree, tree.common_ancestor({at("s2")})) == "s2");
  CHECK(switch_name(tree, tree.common_ancestor({at("mid"), at("s1")})) == "mid");
  CHECK(tree.common_ancestor({at("s1"), at("s4")}) == -1);
  CHECK(tree.common_ancestor({}) == -1);
  CHECK(tree.find("nope") == -1);
}

TEST_CASE("switch tree: Slurm's refusals of topology.conf, in its words (slurmctld 22.05.8's, errors.txt)") {
  const std::string base = "SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 Nodes=n[3-4]\n";
  CHECK(refusal(base + "SwitchName=top Switches=s[1-2]") == "");
  CHECK(refusal(base + "SwitchName=s1 Nodes=n[5-6]") == "Switch (s1) has already been defined");
  CHECK(refusal(base + "SwitchName=x Nodes=n5 Switches=s1") == "switch x has both child switches and nodes");
  CHECK(refusal(base + "SwitchName=x") == "switch x has neither child switches nor nodes");
  CHECK(refusal(base + "SwitchName=top Switches=s1,nosuch") == "Switch configuration top has invalid child (nosuch)");
  CHECK(refusal(base + "SwitchName=top Switches=s1,top") == "Switch configuration top has invalid child (top)");
  CHECK(refusal(base + "SwitchName=a Switches=s1,b\nSwitchName=b Switches=s2,a") == "Switch configuration is not a tree");
  // Slurm warns of these and keeps the node on both; hq refuses: a node has one leaf switch.
  CHECK(refusal(base + "SwitchName=s3 Nodes=n[2-3]") == "Multiple leaf switches contain nodes: n[2-3]");
  CHECK(refusal("SwitchName=s1 Nodes=n1,n1,n2") == "");  // one leaf naming a node twice holds it once
  // Two roots (s3 under none) are fine: Slurm only warns that no switch reaches every node.
  CHECK(refusal(base + "SwitchName=s3 Nodes=n[5-8]\nSwitchName=top Switches=s[1-2]") == "");
  // 24.11's _parse_switches: longer than HOST_NAME_MAX (64) is refused, 64 itself is not.
  std::string long_name(65, 'x');
  CHECK(refusal("SwitchName=" + long_name + " Nodes=n1") == "SwitchName (" + long_name + ") must be shorter than 64 chars");
  CHECK(refusal("SwitchName=" + std::string(64, 'x') + " Nodes=n1") == "");
  CHECK(refusal(base + "Nodes=n9") == "Can't create a switch without a name");
  auto e = check_switches(tree_config(base + "SwitchName=s3 Nodes=n5\nSwitchName=x").switches);
  REQUIRE(e);
  CHECK(e->switch_index == 3);  // the switch it is about, for the config's file:line
}

TEST_CASE("switch tree: validate_topology takes blocks or switches, not both - blocks stay off under a tree") {
  TopologyConfig t = captured_config();
  CHECK(validate_topology(t).is_ok());
  CHECK_FALSE(build_block_topology(t, nodes_labelled("n[1-8]", "b1")).active());  // agents' --block labels too
  t.blocks.push_back({"b1", "n[1-2]", {"n1", "n2"}});
  CHECK(validate_topology(t).message() == kBlocksOrSwitches);
  t.blocks.clear();
  t.block_sizes = {4};
  CHECK(validate_topology(t).message() == kBlocksOrSwitches);
  t.block_sizes.clear();
  t.switches.push_back(switch_of_conf_line("SwitchName=s1 Nodes=n9"));
  CHECK(validate_topology(t).message() == "Switch (s1) has already been defined");
}

TEST_CASE("switch tree: switch{S} is every node below S, switchwith{N} N's leaf switch, over the configured tree") {
  ClusterState s = test::cluster("n[1-10]", 4);
  s.topology = captured_config();
  s.nodes.at("n9").switch_name = "s4";  // joins leaf s4 by its label
  CHECK(compress_hostlist(*expand_node_list(s, "switch{s0}")) == "n[1-6]");
  CHECK(compress_hostlist(*expand_node_list(s, "switch{mid}")) == "n[1-4]");
  CHECK(compress_hostlist(*expand_node_list(s, "switch{s4}")) == "n[7-9]");
  CHECK(compress_hostlist(*expand_node_list(s, "block{s3}")) == "n[5-6]");  // Slurm reads block{} and switch{} alike
  CHECK(compress_hostlist(*expand_node_list(s, "switchwith{n3}")) == "n[3-4]");
  CHECK(compress_hostlist(*expand_node_list(s, "switchwith{n9}")) == "n[7-9]");
  CHECK(compress_hostlist(*expand_node_list(s, "blockwith{n5}")) == "n[5-6]");
  CHECK(compress_hostlist(*expand_node_list(s, "switchwith{n10}")) == "n10");  // on no switch: itself
  CHECK(expand_node_list(s, "switch{nope}").status().message() ==
        "invalid block or switch specified in hostlist function: \"switch{nope}\"");
  CHECK(expand_node_list(s, "switchwith{n99}").status().message() == "invalid node specified in hostlist function: \"switchwith{n99}\"");
  auto lines = switch_tree_of(s).show_lines();
  REQUIRE(lines.size() == 6);
  CHECK(lines[3] == "SwitchName=s4 Level=0 LinkSpeed=1 Nodes=n[7-9]");
}
