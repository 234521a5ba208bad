// sinfo's -o/-O and -t as Slurm 22.05 reads them (its letters, names, titles and state
// names), and the node state words sinfo prints.
#include <doctest/doctest.h>

#include "core/sinfo_format.hpp"
#include "core/units.hpp"
#include "../fixture_file.hpp"

using namespace hq;

namespace {
std::string sinfo_header_line(const ColumnFormat& f) {
  return format_line(f, [](char c) { return std::string(sinfo_header(c)); });
}
}  // namespace

TEST_CASE("sinfo -o: letters, widths, '.', unknown letters kept with sinfo's error") {
  ColumnFormat f = parse_sinfo_format("%.6D|%-9P|%x %N");
  REQUIRE(f.errors.size() == 2);
  CHECK(f.errors[0] == "Invalid node format specification: -");
  CHECK(f.errors[1] == "Invalid node format specification: x");
  CHECK(sinfo_header_line(f) == " NODES|%-9P|%x NODELIST");
  CHECK(sinfo_header_line(parse_sinfo_format("%all")).rfind("AVAIL|ACTIVE_FEATURES|CPUS|TMP_DISK|", 0) == 0);
}

TEST_CASE("sinfo -O: names in any case, :width and :.width, 20 wide by default, suffixes kept") {
  ColumnFormat f = parse_sinfo_fields("nodelist,CPUS:.5,StateCompact:6|");
  CHECK(f.errors.empty());
  CHECK(sinfo_header_line(f) == "NODELIST             CPUSSTATE |");
  ColumnFormat bad = parse_sinfo_fields("NodeList:3,Bogus:4x");
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0] == "Invalid job format specification: Bogus");
  CHECK(sinfo_header_line(bad) == "NODx");
}

TEST_CASE("sinfo's default layouts are Slurm's") {
  CHECK(sinfo_header_line(parse_sinfo_fields(sinfo_default_fields({}))) == "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST");
  SinfoLayout summary;
  summary.summarize = true;
  CHECK(sinfo_header_line(parse_sinfo_fields(sinfo_default_fields(summary))) ==
        "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST");
  SinfoLayout reasons;
  reasons.reasons = true;
  CHECK(sinfo_header_line(parse_sinfo_fields(sinfo_default_fields(reasons))) == "REASON               USER      TIMESTAMP           NODELIST");
}

TEST_CASE("node states: compact and long words with their suffixes") {
  SinfoNodeState s;
  s.base = NodeBase::kIdle;
  CHECK(sinfo_state_compact(s) == "idle");
  s.planned = true;
  CHECK(sinfo_state_compact(s) == "plnd");
  CHECK(sinfo_state_long(s) == "planned");
  s.planned = false;
  s.drain = true;
  CHECK(sinfo_state_compact(s) == "drain");
  CHECK(sinfo_state_long(s) == "drained");
  s.base = NodeBase::kMixed;
  CHECK(sinfo_state_compact(s) == "drng");
  CHECK(sinfo_state_long(s) == "draining");
  s.no_respond = true;
  CHECK(sinfo_state_compact(s) == "drng*");
  s.drain = false;
  s.base = NodeBase::kDown;
  CHECK(sinfo_state_compact(s) == "down*");
  CHECK(sinfo_state_number(s) > sinfo_state_number(SinfoNodeState{NodeBase::kMixed, false, false, false}));
}

TEST_CASE("sinfo -t: names and prefixes in any case, any-of and all-of, Slurm's error") {
  SinfoNodeState drained{NodeBase::kIdle, true, false, false}, mixed{NodeBase::kMixed, false, false, false};
  auto f = parse_sinfo_states("IDLE");
  REQUIRE(f.is_ok());
  CHECK(sinfo_state_matches(*f, drained, 0));  // the base state: a drained idle node is idle
  CHECK(!sinfo_state_matches(*f, mixed, 1));
  auto alloc = parse_sinfo_states("alloc");
  REQUIRE(alloc.is_ok());
  CHECK(sinfo_state_matches(*alloc, mixed, 1));  // any CPU in use
  auto both = parse_sinfo_states("drain&idle");
  REQUIRE(both.is_ok());
  CHECK(sinfo_state_matches(*both, drained, 0));
  CHECK(!sinfo_state_matches(*both, mixed, 1));
  auto drng = parse_sinfo_states("drng");
  REQUIRE(drng.is_ok());
  CHECK(!sinfo_state_matches(*drng, drained, 0));
  CHECK(parse_sinfo_states("cloud").is_ok());  // Slurm's, never true here
  auto bad = parse_sinfo_states("idle,bogus");
  REQUIRE(!bad.is_ok());
  CHECK(bad.status().message().rfind("Bad state string: \"bogus\"\nvalid states: unknown,down,idle,", 0) == 0);
  CHECK(!parse_sinfo_states("~drain").is_ok());  // 22.05 has no negation
}

TEST_CASE("node states in a MAINT reservation: $ as Slurm 22.05 printed them, before *") {
  std::istringstream rows(hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sinfo/maint_states.txt"));
  int seen = 0;
  for (std::string line; std::getline(rows, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto f = split(line, '\t');
    REQUIRE(f.size() == 5);
    CAPTURE(line);
    SinfoNodeState s;
    s.base = f[1] == "mixed" ? NodeBase::kMixed : NodeBase::kIdle;
    s.drain = f[2] == "yes";
    s.reserved = s.maint = true;
    CHECK(sinfo_state_compact(s) == f[3]);
    CHECK(sinfo_state_long(s) == f[4]);
    ++seen;
  }
  CHECK(seen == 3);
  SinfoNodeState s{NodeBase::kAllocated, false, true, false};  // Slurm's node_state_string: $ wins over *
  s.maint = true;
  CHECK(sinfo_state_compact(s) == "alloc$");
  s.base = NodeBase::kIdle;
  CHECK(sinfo_state_compact(s) == "maint*");
  s.base = NodeBase::kDown;
  CHECK(sinfo_state_long(s) == "down$");
}
