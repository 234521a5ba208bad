// End to end: every client takes --controller HOST:PORT, which beats HQ_CONTROLLER
// (sbatch, srun and salloc in their option tables, so a program's own arguments are
// left alone; the others wherever it appears); scontrol version, show config (Slurm's
// names and layout), wait_job and top.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: --controller reaches the controller from every client, over a wrong HQ_CONTROLLER") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = c.dir() + "/bin/", at = "127.0.0.1:" + std::to_string(c.port());
  std::string wrong = "cd " + c.dir() + " && HQ_CONTROLLER=127.0.0.1:1 ";
  CHECK(sh(wrong + bin + "squeue -h").rc != 0);  // the wrong one, as such
  auto sub = sh(wrong + bin + "sbatch --parsable --controller " + at + " --wrap 'echo --controller x'");
  INFO(sub.out);
  REQUIRE(sub.rc == 0);
  std::string id = sub.out.substr(0, sub.out.find('\n'));
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  CHECK(slurp(c.dir() + "/slurm-" + id + ".out") == "--controller x\n");  // the script's own words kept
  CHECK(sh(wrong + bin + "squeue -h -t all -o %i --controller=" + at).out.find(id) != std::string::npos);
  CHECK(sh(wrong + bin + "sinfo -h --controller " + at + " -o %D").out == "1\n");
  CHECK(sh(wrong + bin + "scontrol --controller " + at + " show job " + id).rc == 0);
  CHECK(sh(wrong + std::string(HQ_BINARY) + " --controller " + at + " queue -h").rc == 0);
  CHECK(sh(wrong + bin + "srun --controller " + at + " -n1 echo --controller y").out == "--controller y\n");
  auto held = sh(wrong + bin + "sbatch --parsable --hold --controller=" + at + " --wrap true");
  REQUIRE(held.rc == 0);
  CHECK(sh(wrong + bin + "scancel --controller " + at + " " + held.out.substr(0, held.out.find('\n'))).rc == 0);
}

TEST_CASE("e2e: scontrol version, show config, wait_job and top") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = c.dir() + "/bin/";
  auto v = sh(bin + "scontrol version");
  CHECK(v.rc == 0);
  CHECK(v.out.rfind("slurm 22.05.8 (hq ", 0) == 0);
  auto cfg = sh(bin + "scontrol show config");
  CHECK(cfg.rc == 0);
  CHECK(cfg.out.rfind("Configuration data as of ", 0) == 0);
  CHECK(cfg.out.find("\nMinJobAge               = 300 sec\n") != std::string::npos);
  CHECK(cfg.out.find("\nKillWait                = 1 sec\n") != std::string::npos);  // the fixture's kill_wait
  CHECK(cfg.out.find("\nSlurmctldPort           = " + std::to_string(c.port()) + "\n") != std::string::npos);
  // Slurm 22.05's keys in Slurm's order (its own show config on the slurm-bench, with
  // priority/basic), less the limits hq does not keep; the multifactor priority keys Slurm
  // prints with priority/multifactor; then hq's own.
  std::vector<std::string> slurm_keys, hq_keys, extra;
  {
    std::ifstream in(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/scontrol/show_config_keys.txt");
    for (std::string k; std::getline(in, k);)
      if (k != "MaxJobCount" && k != "MaxJobId" && k != "MaxStepCount" && k != "MaxTasksPerNode") slurm_keys.push_back(k);
  }
  REQUIRE(slurm_keys.size() > 150);
  std::istringstream lines(cfg.out);
  for (std::string l; std::getline(lines, l);) {
    size_t eq = l.find(" = ");
    if (eq == std::string::npos) continue;
    std::string key = l.substr(0, l.find_last_not_of(' ', eq) + 1);
    if (std::find(slurm_keys.begin(), slurm_keys.end(), key) != slurm_keys.end()) hq_keys.push_back(key);
    else extra.push_back(key);
  }
  CHECK(hq_keys == slurm_keys);
  std::string extras;
  for (const auto& k : extra) extras += k + " ";
  CHECK(extras == "PriorityDecayHalfLife PriorityCalcPeriod PriorityFavorSmall PriorityFlags PriorityMaxAge "
                  "PriorityUsageResetPeriod PriorityWeightAge PriorityWeightAssoc PriorityWeightFairShare "
                  "PriorityWeightJobSize PriorityWeightPartition PriorityWeightQOS PriorityWeightTRES HqVersion "
                  "HqSchedulerPolicy HqDynamicNodes HqFenceTimeout HqHeartbeatInterval HqPrivateJobs HqSnapshotEvery ");
  CHECK(cfg.out.find("\n\nSlurmctld(primary) at 127.0.0.1 is UP\n") != std::string::npos);
  auto sub = sh("cd " + c.dir() + " && " + bin + "sbatch --parsable --wrap 'sleep 30'");
  REQUIRE(sub.rc == 0);
  std::string id = sub.out.substr(0, sub.out.find('\n'));
  CHECK(sh(bin + "scontrol wait_job " + id).rc == 0);  // returns once it runs
  CHECK(c.state(id) == "RUNNING");
  CHECK(sh(bin + "scontrol wait_job 99999").rc == 1);
  auto held = sh("cd " + c.dir() + " && " + bin + "sbatch --parsable --hold --wrap true");
  std::string hid = held.out.substr(0, held.out.find('\n'));
  CHECK(sh(bin + "scontrol top " + hid).rc == 0);  // root: an administrator
  CHECK(sh(bin + "scontrol show job " + hid).out.find("Priority=") != std::string::npos);
  CHECK(sh(bin + "scancel " + id + " " + hid).rc == 0);
}
