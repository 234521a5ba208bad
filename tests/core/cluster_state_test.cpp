#include <doctest/doctest.h>

#include <limits>

#include "builders.hpp"

using namespace hq;
using hq::test::cluster;
using hq::test::JobBuilder;

TEST_CASE("apply: submit, start, end hold and release resources") {
  auto s = cluster("n[1-2]", 4);
  CHECK(apply(s, JobBuilder(7).cpus(3)));
  CHECK(s.next_job_id == 8);
  CHECK(s.pending_jobs == 1);
  CHECK(apply(s, JobStarted{JobId{7}, 100, {{"n1", 3, 10, 1}}}));
  CHECK(s.pending_jobs == 0);
  CHECK(s.nodes.at("n1").alloc_cpus == 3);
  CHECK(node_state_name(s.nodes.at("n1")) == "MIXED");
  CHECK(apply(s, JobEnded{JobId{7}, 160, JobState::kCompleted, 0, 0}));
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
  CHECK(node_state_name(s.nodes.at("n1")) == "IDLE");
  CHECK(find_job(s, JobId{7})->state == JobState::kCompleted);
}

TEST_CASE("apply: stale and duplicate events change nothing") {
  auto s = cluster("n1", 4);
  CHECK(apply(s, JobBuilder(1)));
  CHECK(!apply(s, JobBuilder(1)));                                     // duplicate submit
  CHECK(!apply(s, JobStarted{JobId{9}, 0, {}}));                       // unknown job
  CHECK(apply(s, JobEnded{JobId{1}, 5, JobState::kCancelled, 0, 0}));
  CHECK(!apply(s, JobEnded{JobId{1}, 6, JobState::kCompleted, 0, 0}));  // second end
  CHECK(!apply(s, JobStarted{JobId{1}, 7, {{"n1", 1, 0, 1}}}));         // start after end
  CHECK(find_job(s, JobId{1})->state == JobState::kCancelled);
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
}

TEST_CASE("purge drops only old finished jobs") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1));
  apply(s, JobBuilder(2));
  apply(s, JobEnded{JobId{1}, 10, JobState::kCompleted, 0, 0});
  CHECK(purge_finished(s, 5) == 0);
  CHECK(purge_finished(s, 11) == 1);
  CHECK(s.jobs.size() == 1);
  CHECK(s.next_job_id == 3);  // ids keep increasing after a purge
}

TEST_CASE("apply: requeue returns a running job to the queue with the same id") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1).cpus(2));
  CHECK(!apply(s, JobRequeued{JobId{1}, 5}));  // only running jobs requeue
  apply(s, JobStarted{JobId{1}, 10, {{"n1", 2, 0, 1}}});
  CHECK(apply(s, JobRequeued{JobId{1}, 11}));
  const Job* j = find_job(s, JobId{1});
  CHECK(j->state == JobState::kPending);
  CHECK(j->alloc.empty());
  CHECK(j->restart_count == 1);
  CHECK(s.pending_jobs == 1);
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
  CHECK(!with([](JobSpec& s) { s.script = ""; }));
  CHECK(with([](JobSpec& s) { s.ntasks = 64; s.cpus_per_task = 2; s.nodes_min = 2; s.nodes_max = 4; }));
}

TEST_CASE("partition node expressions: hostlists, feature{NAME} and ALL - errors are named") {
  PartitionConfig p;
  REQUIRE(parse_partition_nodes("n[1-2],feature{gpu},m3", p).is_ok());
  CHECK(p.nodes == std::vector<std::string>{"n1", "n2", "m3"});
  CHECK(p.node_features == std::vector<std::string>{"gpu"});
  CHECK(!p.all_nodes);
  CHECK(partition_wants(p, "x9", {"gpu"}));
  CHECK(partition_wants(p, "n2", {}));
  CHECK(!partition_wants(p, "x9", {"fast"}));
  REQUIRE(parse_partition_nodes("block{b1},switch{s2}", p).is_ok());
  CHECK(partition_wants(p, "x", {}, "b1", ""));
  CHECK(partition_wants(p, "x", {}, "", "s2"));
  CHECK(!partition_wants(p, "x", {}, "b2", "s1"));
  CHECK(!partition_wants(p, "x", {"b1"}));  // a label is not a feature
  REQUIRE(parse_partition_nodes("ALL", p).is_ok());
  CHECK(p.all_nodes);
  CHECK(p.nodes.empty());
  CHECK(parse_partition_nodes("blockwith{n1}", p).message().find("unknown node function") != std::string::npos);
  CHECK(!parse_partition_nodes("feature{}", p));
  CHECK(!parse_partition_nodes("", p));
}

TEST_CASE("dynamic nodes: join their partitions, take a recorded drain, and hold their running jobs") {
  auto s = cluster("n1", 4);
  PartitionConfig gpu;
  gpu.name = "gpu";
  REQUIRE(parse_partition_nodes("feature{gpu}", gpu).is_ok());
  s.partitions.push_back(gpu);
  // A controller restart: the job on d1 is known before d1 registers again.
  apply(s, JobBuilder(1).partition("gpu"));
  apply(s, JobStarted{JobId{1}, 0, {{"d1", 2, 100, 1, {0}}}, "gpu"});
  apply(s, NodeDrainChanged{"d1", 5, true, "flaky fan"});
  CHECK(s.drained.at("d1").reason == "flaky fan");
  CHECK(apply(s, NodeRegistered{"d1", 6, 8, 1000, {{"t", ""}, {"t", ""}}, {"gpu"}, "", "", 0, true}));
  Node& n = s.nodes.at("d1");
  n.registered = n.responding = true;
  CHECK(n.dynamic);
  CHECK(n.partitions == std::vector<std::string>{"gpu"});
  CHECK(n.alloc_cpus == 2);
  CHECK(n.alloc_gpus == 1);
  CHECK(n.drain);
  CHECK(node_reason(n) == "flaky fan");
  CHECK(node_state_name(n) == "DRAINING");
  CHECK(!node_schedulable(n));
  CHECK(s.partitions.back().nodes == std::vector<std::string>{"d1"});
  CHECK(!check_removable(s, "d1"));  // it runs a job
  CHECK(!apply(s, NodeRemoved{"d1", 7}));
  apply(s, JobEnded{JobId{1}, 9, JobState::kCompleted, 0, 0});
  CHECK(node_state_name(s.nodes.at("d1")) == "DRAINED");
  apply(s, NodeDrainChanged{"d1", 10, false, ""});
  CHECK(node_state_name(s.nodes.at("d1")) == "IDLE");
  CHECK(!apply(s, NodeDrainChanged{"d1", 11, false, ""}));  // not drained: stale
  REQUIRE(check_removable(s, "d1").is_ok());
  CHECK(apply(s, NodeRemoved{"d1", 12}));
  CHECK(s.nodes.count("d1") == 0);
  CHECK(s.partitions.back().nodes.empty());
}

TEST_CASE("jobs with the same script and environment share one copy, kept while a job holds it") {
  auto s = cluster("n1", 4);
  auto submit = [&](uint64_t id, std::string script, std::vector<std::string> env) {
    Job j = JobBuilder(id).build();
    j.spec.script = std::move(script);
    j.spec.env = std::move(env);
    apply(s, JobSubmitted{j});
    return find_job(s, JobId{id});
  };
  const Job* a = submit(1, "#!/bin/sh\necho a\n", {"HOME=/root", "X=1"});
  const Job* b = submit(2, "#!/bin/sh\necho a\n", {"HOME=/root", "X=1"});  // sent separately: equal text
  const Job* c = submit(3, "#!/bin/sh\necho c\n", {"HOME=/root", "X=2"});
  CHECK(a->spec.script.same_copy(b->spec.script));
  CHECK(a->spec.env.same_copy(b->spec.env));
  CHECK(!a->spec.script.same_copy(c->spec.script));
  CHECK(!a->spec.env.same_copy(c->spec.env));
  CHECK(*c->spec.script == "#!/bin/sh\necho c\n");
  CHECK(*b->spec.env == std::vector<std::string>{"HOME=/root", "X=1"});
  CHECK(s.scripts.size() == 2);
  // Ended and purged: the pool lets go of what no job holds.
  for (uint64_t id : {1, 3}) apply(s, JobEnded{JobId{id}, 10, JobState::kCancelled, 0, 0});
  CHECK(purge_finished(s, 100) == 2);
  CHECK(s.scripts.size() == 1);
  CHECK(s.environments.size() == 1);
  const Job* d = submit(4, "#!/bin/sh\necho c\n", {"HOME=/root", "X=2"});
  CHECK(*d->spec.script == "#!/bin/sh\necho c\n");
  CHECK(s.scripts.size() == 2);
}

TEST_CASE("a shared pool hands back its copy, for the same copy again or an equal value, while one is held") {
  SharedPool<std::string> pool;
  Shared<std::string> a("x"), b("x"), c("y");
  CHECK(pool.intern(a).same_copy(a));
  CHECK(pool.intern(a).same_copy(a));  // the copy it returned last, again
  CHECK(pool.intern(b).same_copy(a));  // an equal value
  CHECK(pool.intern(c).same_copy(c));
  CHECK(pool.intern(b).same_copy(a));
  CHECK(pool.intern(a).same_copy(a));
  CHECK(pool.size() == 2);
  a = c;  // nothing holds the pool's "x" any more (b is a copy of its own)
  pool.sweep();
  CHECK(pool.size() == 1);
  Shared<std::string> d("x");
  CHECK(pool.intern(d).same_copy(d));
  CHECK(pool.intern(b).same_copy(d));
  CHECK(*pool.intern(Shared<std::string>()) == "");  // unset: stays unset
  CHECK(pool.size() == 2);
}

TEST_CASE("purge drops the jobs that ended before the cutoff, restored ones too, and nothing else") {
  auto s = cluster("n1", 4);
  for (uint64_t id = 1; id <= 4; ++id) apply(s, JobBuilder(id));
  apply(s, JobEnded{JobId{2}, 30, JobState::kCompleted, 0, 0});
  apply(s, JobEnded{JobId{1}, 10, JobState::kCancelled, 0, 0});
  apply(s, JobEnded{JobId{3}, 20, JobState::kFailed, 1, 0});
  Job restored = JobBuilder(9).build();  // from a snapshot: already finished
  restored.state = JobState::kCompleted;
  restored.end_time = 5;
  apply(s, JobSubmitted{restored});
  CHECK(purge_finished(s, 25) == 3);
  CHECK(!find_job(s, JobId{1}));
  CHECK(!find_job(s, JobId{3}));
  CHECK(!find_job(s, JobId{9}));
  CHECK(find_job(s, JobId{2}));
  CHECK(find_job(s, JobId{4}));  // pending: never purged
  CHECK(purge_finished(s, 25) == 0);
  forget_finished(s, JobId{4});  // not finished: kept
  CHECK(find_job(s, JobId{4}));
  forget_finished(s, JobId{2});
  CHECK(!find_job(s, JobId{2}));
  CHECK(s.finished.empty());
}

TEST_CASE("a node whose features or labels change joins and leaves partitions, but not those listing it") {
  ClusterConfig config = uniform_cluster_config({"n1"}, 4, 1024, "batch");  // "batch" lists n1
  PartitionConfig gpu, rack, listed;
  gpu.name = "gpu";
  REQUIRE(parse_partition_nodes("feature{gpu}", gpu).is_ok());
  rack.name = "rack";
  REQUIRE(parse_partition_nodes("block{b1}", rack).is_ok());
  listed.name = "mine";
  REQUIRE(parse_partition_nodes("d1,feature{big}", listed).is_ok());
  for (const auto& p : {gpu, rack, listed}) config.partitions.push_back(p);
  ClusterState s = make_state(config);
  auto registered = [](std::vector<std::string> features, std::string block) {
    return NodeRegistered{"d1", 1, 8, 1000, {}, std::move(features), std::move(block), "", 0, true};
  };
  CHECK(apply(s, registered({"gpu"}, "b1")));
  const Node& n = s.nodes.at("d1");
  auto members = [&](const std::string& part) {
    const PartitionConfig* p = find_partition(s.partitions, part);
    return std::count(p->nodes.begin(), p->nodes.end(), "d1");
  };
  CHECK(members("gpu") == 1);
  CHECK(members("rack") == 1);
  CHECK(members("mine") == 1);
  CHECK(n.partitions == std::vector<std::string>{"gpu", "rack", "mine"});  // in the config's order
  // The agent comes back without the gpu feature and in another block.
  CHECK(apply(s, registered({"big"}, "b2")));
  CHECK(members("gpu") == 0);
  CHECK(members("rack") == 0);
  CHECK(members("mine") == 1);  // listed by name: stays, whatever its features
  CHECK(n.partitions == std::vector<std::string>{"mine"});
  CHECK(apply(s, registered({"gpu"}, "b1")));
  CHECK(members("gpu") == 1);
  CHECK(members("rack") == 1);
  CHECK(members("mine") == 1);
  CHECK(n.partitions == std::vector<std::string>{"gpu", "rack", "mine"});
  CHECK(find_partition(s.partitions, "batch")->nodes == std::vector<std::string>{"n1"});  // others untouched
  // Deleted and back: the config's list still holds it.
  REQUIRE(apply(s, NodeRemoved{"d1", 2}));
  CHECK(members("mine") == 0);
  CHECK(apply(s, registered({}, "")));
  CHECK(members("mine") == 1);
}

TEST_CASE("apply: a suspended job gives back its CPUs, keeps its memory, and its time suspended does not count") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1).cpus(3));
  apply(s, JobStarted{JobId{1}, 100, {{"n1", 3, 500, 1}}});
  CHECK_FALSE(apply(s, JobSuspended{JobId{1}, 105, false}));  // not suspended: nothing to resume
  REQUIRE(apply(s, JobSuspended{JobId{1}, 110, true}));
  CHECK_FALSE(apply(s, JobSuspended{JobId{1}, 111, true}));   // already
  const Job* j = find_job(s, JobId{1});
  CHECK(j->state == JobState::kRunning);
  CHECK(j->suspended);
  CHECK(j->pre_suspend_secs == 10);
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
  CHECK(s.nodes.at("n1").alloc_mem_mib == 500);
  CHECK(run_time(*j, 150) == 10);
  REQUIRE(apply(s, JobSuspended{JobId{1}, 150, false}));
  CHECK(s.nodes.at("n1").alloc_cpus == 3);
  CHECK(j->suspended_secs == 40);
  CHECK(j->suspend_time == 150);
  CHECK(run_time(*j, 155) == 15);
  Job limited = *j;
  limited.time_limit = 60;
  CHECK(limit_end(limited) == 100 + 60 + 40);
  apply(s, JobSuspended{JobId{1}, 160, true});  // ends while suspended: its CPUs are not given back twice
  CHECK(apply(s, JobEnded{JobId{1}, 170, JobState::kCancelled, 0, 0}));
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
  CHECK(s.nodes.at("n1").alloc_mem_mib == 0);
  CHECK(run_time(*j, 999) == 20);  // 100-110 and 150-160
  CHECK_FALSE(j->suspended);
}

TEST_CASE("apply: a suspended job requeued holds nothing and starts over unsuspended") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1).cpus(2));
  apply(s, JobStarted{JobId{1}, 10, {{"n1", 2, 100, 1}}});
  apply(s, JobSuspended{JobId{1}, 20, true});
  REQUIRE(apply(s, JobRequeued{JobId{1}, 30}));
  CHECK(s.nodes.at("n1").alloc_cpus == 0);
  CHECK(s.nodes.at("n1").alloc_mem_mib == 0);
  const Job* j = find_job(s, JobId{1});
  CHECK_FALSE(j->suspended);
  CHECK(j->suspended_secs == 0);
}

TEST_CASE("apply: threads per core come from the config, else from the agent's registration") {
  auto s = cluster("n[1-2]", 8);
  s.nodes.at("n2").config_threads_per_core = 1;  // the config says 1: the agent's 2 does not count
  NodeRegistered e{"n1", 5, 8, 1000};
  e.threads_per_core = 2;
  CHECK(apply(s, e));
  CHECK(s.nodes.at("n1").threads_per_core == 2);
  e.node = "n2";
  apply(s, e);
  CHECK(s.nodes.at("n2").threads_per_core == 1);
  e.node = "n1";
  e.threads_per_core = 3;  // 8 CPUs are not cores of 3: taken as 1
  CHECK(apply(s, e));
  CHECK(s.nodes.at("n1").threads_per_core == 1);
}

TEST_CASE("apply: a running job may be held (Slurm's) - it runs on, and a requeue leaves it pending and held") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1).cpus(1));
  apply(s, JobStarted{JobId{1}, 10, {{"n1", 1, 0, 1}}});
  REQUIRE(apply(s, JobHoldChanged{JobId{1}, 20, HoldKind::kUser}));
  const Job* j = find_job(s, JobId{1});
  CHECK(j->state == JobState::kRunning);
  CHECK(j->held());
  REQUIRE(apply(s, JobRequeued{JobId{1}, 30}));
  CHECK(j->state == JobState::kPending);
  CHECK(j->held());
  apply(s, JobEnded{JobId{1}, 40, JobState::kCancelled, 0, 0});
  CHECK_FALSE(apply(s, JobHoldChanged{JobId{1}, 50, HoldKind::kNone}));  // ended: nothing to release
}

TEST_CASE("apply: a release keeps a start time set while held - the job is eligible from then, not from the release") {
  auto s = cluster("n1", 4);
  apply(s, JobBuilder(1).held().submitted(10).begin(3600));  // scontrol update StartTime= on a held job
  apply(s, JobBuilder(2).held().submitted(10).begin(50));    // a start time already past at the release
  REQUIRE(apply(s, JobHoldChanged{JobId{1}, 100, HoldKind::kNone}));
  REQUIRE(apply(s, JobHoldChanged{JobId{2}, 100, HoldKind::kNone}));
  CHECK(find_job(s, JobId{1})->eligible_time == 3600);
  CHECK(find_job(s, JobId{2})->eligible_time == 100);
}

TEST_CASE("submission keys: found for their user, taken over by a later job, gone with a purged job, over many keys") {
  auto s = cluster("n1", 4);
  for (uint64_t id = 1; id <= 300; ++id)
    CHECK(apply(s, JobBuilder(id).name("j", static_cast<uint32_t>(1000 + id % 3)).submit_key("key-" + std::to_string(id))));
  for (uint64_t id = 1; id <= 300; ++id) {
    const Job* found = find_submission(s, "key-" + std::to_string(id), static_cast<uint32_t>(1000 + id % 3));
    REQUIRE(found);
    CHECK(found->id == JobId{id});
    CHECK(!find_submission(s, "key-" + std::to_string(id), static_cast<uint32_t>(1000 + (id + 1) % 3)));  // another user
  }
  CHECK(!find_submission(s, "key-301", 1000));
  CHECK(!find_submission(s, "", 1000));
  CHECK(apply(s, JobBuilder(301).name("j", 1001).submit_key("key-1")));  // the same key again: the later job has it
  CHECK(find_submission(s, "key-1", 1001)->id == JobId{301});
  CHECK(s.submit_keys.size() == 300);
  apply(s, JobEnded{JobId{301}, 10, JobState::kCancelled, 0, 0});
  apply(s, JobEnded{JobId{2}, 10, JobState::kCancelled, 0, 0});
  CHECK(purge_finished(s, 11) == 2);
  CHECK(!find_submission(s, "key-1", 1001));
  CHECK(!find_submission(s, "key-2", 1002));
  CHECK(find_submission(s, "key-3", 1000)->id == JobId{3});
  CHECK(s.submit_keys.size() == 298);
}

TEST_CASE("a job with one partition keeps it as its partition alone, and an update to one partition drops the list") {
  auto s = cluster("n1", 4);
  CHECK(apply(s, JobBuilder(1).partitions({"p"})));
  CHECK(find_job(s, JobId{1})->partitions.empty());
  CHECK(find_job(s, JobId{1})->partition == "p");
  CHECK(apply(s, JobBuilder(2).partitions({"p", "q"})));
  CHECK(find_job(s, JobId{2})->partitions == std::vector<std::string>{"p", "q"});
  Job to = *find_job(s, JobId{2});
  to.partitions = {"q"};
  to.partition = "q";
  CHECK(apply(s, JobUpdated{JobId{2}, 5, to}));
  const Job* updated = find_job(s, JobId{2});
  CHECK(updated->partitions.empty());
  CHECK(updated->partition == "q");
  std::vector<std::string> seen;
  for_each_partition(*updated, [&](const std::string& p) { seen.push_back(p); });
  CHECK(seen == std::vector<std::string>{"q"});
}

TEST_CASE("apply: an array's tasks are counted, and any event about one, or its removal, gives the array a new stamp") {
  auto s = cluster("n1", 4);
  auto task = [](uint64_t id, int32_t index) {
    Event built = JobBuilder(id);
    Job job = std::get<JobSubmitted>(built).job;
    job.array_job_id = 10;
    job.array_task_id = index;
    return JobSubmitted{job};
  };
  for (int32_t i = 0; i < 3; ++i) CHECK(apply(s, task(10 + static_cast<uint64_t>(i), i + 1)));
  CHECK(apply(s, JobBuilder(20)));  // a plain job: no array
  REQUIRE(s.arrays.count(10) == 1);
  CHECK(s.arrays.size() == 1);
  CHECK(s.arrays.at(10).tasks == 3);
  uint64_t stamp = s.arrays.at(10).stamp;
  CHECK(stamp > 0);
  CHECK(apply(s, JobStarted{JobId{20}, 5, {{"n1", 1, 0, 1}}}));
  CHECK(s.arrays.at(10).stamp == stamp);  // another job's event
  CHECK(apply(s, JobHoldChanged{JobId{11}, 6, HoldKind::kUser}));
  CHECK(s.arrays.at(10).stamp > stamp);
  stamp = s.arrays.at(10).stamp;
  CHECK(!apply(s, JobHoldChanged{JobId{11}, 7, HoldKind::kUser}));  // stale: nothing changed
  CHECK(s.arrays.at(10).stamp == stamp);
  touch_array(s, *find_job(s, JobId{12}));  // what a scheduling pass does when it changes a task's reason
  CHECK(s.arrays.at(10).stamp > stamp);
  for (uint64_t id : {10, 11, 12}) CHECK(apply(s, JobEnded{JobId{id}, 8, JobState::kCancelled, 0, 0}));
  stamp = s.arrays.at(10).stamp;
  forget_finished(s, JobId{10});
  CHECK(s.arrays.at(10).tasks == 2);
  CHECK(s.arrays.at(10).stamp > stamp);
  CHECK(purge_finished(s, 9) == 2);
  CHECK(s.arrays.count(10) == 0);  // its last task gone: not kept
}

TEST_CASE("listed_stamp: every event applied, and every job erased, changes it, and a stale event does not") {
  auto s = cluster("n1", 4);
  uint64_t stamp = s.listed_stamp;
  CHECK(apply(s, JobBuilder(1)));
  CHECK(s.listed_stamp > stamp);
  stamp = s.listed_stamp;
  CHECK(apply(s, JobHoldChanged{JobId{1}, 2, HoldKind::kUser}));
  CHECK(s.listed_stamp > stamp);
  stamp = s.listed_stamp;
  CHECK(!apply(s, JobHoldChanged{JobId{1}, 3, HoldKind::kUser}));  // nothing changed
  CHECK(s.listed_stamp == stamp);
  touch_listed(s);  // a scheduling pass's reason or priority
  CHECK(s.listed_stamp > stamp);
  CHECK(apply(s, JobEnded{JobId{1}, 4, JobState::kCancelled, 0, 0}));
  stamp = s.listed_stamp;
  forget_finished(s, JobId{1});
  CHECK(s.jobs.empty());
  CHECK(s.listed_stamp > stamp);
}

TEST_CASE("listed_line_valid_until: the clock moves a started job's line each second, a pending one's at its start or begin") {
  constexpr Time kNever = std::numeric_limits<Time>::max();
  Event built = JobBuilder(1);
  Job job = std::get<JobSubmitted>(built).job;
  job.state = JobState::kPending;
  CHECK(listed_line_valid_until(job, 100) == kNever);
  job.expected_start = 150;
  CHECK(listed_line_valid_until(job, 100) == 150);  // its start shows 150 until then
  CHECK(listed_line_valid_until(job, 150) == 151);  // then now, each second
  job.spec.begin_time = 120;
  CHECK(listed_line_valid_until(job, 100) == 120);
  job.expected_start = 0;
  CHECK(listed_line_valid_until(job, 100) == 120);
  CHECK(listed_line_valid_until(job, 130) == kNever);
  job.state = JobState::kRunning;
  job.start_time = 90;
  CHECK(listed_line_valid_until(job, 100) == 101);  // its run time
  job.state = JobState::kCompleted;
  job.end_time = 95;
  CHECK(listed_line_valid_until(job, 100) == kNever);
  job.start_time = 0;  // cancelled while pending
  job.state = JobState::kCancelled;
  CHECK(listed_line_valid_until(job, 100) == kNever);
}
