// End to end: scontrol update JobId= through the persona. A pending job's name, limit,
// comment and partition change; a running job's new time limit reaches its node (which
// ends it at the new limit); Slurm's errors for unknown keys, bad values, unknown jobs
// and changes a running job no longer takes.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: scontrol update changes a pending job's request and a running job's time limit") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string scontrol = "cd " + c.dir() + " && " + c.dir() + "/bin/scontrol ";
  std::string held = c.submit("-H -t 10 -J before --wrap true");
  REQUIRE(c.state(held) == "PENDING");
  auto ok = sh(scontrol + "update JobId=" + held + " timelimit=5 Name=after Comment='a note' NumTasks=1");
  INFO(ok.out);
  CHECK(ok.rc == 0);
  CHECK(ok.out.empty());
  auto shown = c.hq("show job " + held).out;
  CHECK(shown.find(" JobName=after\n") != std::string::npos);
  CHECK(shown.find(" TimeLimit=00:05:00 ") != std::string::npos);
  CHECK(shown.find("   Comment=a note \n") != std::string::npos);

  auto bogus = sh(scontrol + "update JobId=" + held + " bogus=1");
  CHECK(bogus.rc == 1);
  CHECK(bogus.out == "Update of this parameter is not supported: bogus=1\nRequest aborted\n");
  auto bad = sh(scontrol + "update JobId=" + held + " TimeLimit=xx");
  CHECK(bad.rc == 1);
  CHECK(bad.out == "scontrol: error: Invalid TimeLimit value\n");
  auto unknown = sh(scontrol + "update JobId=999 TimeLimit=5");
  CHECK(unknown.rc == 1);
  CHECK(unknown.out == "Invalid job id specified for job 999\n");
  auto partition = sh(scontrol + "update JobId=" + held + " Partition=nope");
  CHECK(partition.rc == 1);
  CHECK(partition.out.find("for job " + held + "\n") != std::string::npos);
  auto none = sh(scontrol + "update TimeLimit=5");
  CHECK(none.rc == 1);
  CHECK(none.out.find("No valid entity in update command") == 0);
  CHECK(sh(scontrol + "update JobId=" + held + " TimeLimit=0:05").rc == 0);  // Slurm's whole minutes, rounded up
  CHECK(c.hq("show job " + held).out.find(" TimeLimit=00:01:00 ") != std::string::npos);

  // A start time set while held holds after the release: eligible then, and squeue's %S shows it.
  REQUIRE(sh(scontrol + "update JobId=" + held + " StartTime=now+1hour").rc == 0);
  REQUIRE(sh(scontrol + "release " + held).rc == 0);
  auto released = c.hq("show job " + held).out;
  auto value = [&](const std::string& key) {
    size_t at = released.find(" " + key + "=");
    if (at == std::string::npos) return std::string();
    at += key.size() + 2;
    return released.substr(at, released.find_first_of(" \n", at) - at);
  };
  INFO(released);
  CHECK(value("StartTime") != "Unknown");
  CHECK(value("EligibleTime") == value("StartTime"));  // the start time, not the release's
  CHECK(sh("cd " + c.dir() + " && " + c.dir() + "/bin/squeue -h -o %S -j " + held).out != "N/A\n");
  CHECK(c.hq("cancel " + held).rc == 0);

  std::string run = c.submit("-t 10 --wrap 'sleep 300'");
  REQUIRE(c.wait_state(run, "RUNNING", 15));
  auto moved = sh(scontrol + "update JobId=" + run + " Partition=debug");
  CHECK(moved.rc == 1);
  CHECK(moved.out == "Job is no longer pending execution for job " + run + "\n");
  CHECK(sh(scontrol + "update JobId=" + run + " TimeLimit=2s").rc == 0);  // hq's seconds: 2 s from its start
  CHECK(c.wait_state(run, "TIMEOUT", 20));
  CHECK(c.hq("show job " + run).out.find(" TimeLimit=00:00:02 ") != std::string::npos);
}

TEST_CASE("e2e: --deadline - a job that can no longer finish by it ends DEADLINE (Reason=DeadLine) - one before its start is refused") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  auto busy = c.submit("-n1 --wrap 'sleep 60'");
  REQUIRE(c.wait_state(busy, "RUNNING", 20));
  auto late = c.submit("-t 5 --deadline=now+1minute --wrap true");  // 5 minutes cannot end within 1
  REQUIRE(late.find("ERROR") == std::string::npos);
  CHECK(c.wait_state(late, "DEADLINE", 20));
  auto shown = c.hq("show job " + late).out;
  CHECK(shown.find("JobState=DEADLINE Reason=DeadLine") != std::string::npos);
  CHECK(c.hq("queue -h -t DL -o %i").out == late + "\n");
  auto fits = c.submit("-t 1 --deadline=now+1hour --wrap true");  // waits for the node, in time
  CHECK(c.state(fits) == "PENDING");
  auto past = c.hq("submit --deadline=2001-01-01T00:00:00 --wrap true");
  CHECK(past.rc == 1);
  CHECK(past.out.find("Requested time limit is invalid (missing or exceeds some limit)") != std::string::npos);
  CHECK(c.hq("cancel " + busy + " " + fits).rc == 0);
}

TEST_CASE("e2e: --deadline with --time-min - the job starts with a limit that ends by its deadline") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  auto id = c.submit("-t 60 --time-min=1 --deadline=now+3minutes --wrap 'sleep 300'");
  REQUIRE(c.wait_state(id, "RUNNING", 20));
  std::string shown = c.hq("show job " + id).out;
  size_t at = shown.find("TimeLimit=");
  REQUIRE(at != std::string::npos);
  std::string limit = shown.substr(at + 10, 8);  // HH:MM:SS
  INFO(limit);
  CHECK(limit >= "00:02:30");  // about three minutes (the deadline less the time to start it), not an hour
  CHECK(limit <= "00:03:00");
  CHECK(c.hq("cancel " + id).rc == 0);
}
