// Fair share from usage (core/fair_share): decayed usage as the integral of Slurm's decay,
// Fair Tree's ranking (ties share a rank, tied accounts merge their children), the classic
// formula, and the factors the priority reads through the accounting policy.
#include <doctest/doctest.h>

#include <cmath>

#include "builders.hpp"
#include "core/acct_policy.hpp"
#include "core/acctmgr.hpp"
#include "core/fair_share.hpp"
#include "core/share_runs.hpp"

using namespace hq;

namespace {

AcctModel model_after(const std::vector<std::vector<std::string>>& commands) {
  AcctModel m = default_acct_model();
  register_cluster(m, "c", "127.0.0.1", 1);
  for (const auto& words : commands) {
    AcctMgrResult r = run_acctmgr(m, words, AcctMgrOptions{}, AcctMgrActor{"root", true});
    REQUIRE_MESSAGE(r.rc == 0, r.err);
    m = r.model;
  }
  return m;
}

UsageRecord used(const std::string& account, const std::string& user, Time start, Time end, int64_t cpus) {
  UsageRecord r;
  r.account = account, r.user = user, r.start = start, r.end = end, r.billing = cpus;
  return r;
}

const ShareRow& row(const FairShare& fs, const std::string& account, const std::string& user) {
  for (const ShareRow& r : fs.rows())
    if (r.account == account && r.user == user) return r;
  FAIL("no row " << account << "/" << user);
  return fs.rows().front();
}

const FairShareConfig kNoDecay{0, false, 1.0};

}  // namespace

TEST_CASE("fair share: usage is CPU-seconds times the QOS's usage factor, decayed by the half-life") {
  UsageRecord r = used("a", "u", 1000, 1600, 4);
  CHECK(decayed_usage(r, 5000, 0) == doctest::Approx(2400));
  r.factor = 0.5;
  CHECK(decayed_usage(r, 5000, 0) == doctest::Approx(1200));
  // Ran from 2H ago to H ago: H/ln2 x (1/2 - 1/4) per CPU.
  UsageRecord old = used("a", "u", 0 + 1, 0, 1);
  old.start = 10000 - 2 * 3600;
  old.end = 10000 - 3600;
  CHECK(decayed_usage(old, 10000, 3600) == doctest::Approx(3600 / std::log(2.0) * 0.25));
  // Still running: counts up to now; not started or nothing held: nothing.
  CHECK(decayed_usage(used("a", "u", 100, 0, 2), 160, 0) == doctest::Approx(120));
  CHECK(decayed_usage(used("a", "u", 0, 0, 2), 160, 0) == 0);
  CHECK(decayed_usage(used("a", "u", 100, 200, 0), 300, 0) == 0);
}

TEST_CASE("fair tree: level shares and usage among siblings, users ranked from the top, ties sharing a rank") {
  AcctModel m = model_after({{"add", "account", "physics,chem"},
                             {"add", "user", "alice,bob", "account=physics"},
                             {"add", "user", "carol", "account=chem"}});
  // No usage at all: every LevelFS is infinite, every user ties at the top.
  FairShare idle(m, "c", {}, 1000, kNoDecay);
  CHECK(row(idle, "physics", "alice").fair_share == doctest::Approx(1.0));
  CHECK(row(idle, "chem", "carol").fair_share == doctest::Approx(1.0));
  CHECK(std::isinf(row(idle, "physics", "").level_fs));
  // alice used 300 CPU-seconds: physics falls below chem; carol first, then bob, then alice.
  FairShare fs(m, "c", {used("physics", "alice", 100, 400, 1)}, 1000, kNoDecay);
  CHECK(row(fs, "root", "").raw_usage == doctest::Approx(300));
  CHECK(row(fs, "physics", "").raw_usage == doctest::Approx(300));
  const ShareRow& physics = row(fs, "physics", "");
  CHECK(physics.norm_shares == doctest::Approx(1.0 / 3));  // root, physics, chem under root: one share each
  CHECK(physics.effective_usage == doctest::Approx(1.0));
  CHECK(physics.level_fs == doctest::Approx(1.0 / 3));
  double users = 4;  // root, alice, bob, carol
  CHECK(row(fs, "root", "root").fair_share == doctest::Approx(4 / users));
  CHECK(row(fs, "chem", "carol").fair_share == doctest::Approx(4 / users));  // chem ties root's user: its first child too
  CHECK(row(fs, "physics", "bob").fair_share == doctest::Approx(2 / users));
  CHECK(row(fs, "physics", "alice").fair_share == doctest::Approx(1 / users));
  CHECK(fs.factor("alice", "physics", "") == doctest::Approx(0.25));
  CHECK(fs.factor("nobody", "physics", "") == 0);
  // Records of an association that is gone count for nothing.
  FairShare gone(m, "c", {used("biology", "alice", 100, 400, 1)}, 1000, kNoDecay);
  CHECK(gone.rows().front().raw_usage == 0);
}

TEST_CASE("fair tree: more shares earn more usage before falling behind - tied accounts merge their children") {
  AcctModel m = model_after({{"add", "account", "big", "fairshare=3"},
                             {"add", "account", "small", "fairshare=1"},
                             {"add", "user", "b1", "account=big"},
                             {"add", "user", "s1", "account=small"},
                             {"modify", "user", "root", "set", "fairshare=0"}});
  // Equal usage: big (3 of 4 shares) is above small.
  FairShare fs(m, "c", {used("big", "b1", 1, 101, 1), used("small", "s1", 1, 101, 1)}, 1000, kNoDecay);
  CHECK(row(fs, "big", "b1").fair_share > row(fs, "small", "s1").fair_share);
  CHECK(row(fs, "root", "root").level_fs == 0);  // no shares: LevelFS 0, ranked last
  CHECK(row(fs, "root", "root").fair_share < row(fs, "small", "s1").fair_share);
  // Three times the usage: level again - the accounts tie, their users merge and tie.
  FairShare level(m, "c", {used("big", "b1", 1, 301, 1), used("small", "s1", 1, 101, 1)}, 1000, kNoDecay);
  CHECK(row(level, "big", "").level_fs == doctest::Approx(row(level, "small", "").level_fs));
  CHECK(row(level, "big", "b1").fair_share == doctest::Approx(row(level, "small", "s1").fair_share));
}

TEST_CASE("classic fair share: F = 2^(-effective usage / normalised shares)") {
  AcctModel m = model_after({{"add", "account", "a,b"}, {"add", "user", "u1", "account=a"}, {"add", "user", "u2", "account=b"},
                             {"modify", "user", "root", "set", "fairshare=0"}});
  FairShareConfig classic{0, true, 1.0};
  FairShare fs(m, "c", {used("a", "u1", 1, 76, 1), used("b", "u2", 1, 26, 1)}, 1000, classic);
  // a and b: half the shares each (root's own user has none); 0.75 and 0.25 of the usage.
  const ShareRow& a = row(fs, "a", "");
  CHECK(a.norm_shares == doctest::Approx(0.5));
  CHECK(a.effective_usage == doctest::Approx(0.75));
  // u1 alone in a: its effective usage is pulled to a's (level share 1).
  CHECK(row(fs, "a", "u1").effective_usage == doctest::Approx(0.75));
  CHECK(row(fs, "a", "u1").fair_share == doctest::Approx(std::exp2(-0.75 / 0.5)));
  CHECK(row(fs, "b", "u2").fair_share == doctest::Approx(std::exp2(-0.25 / 0.5)));
}

TEST_CASE("the policy's priority factors: fair share of the job's (or the default) account, QOS priority over the highest") {
  AcctModel m = model_after({{"add", "account", "physics"}, {"add", "user", "alice", "account=physics"},
                             {"add", "qos", "high", "priority=100"}, {"modify", "qos", "normal", "set", "priority=25"}});
  auto shares = std::make_shared<const FairShare>(m, "c", std::vector<UsageRecord>{}, 1000, kNoDecay);
  AcctPolicy p(m, "c", AcctEnforce{}, shares);
  Job j;
  j.spec.user = "alice";
  CHECK(p.fairshare(j) == doctest::Approx(1.0));  // no -A: her default account, physics
  j.spec.account = "nosuch";
  CHECK(p.fairshare(j) == 0);
  CHECK(p.qos(j) == doctest::Approx(0.25));  // no QOS: normal
  JobExtras e;
  e.qos = "high";
  j.spec.extra = e;
  CHECK(p.qos(j) == doctest::Approx(1.0));
  CHECK(p.usage_factor("high") == doctest::Approx(1.0));
  CHECK(AcctPolicy(m, "c", AcctEnforce{}).fairshare(j) == 0);  // fair share not worked out yet
}

TEST_CASE("PriorityUsageResetPeriod: only what ran since the last reset counts") {
  AcctModel m = model_after({{"add", "account", "a"}, {"add", "user", "u", "account=a"}});
  FairShareConfig reset = kNoDecay;
  reset.reset_at = 2000;
  // Before the reset: nothing. Across it: the part after. After it, or still running: all.
  FairShare fs(m, "c", {used("a", "u", 100, 1500, 1), used("a", "u", 1500, 2500, 2), used("a", "u", 3000, 0, 1)}, 4000,
               reset);
  CHECK(row(fs, "a", "u").raw_usage == doctest::Approx(500 * 2 + 1000));
  CHECK(row(fs, "a", "u").used.wall == doctest::Approx(500 + 1000));
  FairShare all(m, "c", {used("a", "u", 100, 1500, 1), used("a", "u", 1500, 2500, 2), used("a", "u", 3000, 0, 1)}, 4000,
                kNoDecay);
  CHECK(row(all, "a", "u").raw_usage == doctest::Approx(1400 + 2000 + 1000));
}

TEST_CASE("a negative UsageFactor counts as 1, as Slurm applies only one that is not negative") {
  AcctModel m = model_after({{"add", "account", "a"}, {"add", "user", "u", "account=a"}});
  UsageRecord r = used("a", "u", 100, 1100, 2);
  r.factor = -1;
  FairShare fs(m, "c", {r}, 2000, kNoDecay);
  CHECK(row(fs, "a", "u").raw_usage == doctest::Approx(2000));
  CHECK(row(fs, "a", "u").used.wall == doctest::Approx(1000));
}

TEST_CASE("TRESRunMins: running jobs' TRES x seconds left summed, then minutes - as Slurm's capture of two unlimited jobs") {
  // tests/fixtures/slurm/sshare/running-sshare-l-a-P.txt: two jobs of 2 CPUs on one node
  // each, no time limit, 69 s after they started (Slurm's last pass had counted 75).
  AcctModel m = model_after({{"add", "account", "physics"}, {"add", "user", "nobody", "account=physics"}});
  ClusterState s = test::cluster("n[1-2]", 4);
  for (uint64_t id : {7, 8}) {
    test::start(s, id, {id == 7 ? "n1" : "n2"}, 2, 1000);
    Job& j = s.jobs.at(JobId{id});
    j.spec.user = "nobody";
    j.spec.account = "physics";
    j.time_limit = kUnlimited;
  }
  FairShare fs(m, "c", {}, 1069, kNoDecay);
  auto run = running_tres_seconds(fs, s, 1069);
  std::string root, nobody;
  for (size_t i = 0; i < fs.rows().size(); ++i) {
    if (fs.rows()[i].depth == 0) root = tres_run_mins_text(run[i]);
    if (fs.rows()[i].user == "nobody") nobody = tres_run_mins_text(run[i]);
  }
  const std::string slurm = "cpu=17179869175,mem=0,energy=0,node=8589934587,billing=17179869175,fs/disk=0,vmem=0,pages=0";
  CHECK(nobody == slurm);
  CHECK(root == slurm);
  // A job far past what an int64 holds in MiB-seconds saturates instead of wrapping.
  s.nodes.at("n1").mem_mib = INT64_MAX / 2;
  Job& huge = s.jobs.at(JobId{7});
  huge.alloc[0].mem_mib = INT64_MAX / 2;
  CHECK(running_tres_seconds(fs, s, 1069)[0][kTresMem] == INT64_MAX);
}
