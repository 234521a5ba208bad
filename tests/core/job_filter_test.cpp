// squeue's job filters as Slurm 22.05 parses them: -t in any case, codes and names, "all"
// alone; users, partitions, names and accounts as lists.
#include <doctest/doctest.h>

#include "core/job_filter.hpp"

using namespace hq;

namespace {
Job job_in(JobState state, const std::string& user = "alice", const std::string& partition = "main") {
  Job j;
  j.state = state;
  j.spec.user = user;
  j.spec.name = "train";
  j.spec.account = "physics";
  j.partition = partition;
  return j;
}
}  // namespace

TEST_CASE("job filter: -t takes names and codes in any case - all alone - unknown ones get Slurm's two lines") {
  JobFilter f;
  REQUIRE(parse_state_filter("pending,r", f).is_ok());
  CHECK(job_matches(f, job_in(JobState::kPending)));
  CHECK(job_matches(f, job_in(JobState::kRunning)));
  CHECK_FALSE(job_matches(f, job_in(JobState::kCompleted)));
  JobFilter codes;
  REQUIRE(parse_state_filter("CD,oom,To", codes).is_ok());
  CHECK(job_matches(codes, job_in(JobState::kCompleted)));
  CHECK(job_matches(codes, job_in(JobState::kOutOfMemory)));
  CHECK(job_matches(codes, job_in(JobState::kTimeout)));
  CHECK_FALSE(job_matches(codes, job_in(JobState::kPending)));
  JobFilter all;
  REQUIRE(parse_state_filter("ALL", all).is_ok());
  CHECK(job_matches(all, job_in(JobState::kFailed)));
  JobFilter suspended;  // a suspended job is running underneath: S takes it, R does not
  REQUIRE(parse_state_filter("suspended", suspended).is_ok());
  CHECK_FALSE(job_matches(suspended, job_in(JobState::kRunning)));
  Job stopped = job_in(JobState::kRunning);
  stopped.suspended = true;
  CHECK(job_matches(suspended, stopped));
  CHECK_FALSE(job_matches(f, stopped));
  JobFilter code;
  REQUIRE(parse_state_filter("S", code).is_ok());
  CHECK(job_matches(code, stopped));
  JobFilter staging;  // a Slurm state hq's jobs are never in: taken, matches nothing
  REQUIRE(parse_state_filter("stage_out", staging).is_ok());
  CHECK_FALSE(job_matches(staging, job_in(JobState::kRunning)));
  CHECK(job_matches(JobFilter{}, stopped));  // no -t: it has not ended
  JobFilter bad;
  Status s = parse_state_filter("pd,CD,all", bad);  // "all" in a list is a state name, as in Slurm
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().rfind("Invalid job state specified: all\nValid job states include: PENDING,RUNNING,", 0) == 0);
  JobFilter none;  // no -t: the jobs that have not ended
  CHECK(job_matches(none, job_in(JobState::kRunning)));
  CHECK_FALSE(job_matches(none, job_in(JobState::kCompleted)));
}

TEST_CASE("job filter: users, partitions, names and accounts are lists - any one matches") {
  JobFilter f;
  f.users = {"bob", "alice"};
  CHECK(job_matches(f, job_in(JobState::kPending, "alice")));
  CHECK_FALSE(job_matches(f, job_in(JobState::kPending, "carol")));
  JobFilter p;
  p.partitions = {"gpu"};
  CHECK(job_matches(p, job_in(JobState::kPending, "alice", "gpu")));
  CHECK_FALSE(job_matches(p, job_in(JobState::kPending, "alice", "main")));
  Job listed = job_in(JobState::kPending);
  listed.spec.partition = "main,gpu";  // asked for either: it is in both lists
  CHECK(job_matches(p, listed));
  JobFilter n;
  n.names = {"train"};
  n.accounts = {"physics"};
  CHECK(job_matches(n, job_in(JobState::kRunning)));
  n.accounts = {"chemistry"};
  CHECK_FALSE(job_matches(n, job_in(JobState::kRunning)));
}

TEST_CASE("job filter: -q by QOS, -w by the nodes a job holds, -L matches nothing (no licenses)") {
  Job running = job_in(JobState::kRunning);
  running.alloc.push_back(NodeAlloc{"n2", 1, 0});
  JobExtras extras;
  extras.qos = "high";
  running.spec.extra = extras;
  JobFilter q;
  q.qos = {"high"};
  CHECK(job_matches(q, running));
  q.qos = {"low"};
  CHECK_FALSE(job_matches(q, running));
  JobFilter w;
  w.nodes = {"n1", "n2"};
  CHECK(job_matches(w, running));
  CHECK_FALSE(job_matches(w, job_in(JobState::kPending)));  // holds no node yet
  w.nodes = {"n3"};
  CHECK_FALSE(job_matches(w, running));
  JobFilter l;
  l.licenses_given = true;
  CHECK_FALSE(job_matches(l, running));
}
