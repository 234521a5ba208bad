// End to end: advance reservations through scontrol, sbatch --reservation, sinfo and squeue,
// as Slurm's: the reserved node runs only the reservation's jobs over its window, the rest
// wait; a reservation outlives a controller restart; at its end it goes and the jobs still
// running in it stop as at their time limit.
#include <doctest/doctest.h>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: scontrol create reservation - its jobs run on its node, others keep off - show, sinfo -T, delete, restart") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = "cd " + c.dir() + " && " + c.dir() + "/bin/";
  auto created = sh(bin + "scontrol create reservation StartTime=now Duration=60 Nodes=e1 Users=root");
  CHECK(created.rc == 0);
  CHECK(created.out == "Reservation created: root_1\n");
  auto busy = sh(bin + "scontrol create reservation StartTime=now Duration=60 Nodes=e1 Users=root");
  CHECK(busy.rc == 1);
  CHECK(busy.out.find("Error creating the reservation: Requested nodes are busy\n") != std::string::npos);
  auto no_users = sh(bin + "scontrol create reservation Duration=60 Nodes=e2");
  CHECK(no_users.rc == 1);
  CHECK(no_users.out ==
        "scontrol: error: Either Users/Groups and/or Accounts must be specified.  No reservation created.\n");
  CHECK(sh(bin + "scontrol show res").out.find("ReservationName=root_1 ") == 0);
  CHECK(sh(bin + "scontrol show res root_1").out.find("   Nodes=e1 NodeCnt=1 CoreCnt=2 ") != std::string::npos);
  CHECK(sh(bin + "sinfo -T -h").out.find("root_1       ACTIVE  ") == 0);
  CHECK(sh(bin + "sinfo -h -o '%N %t'").out == "e1 resv\ne2 idle\n");

  auto refused = sh(bin + "sbatch --reservation=nope --wrap true");
  CHECK(refused.rc == 1);
  CHECK(refused.out == "sbatch: error: Batch job submission failed: Requested reservation is invalid\n");
  // Its own job runs on e1 only; a job of the whole cluster waits while e1 is reserved.
  std::string own = c.submit("--reservation=root_1 -n2 --wrap 'sleep 60'");
  std::string wide = c.submit("-N2 -t 10 --wrap true");
  std::string small = c.submit("-n1 -t 10 --wrap 'sleep 60'");
  REQUIRE(c.wait_state(own, "RUNNING", 20));
  REQUIRE(c.wait_state(small, "RUNNING", 20));
  CHECK(c.hq("queue -h -o %N -j " + own).out == "e1\n");
  CHECK(c.hq("queue -h -o %N -j " + small).out == "e2\n");
  CHECK(sh(bin + "squeue -h -o '%v' -j " + own).out == "root_1\n");
  CHECK(sh(bin + "squeue -h -o %i -R root_1").out == own + "\n");  // -R filters in the controller
  CHECK(sh(bin + "scancel -R other").rc == 0);                      // no job of that one: nothing done
  CHECK(c.state(own) == "RUNNING");
  REQUIRE(c.wait_considered(wide, 10));
  CHECK(c.state(wide) == "PENDING");
  CHECK(sh(bin + "scontrol show job " + own).out.find("   Reservation=root_1\n") != std::string::npos);

  auto in_use = sh(bin + "scontrol delete ReservationName=root_1");
  CHECK(in_use.rc == 1);
  CHECK(in_use.out == "delete_reservation ReservationName=root_1: Requested reservation is in use\n");
  hq::cmd::stop_process(c.controller_pid(), 5000);  // journaled: it is there after a restart
  c.start_controller();
  CHECK(sh(bin + "scontrol show res -o").out.find("ReservationName=root_1 ") == 0);
  CHECK(sh(bin + "scontrol update ReservationName=root_1 Duration=120").out == "Reservation updated.\n");
  CHECK(sh(bin + "scontrol show res").out.find("Duration=02:00:00") != std::string::npos);

  CHECK(c.hq("cancel " + own + " " + small).rc == 0);
  REQUIRE(c.wait_state(own, "CANCELLED", 20));
  CHECK(sh(bin + "scontrol delete ReservationName=root_1").rc == 0);
  CHECK(sh(bin + "scontrol show reservation").out == "No reservations in the system\n");
  CHECK(c.wait_state(wide, "COMPLETED", 30));  // both nodes are its to use again
}

TEST_CASE("e2e: a reservation's end - it goes, its running job stops as at its time limit, others start") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = "cd " + c.dir() + " && " + c.dir() + "/bin/";
  REQUIRE(sh(bin + "scontrol create reservation ReservationName=short StartTime=now EndTime=now+4 Nodes=e1 "
                   "Users=root").rc == 0);
  std::string own = c.submit("--reservation=short -o short.out --wrap 'sleep 60'");
  std::string other = c.submit("-t 1 --wrap true");
  REQUIRE(c.wait_state(own, "RUNNING", 10));
  CHECK(c.state(other) == "PENDING");
  CHECK(c.wait_state(own, "TIMEOUT", 30));
  CHECK(slurp(c.dir() + "/short.out").find("DUE TO TIME LIMIT ***") != std::string::npos);
  CHECK(sh(bin + "scontrol show res").out == "No reservations in the system\n");
  CHECK(c.wait_state(other, "COMPLETED", 20));
}

TEST_CASE("e2e: only root and operators make reservations (Slurm's answer to others)") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto r = as_nobody(c, c.dir() + "/bin/scontrol create reservation Duration=60 Nodes=e1 Users=root");
  CHECK(r.rc == 1);
  CHECK(r.out == "Error creating the reservation: Invalid user id\n");
  CHECK(sh("cd " + c.dir() + " && bin/scontrol show res").out == "No reservations in the system\n");
}

TEST_CASE("e2e: sinfo marks the nodes of a MAINT reservation with $ (mix$) or maint, as Slurm 22.05") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string bin = "cd " + c.dir() + " && " + c.dir() + "/bin/";
  std::string job = c.submit("-n1 -w e1 -t 10 --wrap 'sleep 60'");
  REQUIRE(c.wait_state(job, "RUNNING", 20));
  REQUIRE(sh(bin + "scontrol create reservation StartTime=now Duration=60 Nodes=e1 Users=root Flags=MAINT,IGNORE_JOBS").rc == 0);
  REQUIRE(sh(bin + "scontrol create reservation StartTime=now Duration=60 Nodes=e2 Users=root Flags=MAINT").rc == 0);
  std::string shown;
  CHECK(wait_until([&] { return (shown = sh(bin + "sinfo -h -N -o '%N %t %T'").out) == "e1 mix$ mixed$\ne2 maint maint\n"; }, 10));
  INFO(shown);
  CHECK(sh(bin + "scancel " + job).rc == 0);
}
