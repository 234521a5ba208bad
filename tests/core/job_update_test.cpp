// scontrol update JobId= settings: parsing with Slurm's errors, and who may change what
// on a pending, running or ended job (core/job_update).
#include <doctest/doctest.h>

#include "builders.hpp"
#include "core/job_update.hpp"

using namespace hq;
using test::JobBuilder;

namespace {
JobUpdate parsed(std::vector<std::string> settings) {
  auto u = parse_job_update(settings);
  REQUIRE(u.is_ok());
  return *u;
}
// A job as submitted: with its script (the builder's has none).
Job batch(Job j) {
  j.spec.script = std::string("#!/bin/sh\ntrue\n");
  return j;
}
Job running(Job j) {
  j.state = JobState::kRunning;
  j.start_time = 100;
  return j;
}
}  // namespace

TEST_CASE("parse_job_update: keys in any case, Slurm's value forms and errors") {
  JobUpdate u = parsed({"timelimit=1:30:00", "NAME=renamed", "Comment=", "NumNodes=2-4", "MinMemoryNode=2G",
                        "Nice=5", "ArrayTaskThrottle=3", "Priority=TOP"});
  CHECK(*u.time_limit == 5400);
  CHECK(u.time_limit_sign == 0);
  CHECK(*u.name == "renamed");
  CHECK(*u.comment == "");  // an empty comment clears it
  CHECK(*u.nodes_min == 2);
  CHECK(*u.nodes_max == 4);
  CHECK(*u.mem_per_node_mib == 2048);
  CHECK(*u.nice == 5);
  CHECK(*u.array_throttle == 3);
  CHECK(*u.priority == 4294967294LL);
  CHECK(u.changes_resources());
  CHECK(*parsed({"TimeLimit=UNLIMITED"}).time_limit == kUnlimited);
  JobUpdate more = parsed({"TimeLimit=+30"});
  CHECK(more.time_limit_sign == 1);
  CHECK(*more.time_limit == 1800);
  CHECK(*parsed({"TimeLimit=0:05"}).time_limit == 60);  // Slurm's whole minutes, rounded up
  CHECK(*parsed({"TimeLimit=+1:30"}).time_limit == 120);
  CHECK(*parsed({"TimeMin=0:30"}).time_min == 60);

  auto bogus = parse_job_update({"bogus=1"});
  REQUIRE_FALSE(bogus.is_ok());
  CHECK(bogus.status().message() == "Update of this parameter is not supported: bogus=1");
  CHECK(parse_job_update({"TimeLimit=xx"}).status().message() == "Invalid TimeLimit value");
  CHECK(parse_job_update({"NumNodes=4-2"}).status().message() == "Invalid NumNodes value");
  CHECK(parse_job_update({"Name="}).status().message() == "Invalid Name value");
  CHECK(parse_job_update({"TimeLimit=+UNLIMITED"}).status().message() == "Invalid TimeLimit value");
  CHECK_FALSE(parse_job_update({"Priority=0"}).is_ok());  // a hold, which scontrol hold is for
  CHECK_FALSE(parse_job_update({"noequals"}).is_ok());
}

TEST_CASE("apply_job_update: a pending job changes in anything - a running one only in its limit, name and notes") {
  Job pending = batch(JobBuilder(7).limit(600).submitted(10).build());
  auto p = apply_job_update(pending, parsed({"TimeLimit=5", "Partition=other", "NumTasks=4", "Comment=hi",
                                             "StartTime=500"}),
                            false, 500, 0);
  REQUIRE(p.is_ok());
  CHECK(p->time_limit == 300);
  CHECK(p->spec.partition == "other");
  CHECK(p->spec.ntasks == 4);
  CHECK(p->spec.extra->comment == "hi");
  CHECK(p->spec.begin_time == 500);
  CHECK(p->eligible_time == 500);
  CHECK(pending.spec.extra->comment.empty());  // the job itself is untouched

  Job run = running(pending);
  auto shorter = apply_job_update(run, parsed({"TimeLimit=-2", "Name=x"}), false, 0, 0);
  REQUIRE(shorter.is_ok());
  CHECK(shorter->time_limit == 480);
  CHECK(shorter->spec.name == "x");
  auto moved = apply_job_update(run, parsed({"Partition=other"}), true, 0, 0);
  CHECK(moved.status().message() == "Job is no longer pending execution");

  Job ended = run;
  ended.state = JobState::kCompleted;
  CHECK(apply_job_update(ended, parsed({"Comment=late"}), true, 0, 0).status().message() == "Job has already finished");
}

TEST_CASE("apply_job_update: users only shorten limits - priority and negative nice are for administrators") {
  Job job = batch(JobBuilder(3).limit(600).build());
  for (const char* longer : {"TimeLimit=11", "TimeLimit=+1", "TimeLimit=UNLIMITED"}) {
    INFO(std::string(longer));
    auto r = apply_job_update(job, parsed({longer}), false, 0, 0);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == Code::kDenied);
    CHECK(apply_job_update(job, parsed({longer}), true, 0, 0).is_ok());
  }
  CHECK(apply_job_update(job, parsed({"Priority=10"}), false, 0, 0).status().code() == Code::kDenied);
  CHECK(apply_job_update(job, parsed({"Nice=-10"}), false, 0, 0).status().code() == Code::kDenied);
  auto admin = apply_job_update(job, parsed({"Priority=10", "Nice=-10"}), true, 0, 0);
  REQUIRE(admin.is_ok());
  CHECK(admin->spec.extra->priority == 10);
  CHECK(admin->spec.nice == -10);
  auto not_array = apply_job_update(job, parsed({"ArrayTaskThrottle=2"}), true, 0, 0);  // Slurm 22.05 takes it
  REQUIRE(not_array.is_ok());
  CHECK(not_array->array_throttle == 0);  // and it changes nothing
  Job task = batch(JobBuilder(4).array(4, 0, 1).build());
  auto throttled = apply_job_update(task, parsed({"ArrayTaskThrottle=2"}), false, 0, 0);
  REQUIRE(throttled.is_ok());
  CHECK(throttled->array_throttle == 2);
}
