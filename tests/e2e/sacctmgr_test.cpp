// sacctmgr against a real cluster: the model lives in the accounting store and outlives a
// kill -9 of the controller; the commit prompt without -i; the command lines Snakemake and
// ColdFront send; only admins change things; no accounting at all says so.
#include <doctest/doctest.h>

#include <sstream>

#include "../fixture_file.hpp"
#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

// Only what `cmd` writes to stderr (sh() merges both streams).
std::string stderr_of(const std::string& cmd) { return "{ " + cmd + " 2>&1 >/dev/null; }"; }

}  // namespace

TEST_CASE("e2e: sacctmgr adds accounts and users that tools read back, asks before committing, survives kill -9") {
  LocalCluster c(1, 1, 20);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  // The controller registered its cluster with Slurm's defaults.
  auto assoc = sh(in_bin(c) + "sacctmgr -P list assoc format=Cluster,Account,User,QOS");
  CHECK(assoc.rc == 0);
  CHECK(assoc.out == "Cluster|Account|User|QOS\ne2e|root||normal\ne2e|root|root|normal\n");
  // ColdFront's forms.
  CHECK(sh(in_bin(c) + "sacctmgr -Q -i create account name=physics cluster=e2e").rc == 0);
  CHECK(sh(in_bin(c) + "sacctmgr -Q -i create user name=nobody cluster=e2e account=physics").rc == 0);
  auto again = sh(in_bin(c) + "sacctmgr -Q -i create account name=physics cluster=e2e");
  CHECK(again.rc == 1);
  CHECK(again.out == " Nothing new added.\n");
  CHECK(sh(in_bin(c) + "sacctmgr list associations User=nobody Cluster=e2e Format=Account -Pn").out == "physics\n");
  CHECK(sh(in_bin(c) + "sacctmgr show user User=nobody Cluster=e2e Format=DefaultAccount -Pn").out == "physics\n");
  // Snakemake's account check.
  CHECK(sh(in_bin(c) + "sacctmgr -n -s list user nobody format=account%20").out == "             physics \n");
  // Without -i: the summary, the prompt, and nothing stored on "n"; stored on "y".
  auto no = sh("cd " + c.dir() + " && echo n | bin/sacctmgr add account chem");
  CHECK(no.rc == 0);
  CHECK(no.out.find("Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): \n Changes Discarded\n") !=
        std::string::npos);
  CHECK(sh(in_bin(c) + "sacctmgr -n -P list account chem format=account").out.empty());
  CHECK(sh("cd " + c.dir() + " && echo y | bin/sacctmgr add account chem").rc == 0);
  CHECK(sh(in_bin(c) + "sacctmgr -n -P list account chem format=account").out == "chem\n");
  CHECK(sh(in_bin(c) + "sacctmgr -i modify user nobody set MaxJobs=3 QOS+=normal").rc == 0);
  // --json (Slurm 23.11's layout), read as tools read it.
  auto json = sh(in_bin(c) + "sacctmgr --json -s list user nobody | python3 -c 'import json,sys; d=json.load(sys.stdin); "
                          "u=d[\"users\"][0]; print(u[\"name\"], u[\"default\"][\"account\"], "
                          "[a[\"account\"] for a in u[\"associations\"]], d[\"meta\"][\"slurm\"][\"cluster\"], d[\"errors\"])'");
  CHECK(json.rc == 0);
  CHECK(json.out == "nobody physics ['physics'] e2e []\n");
  auto qos_json = sh(in_bin(c) + "sacctmgr --json list assoc user=nobody | python3 -c 'import json,sys; "
                              "a=json.load(sys.stdin)[\"associations\"][0]; print(a[\"max\"][\"jobs\"][\"active\"], a[\"qos\"])'");
  CHECK(qos_json.out == "{'set': True, 'infinite': False, 'number': 3} ['normal']\n");
  auto share_json = sh(in_bin(c) + "sshare --json -a | python3 -c 'import json,sys; d=json.load(sys.stdin); "
                                "print([(r[\"name\"], r[\"parent\"], r[\"type\"][0]) for r in d[\"shares\"][\"shares\"]])'");
  CHECK(share_json.rc == 0);
  CHECK(share_json.out.find("('nobody', 'physics', 'USER')") != std::string::npos);
  CHECK(share_json.out.find("('physics', 'root', 'ASSOCIATION')") != std::string::npos);
  // kill -9 and back: everything committed is there.
  c.kill9_controller();
  c.start_controller();
  std::string after;
  REQUIRE(wait_until([&] {
    after = sh(in_bin(c) + "sacctmgr -n -P list assoc format=account,user,maxjobs").out;
    return !after.empty();
  }, 20));
  CHECK(after == "root||\nroot|root|\nchem||\nphysics||\nphysics|nobody|3\n");
  auto bad = sh(stderr_of(in_bin(c) + "sacctmgr list bogus"));
  CHECK(bad.rc == 1);
  CHECK(bad.out.rfind("No valid entity in list command\n", 0) == 0);
  CHECK(sh(in_bin(c) + "sacctmgr ping").out.find(" is UP\n") != std::string::npos);
}

TEST_CASE("e2e: sacctmgr lets only admins change the model") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 1, 20);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto denied = as_nobody(c, "sh -c '" + stderr_of(c.dir() + "/bin/sacctmgr -i add account evil") + "'");
  CHECK(denied.rc == 1);
  CHECK(denied.out == " Error with request: Access/permission denied\n");
  auto listed = as_nobody(c, c.dir() + "/bin/sacctmgr -n -P list account format=account");
  CHECK(listed.rc == 0);
  CHECK(listed.out == "root\n");
}

TEST_CASE("e2e: a coordinator changes what is below their account, and nothing else") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 1, 20);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  for (const char* line : {"add account physics MaxJobs=10", "add account theory parent=physics", "add account chem",
                           "add user nobody account=physics", "add coordinator account=physics names=nobody"})
    REQUIRE(sh(in_bin(c) + "sacctmgr -i " + line).rc == 0);
  auto added = as_nobody(c, c.dir() + "/bin/sacctmgr -i add user root account=theory");
  CHECK(added.rc == 0);
  auto above = as_nobody(c, "sh -c '" + stderr_of(c.dir() + "/bin/sacctmgr -i modify user root where account=theory set MaxJobs=20") + "'");
  CHECK(above.rc == 1);
  CHECK(above.out.rfind(" Error with request: Access/permission denied\n", 0) == 0);
  auto outside = as_nobody(c, "sh -c '" + stderr_of(c.dir() + "/bin/sacctmgr -i modify account chem set MaxJobs=1") + "'");
  CHECK(outside.rc == 1);
  auto assocs = sh(in_bin(c) + "sacctmgr -n -P list assoc account=theory,chem format=account,user,maxjobs");
  CHECK(assocs.out == "chem||\ntheory||10\ntheory|root|10\n");  // root's added; MaxJobs physics' 10, not 20
}

TEST_CASE("e2e: sacctmgr on a cluster that keeps no accounting says so") {
  LocalCluster c(1, 1, 20, "[accounting]\nstorage = \"none\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto r = sh(stderr_of(in_bin(c) + "sacctmgr list user"));
  CHECK(r.rc == 1);
  CHECK(r.out == "You are not running a supported accounting_storage plugin\nOnly 'accounting_storage/slurmdbd' is supported.\n");
}

TEST_CASE("e2e: sacctmgr dump writes the cluster's flat file where sacctmgr runs, and tells each line on stderr") {
  LocalCluster c(1, 1, 20);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add account physics Description=phys Organization=uni").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add user alice account=physics MaxJobs=3").rc == 0);
  auto named = sh("{ { " + in_bin(c) + "sacctmgr dump e2e file=" + c.dir() + "/e2e-dump.cfg; } 2>" + c.dir() + "/dump.err; }");
  CHECK(named.rc == 0);
  std::string file = slurp(c.dir() + "/e2e-dump.cfg");
  CHECK(file.rfind("# To edit this file start with a cluster line for the new cluster\n", 0) == 0);
  CHECK(file.find("\nCluster - 'e2e':Fairshare=1:QOS='normal'\nParent - 'root'\n") != std::string::npos);
  CHECK(file.find("\nAccount - 'physics':Description='phys':Organization='uni':Fairshare=1\n") != std::string::npos);
  CHECK(file.find("\nParent - 'physics'\nUser - 'alice':DefaultAccount='physics':Fairshare=1:MaxJobs=3\n") !=
        std::string::npos);
  CHECK(slurp(c.dir() + "/dump.err").rfind("sacctmgr: Cluster - 'e2e':Fairshare=1:QOS='normal'\n", 0) == 0);
  auto here = sh("{ { " + in_bin(c) + "sacctmgr dump e2e; } 2>/dev/null; }");  // no File=: ./CLUSTER.cfg where it runs
  CHECK(here.out == " No filename given, using ./e2e.cfg.\n");
  CHECK(slurp(c.dir() + "/e2e.cfg") == file);
  auto nowhere = sh(in_bin(c) + "sacctmgr dump e2e file=/nonexistent/x.cfg");
  CHECK(nowhere.out == "Can't open file /nonexistent/x.cfg, No such file or directory\n");
  CHECK(nowhere.rc == 0);  // as Slurm's
  CHECK(sh(in_bin(c) + "sacctmgr dump nosuch file=x.cfg").rc == 1);
}

TEST_CASE("e2e: sacctmgr list events shows nodes drained and resumed, from the store, across a restart") {
  LocalCluster c(2, 1, 20);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "scontrol update nodename=e2 state=drain reason=\"disk swap\"").rc == 0);
  REQUIRE(sh(in_bin(c) + "scontrol update nodename=e2 state=resume").rc == 0);
  REQUIRE(sh(in_bin(c) + "scontrol update nodename=e1 state=drain reason=\"bad dimm\"").rc == 0);
  const std::string list = in_bin(c) + "sacctmgr -n -P list events format=NodeName,State,StateRaw,Reason,User,End";
  auto events = sh(list);
  CHECK(events.rc == 0);
  // By node, then start; e2's span ended (a date), e1's still open.
  std::istringstream lines(events.out);
  std::string e1, e2, extra;
  std::getline(lines, e1), std::getline(lines, e2);
  CHECK(e1 == "e1|DRAIN|514|bad dimm|root(0)|Unknown");
  CHECK(e2.rfind("e2|DRAIN|514|disk swap|root(0)|20", 0) == 0);
  CHECK_FALSE(std::getline(lines, extra));
  // Slurm 22.05's layout (tests/fixtures/slurm/sacctmgr/list-events-node.txt).
  auto fixed = sh(in_bin(c) + "sacctmgr list events");
  std::string want = hq::test::slurp_file(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacctmgr/list-events-node.txt");
  CHECK(fixed.out.substr(0, fixed.out.find('\n', fixed.out.find('\n') + 1)) ==
        want.substr(0, want.find('\n', want.find('\n') + 1)));
  // States= looks from now: e1's open span (e2's too, when it ended within this second).
  CHECK(sh(in_bin(c) + "sacctmgr -n -P list events states=drain format=NodeName").out.rfind("e1\n", 0) == 0);
  CHECK(sh(in_bin(c) + "sacctmgr -n -P list events states=down format=NodeName").out.empty());
  c.kill9_controller();  // the store has them: nothing is lost with the controller
  c.start_controller();
  CHECK(wait_until([&] { return sh(list).out == events.out; }, 20));
}
