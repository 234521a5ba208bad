// sshare against Slurm 22.05's own answers (tests/fixtures/slurm/sshare, priority/multifactor
// with Fair Tree): the bench's association tree rebuilt with sacctmgr, usage as the capture
// had it (none, then 57.2 and 320.3 decayed CPU-seconds for chem/daemon and physics/nobody),
// and each captured command line rendered by core/sshare_format, compared byte for byte.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/acctmgr.hpp"
#include "core/fair_share.hpp"
#include "core/sshare_format.hpp"

#include "../fixture_file.hpp"

using namespace hq;
using hq::test::for_each_capture;
using hq::test::slurp_file;

namespace {

const std::string kSshareGoldenDir = std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sshare/";

AcctModel bench_tree() {
  AcctModel m = default_acct_model();
  register_cluster(m, "hqbench", "127.0.0.1", 16817);
  for (const std::vector<std::string>& words : std::vector<std::vector<std::string>>{
           {"add", "account", "hqtest"}, {"add", "user", "root", "account=hqtest"},
           {"add", "account", "chem", "fairshare=1"}, {"add", "account", "physics", "fairshare=2"},
           {"add", "account", "theory", "parent=physics", "fairshare=1"},
           {"add", "user", "daemon", "account=chem", "fairshare=3"},
           {"add", "user", "nobody", "account=physics", "fairshare=1"},
           {"add", "user", "nobody", "account=theory", "fairshare=1"}}) {
    auto r = run_acctmgr(m, words, {}, {"root", true});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    m = r.model;
  }
  return m;
}

UsageRecord used(const std::string& account, const std::string& user, double cpu_seconds) {
  UsageRecord r;
  r.account = account, r.user = user, r.start = 1, r.end = 2, r.billing = 1, r.factor = cpu_seconds;
  return r;
}

// sshare's options from the captured command line's words.
ShareOptions options_of(const std::string& line) {
  ShareOptions o;
  o.caller = "root";
  o.cluster = "hqbench";
  std::istringstream in(line);
  std::string w;
  in >> w;  // sshare
  while (in >> w) {
    if (w == "-a") o.all = true;
    else if (w == "-P") o.parsable2 = true;
    else if (w == "-p") o.parsable = true;
    else if (w == "-l") o.long_format = true;
    else if (w == "-n") o.noheader = true;
    else if (w == "-U") o.users_only = true;
    else if (w == "-u") in >> w, o.users.push_back(w);
    else if (w == "-A") in >> w, o.accounts.push_back(w);
    else if (w.rfind("--format=", 0) == 0) o.format = w.substr(9);
    else FAIL("option not handled here: " << w);
  }
  return o;
}

void check_set(const std::string& prefix, const FairShare& fs) {
  std::vector<ShareRow> rows = fs.rows();
  for (ShareRow& r : rows) r.tres_run_mins = "cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0";
  int compared = 0;
  for_each_capture(kSshareGoldenDir, [&](const std::string& file, const std::string& cmd) {
    if (cmd.rfind("sshare -", 0) != 0 && cmd != "sshare") return;
    bool usage_file = file.rfind("usage-", 0) == 0;
    // fresh-: before Slurm's first pass (stale values); running-: TRESRunMins of jobs without a limit.
    if (usage_file != (prefix == "usage-") || file.rfind("fresh-", 0) == 0 || file.rfind("running-", 0) == 0) return;
    if (cmd == "sshare -h" || cmd == "sshare --help" || cmd == "sshare --usage" || cmd == "sshare -e") return;  // the client's
    INFO(file << ": " << cmd);
    auto text = render_sshare(rows, options_of(cmd));
    REQUIRE(text.is_ok());
    if (const char* dump = std::getenv("HQ_GOLDEN_DUMP")) std::ofstream(std::string(dump) + "/" + file) << *text;
    CHECK(*text == slurp_file(kSshareGoldenDir + file));
    ++compared;
  });
  CHECK(compared >= 12);
}

}  // namespace

TEST_CASE("sshare: Slurm 22.05's answers byte for byte, before any usage and after two jobs ran") {
  AcctModel m = bench_tree();
  FairShareConfig cfg{0, false, 1.0};
  check_set("", FairShare(m, "hqbench", {}, 1000, cfg));
  FairShare used_fs(m, "hqbench", {used("chem", "daemon", 57.24864888), used("physics", "nobody", 320.25135112)}, 1000, cfg);
  check_set("usage-", used_fs);
}

TEST_CASE("sshare: -e lists the fields as Slurm does - an unknown --format field is refused in its words") {
  CHECK(sshare_helpformat() == slurp_file(kSshareGoldenDir + "sshare-e.txt"));
  ShareOptions o;
  o.format = "Account,Bogus";
  auto bad = render_sshare({}, o);
  REQUIRE(!bad.is_ok());
  CHECK(bad.status().message() == "Invalid field requested: \"Bogus\"");
}
