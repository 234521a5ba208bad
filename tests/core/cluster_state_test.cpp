#include <doctest/doctest.h>

#include "builders.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;

TEST_CASE("apply: submit, start, end hold and release resources") {
  auto s = cluster("n[1-2]", 4);
  CHECK(apply(s, JobBuilder(7).cpus(3)));
  CHECK(s.next_job_id == 8);
  CHECK(s.pending.count(JobId{7}));
  CHECK(apply(s, JobStarted{JobId{7}, 100, {{"n1", 3, 10, 1}}}));
  CHECK(s.nodes.at("n1").alloc_cpus == 3);
  CHECK(node_state_name(s.nodes.at("n1")) == "MIXED");
  CHECK(apply(s, JobEnded{JobId{7}, 160, JobState::kCompleted, 0, 0, ""}));
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
  CHECK(node_state_name(s.nodes.at("n1")) == "IDLE");
  CHECK(find_job(s, JobId{7})->state == JobState::kCompleted);
}

TEST_CASE("apply: stale and duplicate events change nothing") {
  auto s = cluster("n1", 4);
  CHECK(apply(s, JobBuilder(1)));
  CHECK(!apply(s, JobBuilder(1)));                                     // duplicate submit
  CHECK(!apply(s, JobStarted{JobId{9}, 0, {}}));                       // unknown job
  CHECK(apply(s, JobEnded{JobId{1}, 5, JobState::kCancelled, 0, 0, ""}));
  CHECK(!apply(s, JobEnded{JobId{1}, 6, JobState::kCompleted, 0, 0, ""}));  // second end
  CHECK(!apply(s, JobStarted{JobId{1}, 7, {{"n1", 1, 0, 1}}}));         // start after end
  CHECK(find_job(s, JobId{1})->state == JobState::kCancelled);
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
}

TEST_CASE("purge drops only old finished jobs") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1));
  apply(s, JobBuilder(2));
  apply(s, JobEnded{JobId{1}, 10, JobState::kCompleted, 0, 0, ""});
  CHECK(purge_finished(s, 5) == 0);
  CHECK(purge_finished(s, 11) == 1);
  CHECK(s.jobs.size() == 1);
  CHECK(s.next_job_id == 3);  // ids keep increasing after a purge
}

TEST_CASE("apply: requeue returns a running job to the queue with the same id") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1).cpus(2));
  CHECK(!apply(s, JobRequeued{JobId{1}, 5, ""}));  // only running jobs requeue
  apply(s, JobStarted{JobId{1}, 10, {{"n1", 2, 0, 1}}});
  CHECK(apply(s, JobRequeued{JobId{1}, 11, ""}));
  const Job* j = find_job(s, JobId{1});
  CHECK(j->state == JobState::kPending);
  CHECK(j->alloc.empty());
  CHECK(j->restart_count == 1);
  CHECK(s.pending.count(JobId{1}));
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
}

TEST_CASE("apply: a start without an allocation is refused") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1));
  CHECK(!apply(s, JobStarted{JobId{1}, 10, {}}));
  CHECK(find_job(s, JobId{1})->state == JobState::kPending);
}

TEST_CASE("validate_spec: bounds that keep products from overflowing") {
  JobSpec ok;
  ok.script = "#!/bin/sh\n";
  CHECK(validate_spec(ok).is_ok());
  auto with = [&](auto fn) { JobSpec s = ok; fn(s); return validate_spec(s).is_ok(); };
  CHECK(!with([](JobSpec& s) { s.ntasks = 0; }));
  CHECK(!with([](JobSpec& s) { s.ntasks = 1 << 24; s.cpus_per_task = 1 << 20; }));
  CHECK(!with([](JobSpec& s) { s.cpus_per_task = -1; }));
  CHECK(!with([](JobSpec& s) { s.nodes_min = 0; }));
  CHECK(!with([](JobSpec& s) { s.nodes_min = 4; s.nodes_max = 2; }));
  CHECK(!with([](JobSpec& s) { s.mem_per_node_mib = -5; }));
  CHECK(!with([](JobSpec& s) { s.time_limit = -7; }));
  CHECK(!with([](JobSpec& s) { s.script.clear(); }));
  CHECK(with([](JobSpec& s) { s.ntasks = 64; s.cpus_per_task = 2; s.nodes_min = 2; s.nodes_max = 4; }));
}
