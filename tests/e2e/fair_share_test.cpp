// Fair share from usage on a real cluster: a job's CPU-seconds reach its association through
// the accounting store, sshare shows them (Fair Tree: the account that used less ranks
// first), the fair-share factor orders pending jobs, and a controller that lost its whole
// state (journal gone) gets fair share back from the store.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {


// The sshare -a -P -n line of root's association in `account` ("" when there is none).
std::string share_line(const LocalCluster& c, const std::string& account) {
  std::string out = sh(in_bin(c) + "sshare -a -P -n").out, want = " " + account + "|root|";
  for (size_t at = 0; at < out.size();) {
    size_t end = out.find('\n', at);
    std::string line = out.substr(at, end - at);
    if (line.find(want) != std::string::npos) return line;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

// Field `i` (0-based) of a '|' line.
std::string field(const std::string& line, int i) {
  size_t at = 0;
  for (int k = 0; k < i && at != std::string::npos; ++k) at = line.find('|', at) + 1;
  return at == std::string::npos ? "" : line.substr(at, line.find('|', at) - at);
}

// RawUsage (field 4) of such a line; 0 when there is no line yet.
int raw_usage(const std::string& line) {
  std::string f = field(line, 4);
  return f.empty() || !std::isdigit(static_cast<unsigned char>(f[0])) ? 0 : std::stoi(f);
}

}  // namespace

TEST_CASE("e2e: fair share - usage from the store in sshare, the lighter account's jobs first, kept across a lost state") {
  std::string extra = "[scheduler]\npriority_weight_fairshare = 10000\npriority_weight_age = 0\npriority_weight_partition = 0\n"
                      "priority_calc_period = 1\npriority_decay_half_life = \"1h\"\n";
  TempDir store;
  LocalCluster c(1, 2, 20, extra + "[accounting]\npath = \"" + store.path() + "/acct.db\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add account heavy,light").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add user root account=heavy,light").rc == 0);
  // Before any usage every user association ties at the top.
  REQUIRE(wait_until([&] { return !share_line(c, "light").empty(); }, 10));
  CHECK(field(share_line(c, "heavy"), 6) == "1.000000");
  CHECK(sh(in_bin(c) + "sshare -a").out.rfind("Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n"
                                            "-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \n"
                                            "root                                          ", 0) == 0);

  std::string used = c.submit("-A heavy -c 2 --wrap 'sleep 2'");
  REQUIRE(c.wait_state(used, "COMPLETED", 20));
  // 2 CPUs for about 2 s: RawUsage about 4 (decayed a little), in heavy and root, not light.
  // (A pass that ran before the store had the job's end counts it as running up to then.)
  REQUIRE(wait_until([&] { return raw_usage(share_line(c, "heavy")) >= 3; }, 20));
  std::string heavy = share_line(c, "heavy"), light = share_line(c, "light");
  INFO(sh(in_bin(c) + "sshare -a -l").out);
  CHECK(field(light, 4) == "0");
  CHECK(std::stod(field(light, 6)) > std::stod(field(heavy, 6)));  // FairShare: light ranks above heavy

  // The fair-share factor orders what waits: with the node held, light's job goes first.
  std::string holder = c.fill_cluster();
  REQUIRE(!holder.empty());
  std::string h = c.submit("-A heavy --wrap true"), l = c.submit("-A light --wrap true");
  REQUIRE(c.wait_considered(l, 20));
  auto prio = [&](const std::string& id) { return std::stoll(sh(in_bin(c) + "squeue -h -j " + id + " -o %Q").out); };
  CHECK(prio(l) > prio(h));
  // sprio shows the same, factor by factor, in Slurm's columns.
  auto sprio_fs = [&](const std::string& id) { return std::stoll(sh(in_bin(c) + "sprio -h -j " + id + " -o %F").out); };
  CHECK(sprio_fs(l) > sprio_fs(h));
  CHECK(sprio_fs(l) + 0 <= 10000);
  auto weights = sh(in_bin(c) + "sprio -w");
  CHECK(weights.rc == 0);
  CHECK(weights.out == "          JOBID PARTITION   PRIORITY       SITE  FAIRSHARE\n"
                       "        Weights                               1      10000\n");
  CHECK(sh(in_bin(c) + "sprio -l").out.rfind("          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  "
                                          "FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n", 0) == 0);
  CHECK(sh(in_bin(c) + "sprio -j 99999").out == "Unable to find jobs matching user/id(s) specified\n");
  c.hq("cancel " + holder + " " + h + " " + l);

  // A controller whose state is gone (journal deleted) works fair share out from the store again.
  c.kill9_controller();
  std::filesystem::remove_all(c.dir() + "/state");
  c.start_controller();
  std::string again;
  REQUIRE(wait_until([&] { return raw_usage(again = share_line(c, "heavy")) >= 3; }, 20));
  CHECK(field(share_line(c, "light"), 4) == "0");
}

// Without a fair-share weight nothing reads usage in the background (over a million stored
// jobs that costs seconds); sshare still answers with it: it waits for fair share worked out
// afresh.
TEST_CASE("e2e: fair share - weight 0, sshare works usage out when asked") {
  TempDir store;
  LocalCluster c(1, 2, 20, "[accounting]\npath = \"" + store.path() + "/acct.db\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add account heavy").rc == 0);
  REQUIRE(sh(in_bin(c) + "sacctmgr -i add user root account=heavy").rc == 0);
  std::string used = c.submit("-A heavy -c 2 --wrap 'sleep 1'");
  REQUIRE(c.wait_state(used, "COMPLETED", 20));
  REQUIRE(wait_until([&] { return sh(in_bin(c) + "sacct -n -X -P -j " + used + " --format=State").out == "COMPLETED\n"; }, 20));
  CHECK(raw_usage(share_line(c, "heavy")) >= 1);  // the first sshare after the record is stored
}
