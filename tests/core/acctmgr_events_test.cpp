// sacctmgr list events (core/acctmgr_events.cpp) against Slurm 22.05's own output
// (tests/fixtures/slurm/sacctmgr/list-events-*): the nodes' spans out of service, the
// window, the conditions and the errors.
#include <doctest/doctest.h>

#include <sstream>

#include "acctmgr_commands.hpp"
#include "core/acctmgr.hpp"

#include "../fixture_file.hpp"

using namespace hq;

namespace {

const std::string kAcctmgrEventsDir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacctmgr/";

// The spans of the capture: n1 down 04:29:55-04:30:44 ("bad dimm"), n2 drained
// 04:29:54-04:41:02 ("disk swap"), both set by root, on 16-CPU nodes (2026-11-29, UTC).
AcctEvents capture() {
  AcctEvents e;
  e.cluster = "hqbench";
  e.now = 1795927800;  // 2026-11-29T04:50:00: after both
  e.utc_offset = 0;
  e.user_names = {{0, "root"}};
  NodeSpan n1{"n1", "DOWN", "bad dimm", 0, 1795926595, 1795926644, 16, 1000, 0};
  NodeSpan n2{"n2", "DRAIN", "disk swap", 0, 1795926594, 1795927262, 16, 1000, 0};
  e.spans = {n1, n2};
  return e;
}

AcctMgrResult list(const std::string& line, AcctMgrOptions options = {}) {
  if (options.events.cluster.empty()) options.events = capture();
  return run_acctmgr(default_acct_model(), test::acctmgr_words(line), options, AcctMgrActor{"root", true});
}

// The golden's lines without Slurm's registration rows ("UNK cold-start").
std::string without_cold_start(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find("cold-start") == std::string::npos) out += line + "\n";
  return out;
}

}  // namespace

TEST_CASE("sacctmgr list events: Slurm 22.05's columns and rows, byte for byte") {
  CHECK(acctmgr_lists_events(test::acctmgr_words("list events")));
  CHECK(acctmgr_lists_events(test::acctmgr_words("show event nodes=n1")));
  CHECK_FALSE(acctmgr_lists_events(test::acctmgr_words("list users")));
  auto r = list("list events event=node");
  CHECK(r.rc == 0);
  CHECK(r.out == without_cold_start(test::slurp_file(kAcctmgrEventsDir + "list-events-node.txt")));
}

TEST_CASE("sacctmgr list events: the window, conditions, formats and errors") {
  AcctMgrOptions parsable;
  parsable.parsable2 = true;
  CHECK(list("list events nodes=n2 format=NodeName,Start,End,State,StateRaw,Duration,User,Reason", parsable).out ==
        "NodeName|TimeStart|TimeEnd|State|StateRaw|Duration|User|Reason\n"
        "n2|2026-11-29T04:29:54|2026-11-29T04:41:02|DRAIN|514|00:11:08|root(0)|disk swap\n");
  CHECK(list("list events reason=dimm format=NodeName", parsable).out == "NodeName\nn1\n");
  CHECK(list("list events states=down format=NodeName", parsable).out == "NodeName\n");  // now: neither is down
  CHECK(list("list events mincpus=17 format=NodeName", parsable).out == "NodeName\n");
  CHECK(list("list events event=cluster", parsable).out == "Cluster|TRES|TimeStart|TimeEnd|Cluster Nodes\n");
  CHECK(list("list events clusters=other format=NodeName", parsable).out == "NodeName\n");
  // The default window starts at yesterday's midnight: a span that ended before it is not listed.
  AcctMgrOptions later = parsable;
  later.events = capture();
  later.events.now += 3 * 86400;
  CHECK(list("list events format=NodeName", later).out == "NodeName\n");
  CHECK(list("list events all_time format=NodeName", later).out == "NodeName\nn1\nn2\n");
  auto bad = list("list events states=bogus");
  CHECK(bad.rc == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err == test::slurp_file(kAcctmgrEventsDir + "list-events-states-bogus.err"));
  auto unknown = list("list events foo=bar");
  CHECK(unknown.rc == 1);
  CHECK(unknown.err == " Unknown condition: foo=bar\n");
  CHECK(list("list events format=bogus").err == "Unknown field 'bogus'\n");
}
