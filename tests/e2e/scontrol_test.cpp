// End to end: scontrol as tools and people type it. Every command and `show` entity of
// hq's table (core/scontrol_commands, checked against Slurm's help in a unit test) reaches
// a client or answers as the table says; reconfigure takes the config file's live settings
// and refuses one that changes what is read only at start; write batch_script.
#include <doctest/doctest.h>

#include <fstream>

#include "cluster_fixture.hpp"
#include "core/scontrol_commands.hpp"

using namespace hq::test;

TEST_CASE("e2e: every scontrol command and entity of the table answers as the table says") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string sc = "cd " + c.dir() + " && " + c.dir() + "/bin/scontrol ";
  for (const auto& e : hq::scontrol_commands()) {
    std::string name(e.name);
    if (name == "reconfigure") continue;  // its own test below
    auto r = sh(sc + name);
    INFO(name << " -> rc " << r.rc << ": " << r.out);
    CHECK(r.out.find("(a bug)") == std::string::npos);  // every command it acts on reaches a client
    if (e.support == hq::ScontrolSupport::kInert) CHECK((r.rc == 0 && r.out.empty()));
    if (e.support == hq::ScontrolSupport::kRefused)
      CHECK((r.rc == 1 && r.out == "scontrol: error: command " + name + ": " + std::string(e.why) + "\n"));
  }
  for (const auto& e : hq::scontrol_show_entities()) {
    std::string name(e.name);
    auto r = sh(sc + "show " + name);
    INFO("show " << name << " -> rc " << r.rc << ": " << r.out);
    CHECK(r.out.find("unknown entity") == std::string::npos);
    if (e.support == hq::ScontrolSupport::kInert) CHECK((r.rc == 0 && r.out.empty()));
    if (e.support == hq::ScontrolSupport::kRefused) CHECK(r.rc == 1);
  }
  CHECK(sh(sc + "SHOW PART").out.find("PartitionName=debug") != std::string::npos);
  auto bogus = sh(sc + "bogus");
  CHECK(bogus.rc == 1);
  CHECK(bogus.out == "invalid keyword: bogus\n");
  auto entity = sh(sc + "show bogus");
  CHECK(entity.rc == 1);
  CHECK(entity.out == "invalid entity: bogus for keyword: show\n");
  auto option = sh(sc + "--bogus");
  CHECK(option.rc == 1);
  CHECK(option.out == "scontrol: unrecognized option '--bogus'\nTry \"scontrol --help\" for more information\n");
  auto uid = sh(sc + "-u 1000 show job");
  CHECK(uid.rc == 1);
  CHECK(uid.out.find("scontrol: error: option -u, --uid: ") == 0);
  CHECK(sh(sc + "-a -d -Q -M e2e show partition").out.find("PartitionName=debug") != std::string::npos);
}

TEST_CASE("e2e: scontrol write batch_script writes the job's script - to stdout with -") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/job.sh") << "#!/bin/bash\n#SBATCH -J scripted\necho from the script\n";
  std::string id = c.submit("-H job.sh");
  std::string sc = "cd " + c.dir() + " && " + c.dir() + "/bin/scontrol ";
  auto out = sh(sc + "write batch_script " + id + " -");
  CHECK(out.rc == 0);
  CHECK(out.out == "#!/bin/bash\n#SBATCH -J scripted\necho from the script\n");
  auto file = sh(sc + "write batch_script " + id);
  CHECK(file.out == "batch script for job " + id + " written to slurm-" + id + ".sh\n");
  CHECK(slurp(c.dir() + "/slurm-" + id + ".sh") == "#!/bin/bash\n#SBATCH -J scripted\necho from the script\n");
  auto unknown = sh(sc + "write batch_script 99999");
  CHECK(unknown.rc == 0);  // Slurm's exit code
  CHECK(unknown.out == "job script retrieval failed: Invalid job id specified\n");
  auto sbatch = sh("cd " + c.dir() + " && bin/sbatch --parsable -H --wrap 'echo wrapped'");  // Slurm's header
  std::string wrapped = sbatch.out.substr(0, sbatch.out.find('\n'));
  CHECK(sh(sc + "write batch_script " + wrapped + " -").out ==
        "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho wrapped\n");
  CHECK(c.hq("cancel " + id + " " + wrapped).rc == 0);
}

TEST_CASE("e2e: scontrol reconfigure takes the file's live settings - refuses one that changes nodes or partitions") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string sc = "cd " + c.dir() + " && " + c.dir() + "/bin/scontrol ";
  std::string config = c.dir() + "/config.toml", original = slurp(config);
  REQUIRE(sh(sc + "show config").out.find("MinJobAge               = 300 sec") != std::string::npos);

  // A live setting: taken at once.
  std::string changed = original;
  changed.replace(changed.find("[controller]\n"), 13, "[controller]\nmin_job_age = \"77s\"\n");
  std::ofstream(config, std::ios::trunc) << changed;
  auto ok = sh(sc + "reconfigure");
  CHECK(ok.rc == 0);
  CHECK(ok.out.empty());
  CHECK(sh(sc + "show config").out.find("MinJobAge               = 77 sec") != std::string::npos);

  // Partitions are read at start: refused whole, nothing changes.
  std::string parts = changed;
  parts.replace(parts.find("max_time = \"1h\""), 15, "max_time = \"2h\"");
  std::ofstream(config, std::ios::trunc) << parts.replace(parts.find("\"77s\""), 5, "\"88s\"");
  auto refused = sh(sc + "reconfigure");
  CHECK(refused.rc == 1);
  CHECK(refused.out == "slurm_reconfigure error: the config file changes what is read only at start (partitions): "
                       "restart the controller to apply it; nothing changed\n");
  CHECK(sh(sc + "show config").out.find("MinJobAge               = 77 sec") != std::string::npos);

  std::ofstream(config, std::ios::trunc) << "[cluster\nbroken";
  auto bad = sh(sc + "reconfigure");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("slurm_reconfigure error: the config file is not valid: ") == 0);
  CHECK(bad.out.find("nothing changed") != std::string::npos);
  std::ofstream(config, std::ios::trunc) << original;
  CHECK(sh(sc + "reconfigure").rc == 0);
  CHECK(sh(sc + "show config").out.find("MinJobAge               = 300 sec") != std::string::npos);
}

TEST_CASE("e2e: scontrol reconfigure is for operators - others get Slurm's Invalid user id") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto r = as_nobody(c, c.dir() + "/bin/scontrol reconfigure");
  CHECK(r.rc == 1);
  CHECK(r.out == "slurm_reconfigure error: Invalid user id\n");
}
