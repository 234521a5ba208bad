#include <algorithm>
#include <map>
#include <doctest/doctest.h>

#include "core/job_env.hpp"
#include "core/pattern.hpp"

using namespace hq;

TEST_CASE("output patterns") {
  PatternContext c;
  c.job_id = 128;
  c.user = "alice";
  c.job_name = "train";
  c.node = "n01";
  CHECK(expand_pattern("slurm-%j.out", c) == "slurm-128.out");
  CHECK(expand_pattern("%x-%u-%N.log", c) == "train-alice-n01.log");
  CHECK(expand_pattern("job%4j.out", c) == "job0128.out");
  CHECK(expand_pattern("job%2j-%2t.out", c) == "job128-00.out");
  CHECK(expand_pattern("100%%-%A_%a", c) == "100%-128_4294967294");
  CHECK(expand_pattern("%20j", c) == "0000000128");  // width capped at 10
  CHECK(expand_pattern("a\\%j", c) == "a%j");         // backslash disables substitution
  CHECK(expand_pattern("%q%", c) == "%q%");
  c.array_job_id = 100;
  c.array_task = 7;
  CHECK(expand_pattern("%A_%a_%b", c) == "100_7_7");
}

TEST_CASE("run-length per-node counts") {
  CHECK(run_length({72, 72, 36}) == "72(x2),36");
  CHECK(run_length({4}) == "4");
  CHECK(run_length({}) == "");
}

TEST_CASE("job environment has SLURM_* and HQ_* twins") {
  Job j;
  j.id = JobId{42};
  j.spec.name = "x";
  j.spec.env = {"PATH=/bin", "FOO=bar"};
  j.partition = "batch";
  j.alloc = {{"n1", 4, 0, 2}, {"n2", 4, 0, 2}};
  j.spec.ntasks = 4;
  j.spec.ntasks_set = true;
  auto env = job_environment(j, LaunchContext{"n1", "c", "n[1-2]", 0, 4});
  auto has = [&](const std::string& kv) { return std::find(env.begin(), env.end(), kv) != env.end(); };
  CHECK(has("SLURM_JOB_ID=42"));
  CHECK(has("HQ_JOB_ID=42"));
  CHECK(has("SLURM_JOB_NODELIST=n[1-2]"));
  CHECK(has("SLURM_NTASKS=4"));
  CHECK(has("SLURM_JOB_CPUS_PER_NODE=4(x2)"));
  CHECK(has("SLURM_CPUS_ON_NODE=4"));
  CHECK(has("SLURM_JOB_PARTITION=batch"));
  CHECK(has("FOO=bar"));
  CHECK(has("SLURMD_NODENAME=n1"));
  // As Slurm: only a job submitted with -c has SLURM_CPUS_PER_TASK (srun inside reads it
  // as its own -c, which implies --exact).
  CHECK_FALSE(std::any_of(env.begin(), env.end(), [](const std::string& kv) { return kv.rfind("SLURM_CPUS_PER_TASK=", 0) == 0; }));
  j.spec.cpus_per_task = 2;
  j.spec.cpus_per_task_set = true;
  env = job_environment(j, LaunchContext{"n1", "c", "n[1-2]", 0, 4});
  CHECK(has("SLURM_CPUS_PER_TASK=2"));
}

TEST_CASE("a pattern names a task when it has %t, %n or %N (with a width), not when escaped") {
  CHECK(names_a_task("out-%t.txt"));
  CHECK(names_a_task("out-%3t.txt"));
  CHECK(names_a_task("%N.log"));
  CHECK(names_a_task("job%j-node%n"));
  CHECK_FALSE(names_a_task("out-%j.txt"));
  CHECK_FALSE(names_a_task("out-%%t.txt"));   // a literal %t
  CHECK_FALSE(names_a_task("out-\\%t.txt"));  // a backslash turns substitution off
  CHECK_FALSE(names_a_task("plain"));
  CHECK_FALSE(names_a_task("trailing%"));
}

TEST_CASE("job environment: sorted by name, one entry a name, the job's own overridden by hq's") {
  Job j;
  j.id = JobId{7};
  j.partition = "batch";
  j.alloc = {{"n1", 2, 0, 1}};
  LaunchContext ctx{"n1", "c", "n1", 0, 2};
  auto to_map = [](const std::vector<std::string>& env) {
    std::map<std::string, std::string> m;
    for (const auto& kv : env) m[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    return m;
  };
  j.spec.env = std::vector<std::string>{};
  const auto generated = to_map(job_environment(j, ctx));
  const std::vector<std::string> names = {"PATH", "A", "Z", "SLURM_JOB_ID", "HQ_JOB_ID", "ENVIRONMENT", "SLURMD_NODENAME", "B_1"};
  uint64_t seed = 12345;
  auto next = [&] {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return seed;
  };
  for (int round = 0; round < 500; ++round) {
    std::vector<std::string> given;
    for (size_t n = next() % 12; n > 0; --n) {
      switch (next() % 6) {
        case 0: given.push_back("no-equals-sign"); break;
        case 1: given.push_back("=starts-with-one"); break;
        default: given.push_back(names[next() % names.size()] + "=" + std::to_string(next() % 100) + (next() % 2 ? "=x" : ""));
      }
    }
    // What a map assigned in order makes of it: the job's own (the last of a name), then hq's.
    std::map<std::string, std::string> expected;
    for (const auto& kv : given)
      if (size_t eq = kv.find('='); eq != std::string::npos && eq > 0) expected[kv.substr(0, eq)] = kv.substr(eq + 1);
    for (const auto& [k, v] : generated) expected[k] = v;
    j.spec.env = given;
    auto env = job_environment(j, ctx);
    std::vector<std::string> want;
    for (const auto& [k, v] : expected) want.push_back(k + "=" + v);
    REQUIRE(env == want);
  }
}
