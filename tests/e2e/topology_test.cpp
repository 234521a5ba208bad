// End to end: block topology on a real cluster of 8 agents in two blocks of 4 -
// scontrol show topology, jobs placed inside one block (best fit), a job that no block can
// hold now waits although enough nodes are free, and one of the next level spans both.
#include <doctest/doctest.h>

#include <cstring>
#include <ctime>
#include <fstream>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

const char* const kTopology =
    "[topology]\nblock_sizes = [4, 8]\n"
    "[[topology.block]]\nname = \"b1\"\nnodes = \"e[1-4]\"\n"
    "[[topology.block]]\nname = \"b2\"\nnodes = \"e[5-8]\"\n";

std::string nodes_of(const LocalCluster& c, const std::string& id) {
  auto out = c.hq("queue -h -o %N -j " + id).out;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// `count` nodes, all in b1 (e1-e4) or all in b2 (e5-e8).
bool in_one_block(const LocalCluster& c, const std::string& list, size_t count) {
  std::string names = c.hq("show hostnames " + list).out;
  size_t n = 0, low = 0;
  for (size_t at = 0; (at = names.find('e', at)) != std::string::npos; ++at, ++n) low += names[at + 1] <= '4';
  return n == count && (low == 0 || low == n);
}

}  // namespace

TEST_CASE("e2e: block topology - show topology, jobs inside one block, best fit, a job no block holds waits") {
  LocalCluster c(8, 1, 20, kTopology);
  REQUIRE(c.ready());
  auto topo = c.hq("show topology");
  CHECK(topo.rc == 0);
  CHECK(topo.out ==
        "BlockName=b1 BlockIndex=0 Nodes=e[1-4] BlockSize=4\n"
        "BlockName=b2 BlockIndex=1 Nodes=e[5-8] BlockSize=4\n"
        "AggregatedBlock=b[1-2] BlockIndex=2 Nodes=e[1-8] BlockSize=8\n");
  CHECK(c.hq("show topology e6").out == "BlockName=b2 BlockIndex=1 Nodes=e[5-8] BlockSize=4\n"
                                        "AggregatedBlock=b[1-2] BlockIndex=2 Nodes=e[1-8] BlockSize=8\n");

  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string one = c.submit("-N1 hold.sh");
  REQUIRE(c.wait_state(one, "RUNNING", 30));
  CHECK(nodes_of(c, one) == "e1");
  std::string three = c.submit("-N3 hold.sh");  // b1 has 3 free, b2 4: best fit is b1
  REQUIRE(c.wait_state(three, "RUNNING", 30));
  CHECK(nodes_of(c, three) == "e[2-4]");
  std::string two = c.submit("-N2 hold.sh");
  REQUIRE(c.wait_state(two, "RUNNING", 30));
  CHECK(nodes_of(c, two) == "e[5-6]");
  // The operator's view: b1 full, b2 half used. Score: b1, b2 and the pair not whole
  // ((1 + 1 + 2) blocks x 4 nodes) plus the 6 block nodes not idle.
  CHECK(c.hq("nodes --blocks").out ==
        "BLOCK NODES  TOTAL  IDLE  BUSY UNAVAIL\n"
        "b1    e[1-4]     4     0     4       0\n"
        "b2    e[5-8]     4     2     2       0\n"
        "Fragmentation=22 (Slurm's topology/block score: 0 when every block is whole and idle)\n");
  std::string wide = c.submit("-N3 hold.sh");  // e7, e8 free: no block holds 3 now
  REQUIRE(wide.find("ERROR") == std::string::npos);
  REQUIRE(wait_until([&] { return c.hq("queue -h -o %r -j " + wide).out == "Resources\n"; }, 20));
  CHECK(c.hq("explain " + wide).out.find("topology: 3 nodes must fit in one block of level 0 (BlockSize=4); the most "
                                          "that could take it now in one is 2 of 4 in b2: it waits for a block to free up") !=
        std::string::npos);
  c.hq("cancel " + one + " " + three + " " + two);
  REQUIRE(c.wait_state(wide, "RUNNING", 30));
  CHECK(in_one_block(c, nodes_of(c, wide), 3));  // whichever block emptied first
  c.hq("cancel " + wide);
  std::string six = c.submit("-N6 hold.sh");  // level 1: the aggregated block of both
  REQUIRE(c.wait_state(six, "RUNNING", 30));
  CHECK(c.hq("show hostnames " + nodes_of(c, six)).out.size() == 6 * 3);
  c.hq("cancel " + six);
}

TEST_CASE("e2e: show topology without a [topology] says so, as Slurm") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  auto r = c.hq("show topology");
  CHECK(r.rc == 0);
  CHECK(r.out.find("No topology information available") != std::string::npos);
}

TEST_CASE("e2e: hostlist functions - -w blockwith{}, -x block{}, drain block{}, Slurm's error for an unknown one") {
  LocalCluster c(8, 1, 20, kTopology);
  REQUIRE(c.ready());
  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string with = c.submit("-N4 -w 'blockwith{e6}' hold.sh");  // the whole of e6's block
  REQUIRE(c.wait_state(with, "RUNNING", 30));
  CHECK(nodes_of(c, with) == "e[5-8]");
  std::string outside = c.submit("-N2 -x 'block{b2}' hold.sh");
  REQUIRE(c.wait_state(outside, "RUNNING", 30));
  CHECK(nodes_of(c, outside) == "e[1-2]");
  auto bad = c.hq("submit -N1 -w 'rack{r1}' hold.sh");
  CHECK(bad.rc != 0);
  CHECK(bad.out.find("Invalid hostlist_function specified: rack{r1}") != std::string::npos);
  c.hq("cancel " + with + " " + outside);
  // scontrol update answers them too: the job keeps the nodes, not the function.
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string held = c.submit("-H -N1 hold.sh");
  REQUIRE(sh(c.dir() + "/bin/scontrol update JobId=" + held + " ExcNodeList='block{b1}'").rc == 0);
  CHECK(c.hq("show job " + held).out.find("ExcNodeList=e[1-4]") != std::string::npos);
  c.hq("cancel " + held);
  auto drain = c.hq("control drain 'block{b1}' --reason maintenance");
  CHECK(drain.rc == 0);
  REQUIRE(wait_until([&] { return c.hq("nodes -h -t drain -o %N").out == "e[1-4]\n"; }, 20));
}

TEST_CASE("e2e: scontrol update NodeName= Topology= moves a node to another block, and the move outlives a restart") {
  LocalCluster c(8, 1, 20, kTopology);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string scontrol = c.dir() + "/bin/scontrol ";
  REQUIRE(sh(scontrol + "update NodeName=e4 Topology=default:b2").rc == 0);
  const std::string moved = "BlockName=b1 BlockIndex=0 Nodes=e[1-3] BlockSize=4\n"
                            "BlockName=b2 BlockIndex=1 Nodes=e[4-8] BlockSize=4\n";
  CHECK(c.hq("show topology").out.rfind(moved, 0) == 0);
  auto bad = sh(scontrol + "update NodeName=e4 Topology=other:b1");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("Invalid topology name: other") != std::string::npos);
  c.kill9_controller();  // journaled: a restart and the agent's re-registration keep it
  c.start_controller();
  REQUIRE(wait_until([&] { return c.responding_nodes() == 8; }, 30));
  CHECK(c.hq("show topology").out.rfind(moved, 0) == 0);
}

TEST_CASE("e2e: --exclusive=topo - a job alone in its block, the rest of it BLOCKED, the next such job waits for a whole block") {
  LocalCluster c(8, 2, 20, kTopology);  // 2 CPUs a node: a 1-CPU job could share one
  REQUIRE(c.ready());
  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  auto bad = c.hq("submit --exclusive=rack hold.sh");
  CHECK(bad.rc != 0);
  CHECK(bad.out.find("Invalid --exclusive specification") != std::string::npos);
  std::string topo = c.submit("-N2 --exclusive=topo hold.sh");
  REQUIRE(c.wait_state(topo, "RUNNING", 30));
  CHECK(nodes_of(c, topo) == "e[1-2]");
  CHECK(c.hq("show job " + topo).out.find("OverSubscribe=TOPO") != std::string::npos);
  REQUIRE(wait_until([&] { return c.hq("nodes -h -t blocked -o %N").out == "e[3-4]\n"; }, 20));
  CHECK(c.hq("nodes -h -n e3 -o %t").out == "block\n");
  CHECK(c.hq("show node e4").out.find("State=IDLE+BLOCKED") != std::string::npos);
  std::string small = c.submit("-N1 hold.sh");  // best fit would be b1's free nodes: they are blocked
  REQUIRE(c.wait_state(small, "RUNNING", 30));
  CHECK(nodes_of(c, small) == "e5");
  std::string second = c.submit("-N1 --exclusive=topo hold.sh");  // b1 is taken, b2 has a job
  REQUIRE(wait_until([&] { return c.hq("queue -h -o %r -j " + second).out == "Resources\n"; }, 20));
  c.hq("cancel " + small);
  REQUIRE(c.wait_state(second, "RUNNING", 30));
  CHECK(nodes_of(c, second) == "e5");
  c.hq("cancel " + topo);
  REQUIRE(wait_until([&] { return c.hq("nodes -h -t blocked -o %N").out == "e[6-8]\n"; }, 20));
  c.hq("cancel " + second);
}

TEST_CASE("e2e: --segment - a job no block holds runs as segments in two blocks, with SLURM_JOB_SEGMENT_SIZE") {
  LocalCluster c(8, 1, 20, "[topology]\nblock_sizes = [4]\n"
                            "[[topology.block]]\nname = \"b1\"\nnodes = \"e[1-4]\"\n"
                            "[[topology.block]]\nname = \"b2\"\nnodes = \"e[5-8]\"\n");
  REQUIRE(c.ready());
  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string a = c.submit("-N1 hold.sh"), b = c.submit("-N1 -w e5 hold.sh");
  REQUIRE(c.wait_state(a, "RUNNING", 30));
  REQUIRE(c.wait_state(b, "RUNNING", 30));
  std::string whole = c.submit("-N4 hold.sh");  // 3 free in each block: waits
  REQUIRE(wait_until([&] { return c.hq("queue -h -o %r -j " + whole).out == "Resources\n"; }, 20));
  std::ofstream(c.dir() + "/seg.sh") << "#!/bin/bash\necho size=$SLURM_JOB_SEGMENT_SIZE\n";
  std::string seg = c.submit("-N4 --segment=2 -o seg.out seg.sh");
  REQUIRE(c.wait_state(seg, "COMPLETED", 30));
  CHECK(slurp(c.dir() + "/seg.out") == "size=2\n");
  auto bad = c.hq("submit -N3 --segment=2 seg.sh");
  CHECK(bad.rc != 0);
  CHECK(bad.out.find("--segment=2 does not fit the job size (3)") != std::string::npos);
  c.hq("cancel " + a + " " + b + " " + whole);
}

namespace {

// Two leaf switches of 3 agents under one top switch (Slurm's topology/tree).
const char* const kTree =
    "[topology]\n"
    "[[topology.switch]]\nname = \"s1\"\nnodes = \"e[1-3]\"\n"
    "[[topology.switch]]\nname = \"s2\"\nnodes = \"e[4-6]\"\n"
    "[[topology.switch]]\nname = \"top\"\nswitches = \"s[1-2]\"\n"
    "[scheduler]\nmax_switch_wait = \"3s\"\nsched_interval = \"1s\"\nbf_interval = \"1s\"\n";

}  // namespace

TEST_CASE("e2e: switch tree - jobs below one leaf (best fit), SLURM_TOPOLOGY_ADDR, --switches waits for one leaf") {
  LocalCluster c(6, 1, 20, kTree);
  REQUIRE(c.ready());
  std::ofstream(c.dir() + "/addr.sh") << "#!/bin/bash\necho \"$SLURM_TOPOLOGY_ADDR $SLURM_TOPOLOGY_ADDR_PATTERN\"\n";
  std::string addr = c.submit("-N1 -w e5 -o addr.out addr.sh");
  REQUIRE(c.wait_state(addr, "COMPLETED", 30));
  CHECK(slurp(c.dir() + "/addr.out") == "top.s2.e5 switch.switch.node\n");  // as Slurm 22.05's capture

  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string one = c.submit("-N1 -w e1 hold.sh");
  REQUIRE(c.wait_state(one, "RUNNING", 30));
  std::string two = c.submit("-N2 hold.sh");  // s1 has 2 free, s2 3: best fit is s1
  REQUIRE(c.wait_state(two, "RUNNING", 30));
  CHECK(nodes_of(c, two) == "e[2-3]");
  std::string four = c.submit("-N1 -w e4 hold.sh");  // s2 has 2 free now
  REQUIRE(c.wait_state(four, "RUNNING", 30));
  c.hq("cancel " + one);  // s1: 1 free, s2: 2 free; 3 free in all, under top only
  REQUIRE(wait_until([&] { return c.hq("nodes -h -n e1 -o %t").out == "idle\n"; }, 20));
  std::string wide = c.submit("-N3 --switches=1@10:00 hold.sh");
  REQUIRE(wait_until([&] { return c.hq("queue -h -o %r -j " + wide).out == "Resources\n"; }, 20));
  CHECK(c.hq("show job " + wide).out.find("   Switches=1@00:00:03\n") != std::string::npos);  // capped by max_switch_wait
  REQUIRE(c.wait_state(wide, "RUNNING", 30));  // after its wait it takes both leaves
  auto seconds = [&](const char* field) {  // the job's SubmitTime= or StartTime=, in seconds
    std::string show = c.hq("show job " + wide).out;
    size_t at = show.find(std::string(field) + "=");
    std::tm tm{};
    if (at == std::string::npos || !strptime(show.c_str() + at + std::strlen(field) + 1, "%Y-%m-%dT%H:%M:%S", &tm)) return 0L;
    return static_cast<long>(timegm(&tm));
  };
  CHECK(seconds("StartTime") - seconds("SubmitTime") >= 2);  // it waited out its 3 s (times are whole seconds)
  CHECK(c.hq("show hostnames " + nodes_of(c, wide)).out == "e1\ne5\ne6\n");
  CHECK(c.hq("queue -O ReqSwitch:11,Wait4Switch -j " + wide).out ==
        "REQ_SWITCH WAIT4SWITCH         \n1          0:03                \n");  // squeue -O, Slurm's fields
  c.hq("cancel " + two + " " + four + " " + wide);
}

namespace {

// Two topologies over e1-e4 (Slurm 25.05's topology.yaml): "racks" (the default: e1-e2,
// e3-e4) for partition debug, "alt" (e1+e3, e2+e4) for partition alt.
const char* const kTwoTopologies =
    "[[topology]]\nname = \"racks\"\ndefault = true\n"
    "[[topology.block]]\nname = \"r1\"\nnodes = \"e[1-2]\"\n"
    "[[topology.block]]\nname = \"r2\"\nnodes = \"e[3-4]\"\n"
    "[[topology]]\nname = \"alt\"\n"
    "[[topology.block]]\nname = \"x1\"\nnodes = \"e[1,3]\"\n"
    "[[topology.block]]\nname = \"x2\"\nnodes = \"e[2,4]\"\n"
    "[[partition]]\nname = \"alt\"\nnodes = \"e[1-4]\"\ntopology = \"alt\"\n";

}  // namespace

TEST_CASE("e2e: named topologies - each partition places by its own, show topology NAME, Topology=NAME:UNIT moves") {
  LocalCluster c(4, 1, 20, kTwoTopologies);
  REQUIRE(c.ready());
  CHECK(c.hq("show topology").out == "BlockName=r1 BlockIndex=0 Nodes=e[1-2] BlockSize=2\n"
                                     "BlockName=r2 BlockIndex=1 Nodes=e[3-4] BlockSize=2\n"
                                     "AggregatedBlock=r[1-2] BlockIndex=2 Nodes=e[1-4] BlockSize=4\n");
  CHECK(c.hq("show topology alt").out == "BlockName=x1 BlockIndex=0 Nodes=e[1,3] BlockSize=2\n"
                                         "BlockName=x2 BlockIndex=1 Nodes=e[2,4] BlockSize=2\n"
                                         "AggregatedBlock=x[1-2] BlockIndex=2 Nodes=e[1-4] BlockSize=4\n");
  CHECK(c.hq("show topology alt node=e4").out.rfind("BlockName=x2 ", 0) == 0);
  CHECK(c.hq("show topology r2").out.rfind("BlockName=r2 ", 0) == 0);  // not a topology: a block of the default
  CHECK(c.hq("show partition alt").out.find("\n   Topology=alt\n") != std::string::npos);
  CHECK(c.hq("show partition debug").out.find("Topology=") == std::string::npos);

  std::ofstream(c.dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
  std::string racks = c.submit("-N2 hold.sh");  // debug: one rack
  REQUIRE(c.wait_state(racks, "RUNNING", 30));
  CHECK(nodes_of(c, racks) == "e[1-2]");
  c.hq("cancel " + racks);
  REQUIRE(wait_until([&] { return c.hq("nodes -h -t idle -o %N").out == "e[1-4]\n"; }, 20));
  std::string alt = c.submit("-p alt -N2 hold.sh");  // alt: e1+e3 or e2+e4
  REQUIRE(c.wait_state(alt, "RUNNING", 30));
  CHECK(nodes_of(c, alt) == "e[1,3]");
  c.hq("cancel " + alt);

  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string scontrol = c.dir() + "/bin/scontrol ";
  REQUIRE(sh(scontrol + "update NodeName=e2 Topology=alt:x1").rc == 0);  // alt only: racks keeps e2 in r1
  CHECK(c.hq("show topology alt").out.rfind("BlockName=x1 BlockIndex=0 Nodes=e[1-3] BlockSize=2\n", 0) == 0);
  CHECK(c.hq("show topology racks").out.rfind("BlockName=r1 BlockIndex=0 Nodes=e[1-2] BlockSize=2\n", 0) == 0);
  auto bad = sh(scontrol + "update NodeName=e2 Topology=nowhere:x1");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("Invalid topology name: nowhere") != std::string::npos);
}
