#include <doctest/doctest.h>

#include "../temp_dir.hpp"
#include "cmd/config_toml.hpp"

using namespace hq;
using hq::cmd::load_config_text;

namespace {
std::string error_of(const std::string& text) {
  auto c = load_config_text(text, "test.toml");
  return c.is_ok() ? "" : c.status().message();
}
}  // namespace

TEST_CASE("config: a full config loads") {
  auto c = load_config_text(R"(
[cluster]
name = "demo"
[controller]
host = "ctl1"
port = 7000
state_dir = "/tmp/x"
node_timeout = "2m"
[[node]]
names = "n[001-004]"
cpus = 64
memory = "256G"
features = ["ib"]
[[partition]]
name = "batch"
nodes = "n[001-004]"
default = true
max_time = "2-00:00:00"
)", "t.toml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->name == "demo");
  CHECK(c->controller.port == 7000);
  CHECK(c->node_timeout == 120);
  REQUIRE(c->nodes.size() == 1);
  CHECK(c->nodes[0].names.size() == 4);
  CHECK(c->nodes[0].mem_mib == 256 * 1024);
  CHECK(c->partitions[0].max_time == 2 * 86400);
  CHECK(c->partitions[0].is_default);
}

TEST_CASE("config: errors name file, line and what was expected") {
  CHECK(error_of("[cluster]\nnmae = \"x\"\n").find("test.toml:2: unknown key 'nmae'") == 0);
  CHECK(error_of("[controller]\nport = \"x\"\n").find("test.toml:2: 'port' must be an integer") == 0);
  CHECK(error_of("[controller]\nport = 70000\n").find("between 0 and 65535") != std::string::npos);
  CHECK(error_of("[[node]]\nnames = \"n[1-\"\n").find("test.toml:2:") == 0);
  CHECK(error_of("[[node]]\nnames = \"n1\"\nmemory = \"4X\"\n").find("test.toml:3:") == 0);
  CHECK(error_of("[[partition]]\nname = \"p\"\nnodes = \"n1\"\n").find("no [[node]] declares") != std::string::npos);
  CHECK(error_of("[controller\n").find("test.toml:1:") == 0);
  CHECK(error_of("[[partition]]\nname = \"p\"\nnodes = \"x\"\nmax_time = \"soon\"\n").find("test.toml:4:") == 0);
}

TEST_CASE("config: [accounting] enforce takes Slurm's words and needs a store") {
  auto c = load_config_text("[accounting]\nenforce = \"associations,limits,qos\"\n", "t.toml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->accounting.enforce == "associations,limits,qos");
  CHECK(error_of("[accounting]\nenforce = \"limits,quota\"\n").find("test.toml:2: 'enforce': unknown enforce word 'quota'") == 0);
  CHECK(error_of("[accounting]\nstorage = \"none\"\nenforce = \"limits\"\n").find("test.toml:3: 'enforce' needs an accounting store") ==
        0);
  CHECK(error_of("[accounting]\nstorage = \"none\"\nenforce = \"none\"\n").empty());
}

TEST_CASE("config: [accounting] storage = \"remote\" names where the store listens") {
  auto c = load_config_text("[accounting]\nstorage = \"remote\"\nhost = \"acct1\"\n", "t.toml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->accounting.host == "acct1");
  CHECK(c->accounting.port == 6819);  // Slurm's AccountingStoragePort
  CHECK(error_of("[accounting]\nstorage = \"remote\"\n").find("test.toml:2: storage = \"remote\" needs 'host'") == 0);
  CHECK(error_of("[accounting]\nstorage = \"remote\"\nhost = \"a\"\nport = 0\n").find("test.toml:4: storage = \"remote\" needs a 'port'") == 0);
  CHECK(error_of("[accounting]\nport = 70000\n").find("test.toml:2:") == 0);
  CHECK(error_of("[accounting]\nstorage = \"mysql\"\n").find("'storage' must be \"internal\"") != std::string::npos);
}

TEST_CASE("config: the shipped example is valid") {
  auto c = hq::cmd::load_config_file(std::string(HQ_SOURCE_DIR) + "/config.example.toml");
  CHECK_MESSAGE(c.is_ok(), c.status().message());
}

TEST_CASE("config: non-ASCII and control characters are refused with file:line (toml++ UB guard)") {
  CHECK(error_of("\xc2\xa5\x07\x07").find("test.toml:1: non-ASCII character") == 0);  // the fuzzer's find
  CHECK(error_of("name = 1\x07\n").find("test.toml:1: control character") == 0);
  CHECK(error_of("[cluster]\nname = \"3\xd0\x8c\xdd\xd3\"\n").find("test.toml:2: non-ASCII") == 0);
  CHECK(error_of("# caf\xc3\xa9\n").find("test.toml:1: non-ASCII") == 0);
  CHECK(error_of("[cluster]\r\nname = \"x\"\t# tab and CRLF are fine\r\n") == "");
}

TEST_CASE("config: [agents] programs are absolute readable paths - partitions take feature{} and ALL") {
  auto ok = load_config_text("[agents]\nprolog = \"/bin/true\"\nhealth_interval = \"30s\"\njob_pids_max = 512\n"
                             "[[partition]]\nname = \"p\"\nnodes = \"ALL\"\n",
                             "test.toml");
  REQUIRE(ok.is_ok());
  CHECK(ok->agents.prolog == "/bin/true");
  CHECK(ok->agents.health_interval == 30);
  CHECK(ok->agents.job_pids_max == 512);
  CHECK(ok->partitions.front().all_nodes);
  CHECK(error_of("[agents]\nprolog = \"prolog.sh\"\n").find("test.toml:2: 'prolog' must be an absolute path") !=
        std::string::npos);
  CHECK(error_of("[agents]\nepilog = \"/nonexistent/epilog\"\n").find("readable program") != std::string::npos);
  CHECK(error_of("[agents]\nhealth_interval = \"0s\"\n").find("at least 1 second") != std::string::npos);
  CHECK(error_of("[agents]\nbogus = 1\n").find("bogus") != std::string::npos);
  CHECK(error_of("[[partition]]\nname = \"p\"\nnodes = \"rack{b1}\"\n").find("unknown node function") != std::string::npos);
}

TEST_CASE("config: fence_timeout is off, or between two heartbeats and node_timeout minus one") {
  auto with = [](const std::string& fence) {
    return load_config_text("[controller]\nnode_timeout = \"30s\"\nheartbeat_interval = \"5s\"\nfence_timeout = \"" +
                                fence + "\"\n[[node]]\nnames = \"n1\"\ncpus = 1\n[[partition]]\nname = \"p\"\nnodes = \"n1\"\n",
                            "t.toml");
  };
  auto off = with("0s");
  REQUIRE_MESSAGE(off.is_ok(), off.status().message());
  CHECK(off->fence_timeout == 0);
  auto on = with("20s");
  REQUIRE_MESSAGE(on.is_ok(), on.status().message());
  CHECK(on->fence_timeout == 20);
  for (const char* bad : {"9s", "26s", "40s"}) {
    auto r = with(bad);
    CHECK_FALSE(r.is_ok());
    if (!r.is_ok()) CHECK(r.status().message().find("fence_timeout") != std::string::npos);
  }
}

TEST_CASE("config: a directory or a missing path is not a config - never an empty one") {
  hq::test::TempDir dir;
  auto d = hq::cmd::load_config_file(dir.path());
  REQUIRE_FALSE(d.is_ok());
  CHECK(d.status().message() == "config file " + dir.path() + " is not a regular file");
  auto missing = hq::cmd::load_config_file(dir.path() + "/nope.toml");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("cannot read config file") != std::string::npos);
}

TEST_CASE("config: [topology] block_sizes and [[topology.block]] load - Slurm's errors with file and line") {
  const std::string head = "[[node]]\nnames = \"n[1-8]\"\ncpus = 4\n[[partition]]\nname = \"p\"\nnodes = \"n[1-8]\"\ndefault = true\n";
  auto c = load_config_text(head + R"([topology]
block_sizes = [4, 8]
[[topology.block]]
name = "b1"
nodes = "n[1-4]"
[[topology.block]]
name = "b2"
nodes = "n[5-8]"
)", "t.toml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->topology.present);
  CHECK(c->topology.block_sizes == std::vector<int32_t>{4, 8});
  REQUIRE(c->topology.blocks.size() == 2);
  CHECK(c->topology.blocks[1].nodes == std::vector<std::string>{"n5", "n6", "n7", "n8"});
  CHECK_FALSE(load_config_text(head, "t.toml")->topology.present);
  std::string bad = error_of(head + "[topology]\nblock_sizes = [4, 12]\n");
  CHECK(bad.find("test.toml:8") == 0);
  CHECK(bad.find("Invalid BlockSizes value: 12") != std::string::npos);
  CHECK(error_of(head + "[topology]\n[[topology.block]]\nname = \"b1\"\nnodes = \"n1\"\n[[topology.block]]\nname = \"b1\"\nnodes = \"n2\"\n")
            .find("Duplicate BlockName=b1") != std::string::npos);
  CHECK(error_of(head + "[topology]\nblock_sizes = \"4\"\n").find("'block_sizes' must be a list") != std::string::npos);
  CHECK(error_of(head + "[topology]\nswitches = 3\n").find("switches") != std::string::npos);
}

TEST_CASE("config: [[topology.switch]] tables load (Slurm's SwitchName= lines) - Slurm's errors at the switch's line") {
  const std::string head = "[[node]]\nnames = \"n[1-8]\"\ncpus = 4\n[[partition]]\nname = \"p\"\nnodes = \"n[1-8]\"\ndefault = true\n";
  const std::string leaves = "[topology]\n[[topology.switch]]\nname = \"s1\"\nnodes = \"n[1-4]\"\nlink_speed = 100\n"
                             "[[topology.switch]]\nname = \"s2\"\nnodes = \"n5,n6\"\n";  // lines 8-15
  auto c = load_config_text(head + leaves + "[[topology.switch]]\nname = \"s0\"\nswitches = \"s[1-2]\"\n", "t.toml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  REQUIRE(c->topology.switches.size() == 3);
  const SwitchConfig& s1 = c->topology.switches[0];
  CHECK(s1.name == "s1");
  CHECK(s1.nodes == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(s1.link_speed == 100);
  CHECK(c->topology.switches[1].nodes_expr == "n5,n6");  // as written: Slurm shows a leaf's Nodes= so
  CHECK(c->topology.switches[1].link_speed == 1);        // Slurm's default
  CHECK(c->topology.switches[2].switches_expr == "s[1-2]");
  CHECK(c->topology.switches[2].switches == std::vector<std::string>{"s1", "s2"});
  CHECK(c->topology.blocks.empty());
  CHECK(c->scheduler.max_switch_wait == 300);  // Slurm's default
  auto waits = load_config_text(head + "[scheduler]\nmax_switch_wait = \"10m\"\n", "t.toml");
  REQUIRE_MESSAGE(waits.is_ok(), waits.status().message());
  CHECK(waits->scheduler.max_switch_wait == 600);
  CHECK(error_of(head + "[scheduler]\nmax_switch_wait = \"soon\"\n").find("max_switch_wait") != std::string::npos);
  CHECK(load_config_text(head + "[scheduler]\nmax_switch_wait = \"0\"\n", "t.toml")->scheduler.max_switch_wait == 0);
  CHECK(error_of(head + "[scheduler]\nmax_switch_wait = \"UNLIMITED\"\n").find("must be 0 or more seconds") != std::string::npos);
  CHECK(error_of(head + "[scheduler]\nmax_switch_wait = -5\n").find("must be 0 or more seconds") != std::string::npos);
  // Each error names the [[topology.switch]] it is about: the third table starts at line 16.
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"s1\"\nnodes = \"n7\"\n") ==
        "test.toml:16: Switch (s1) has already been defined");
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"s0\"\nswitches = \"s1,s9\"\n") ==
        "test.toml:16: Switch configuration s0 has invalid child (s9)");
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"x\"\nnodes = \"n7\"\nswitches = \"s1\"\n") ==
        "test.toml:16: switch x has both child switches and nodes");
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"x\"\n") ==
        "test.toml:16: switch x has neither child switches nor nodes");
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"s3\"\nnodes = \"n[4-5]\"\n") ==
        "test.toml:16: Multiple leaf switches contain nodes: n[4-5]");
  CHECK(error_of(head + "[topology]\n[[topology.switch]]\nname = \"a\"\nswitches = \"b\"\n[[topology.switch]]\nname = "
                        "\"b\"\nswitches = \"a\"\n") == "test.toml:9: Switch configuration is not a tree");
  CHECK(error_of(head + leaves + "[[topology.block]]\nname = \"b1\"\nnodes = \"n1\"\n") ==
        "test.toml:8: " + std::string(kBlocksOrSwitches));
  CHECK(error_of(head + "[topology]\nblock_sizes = [4]\n[[topology.switch]]\nname = \"s1\"\nnodes = \"n1\"\n") ==
        "test.toml:8: " + std::string(kBlocksOrSwitches));
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"s0\"\nswitches = \"s[1-\"\n").find(
            "test.toml:18: Invalid switches: s[1-") == 0);
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"s3\"\nnodes = \"n[7-\"\n").find(
            "test.toml:18: Invalid node name (n[7-) in switch config (s3)") == 0);
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"s3\"\nnodes = \"n7\"\nspeed = 3\n").find(
            "unknown key 'speed' in [[topology.switch]]") != std::string::npos);
  CHECK(error_of(head + leaves + "[[topology.switch]]\nname = \"s3\"\nnodes = \"n7\"\nlink_speed = -1\n").find(
            "'link_speed' must be between 0 and 4294967295") != std::string::npos);
}

TEST_CASE("config: [[topology]] tables name several topologies (Slurm 25.05's topology.yaml) - partitions pick one") {
  const std::string head = "[[node]]\nnames = \"n[1-8]\"\ncpus = 4\n[[partition]]\nname = \"p\"\nnodes = \"n[1-8]\"\ndefault = true\n"
                           "[[partition]]\nname = \"odd\"\nnodes = \"n[1-8]\"\ntopology = \"alt\"\n";  // lines 1-11
  const std::string racks = "[[topology]]\nname = \"racks\"\n[[topology.block]]\nname = \"r1\"\nnodes = \"n[1-4]\"\n"
                            "[[topology.block]]\nname = \"r2\"\nnodes = \"n[5-8]\"\n";
  const std::string alt = "[[topology]]\nname = \"alt\"\n[[topology.block]]\nname = \"x1\"\nnodes = \"n[1,3,5,7]\"\n";
  auto c = load_config_text(head + racks + alt, "t.toml");
  REQUIRE_MESSAGE(c.is_ok(), c.status().message());
  CHECK(c->topology.name == "racks");  // no default = true: the first is the cluster default
  REQUIRE(c->other_topologies.size() == 1);
  CHECK(c->other_topologies[0].name == "alt");
  CHECK(c->other_topologies[0].blocks[0].nodes == std::vector<std::string>{"n1", "n3", "n5", "n7"});
  CHECK(c->partitions[1].topology == "alt");
  auto chosen = load_config_text(head + racks + "[[topology]]\nname = \"alt\"\ndefault = true\n" + alt.substr(alt.find("[[topology.block]]")), "t.toml");
  REQUIRE_MESSAGE(chosen.is_ok(), chosen.status().message());
  CHECK(chosen->topology.name == "alt");
  CHECK(chosen->other_topologies.at(0).name == "racks");
  auto flat = load_config_text(head + racks + "[[topology]]\nname = \"alt\"\nflat = true\n", "t.toml");
  REQUIRE_MESSAGE(flat.is_ok(), flat.status().message());
  CHECK(flat->other_topologies.at(0).flat);
  // Errors: where, and what.
  CHECK(error_of(head + racks + "[[topology]]\nname = \"racks\"\nflat = true\n").find("Duplicate topology name: racks") !=
        std::string::npos);
  CHECK(error_of(head + racks).find("partition 'odd': Invalid partition topology: no [[topology]] is named 'alt'") !=
        std::string::npos);
  CHECK(error_of(head + racks + "[[topology]]\nflat = true\n").find("test.toml:20: [[topology]] needs a name") == 0);
  CHECK(error_of(head + racks + "[[topology]]\nname = \"a:b\"\nflat = true\n").find("needs a name") != std::string::npos);
  CHECK(error_of(head + racks + "[[topology]]\nname = \"alt\"\nflat = true\n" + alt.substr(alt.find("[[topology.block]]")))
            .find("flat = true takes no blocks") != std::string::npos);
  CHECK(error_of(head + racks + "[[topology]]\nname = \"alt\"\nblock_size = [4]\n").find("block_size") != std::string::npos);
}
