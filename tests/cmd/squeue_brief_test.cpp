// squeue's brief listings (QueueRequest.brief, net::kBriefFields): asked for exactly when
// every column and sort key is one the brief view carries, and then printing the same
// bytes as the full records would, over jobs of every kind (running, pending, held,
// suspended, array tasks, several partitions, no time limit).
#include <doctest/doctest.h>

#include "../core/builders.hpp"
#include "cmd/client/queue_format.hpp"
#include "golden_cases.hpp"
#include "net/convert.hpp"

using namespace hq;

namespace {

std::vector<Job> varied_jobs() {
  std::vector<Job> jobs;
  Job run = test::JobBuilder(7).name("train", 1000).tasks(4).cpus(2).nodes(2).submitted(100).build();
  run.spec.user = "alice";
  run.state = JobState::kRunning;
  run.start_time = 200;
  run.alloc = {NodeAlloc{"n1", 4}, NodeAlloc{"n2", 4}};
  jobs.push_back(run);
  Job susp = run;
  susp.id = JobId{8};
  susp.suspended = true;
  susp.suspend_time = 400;
  susp.suspended_secs = 30;
  jobs.push_back(susp);
  Job pend = test::JobBuilder(9).name("wide job", 1001).nodes(3).limit(kUnlimited).submitted(150).begin(900).build();
  pend.spec.user = "bob";
  pend.reason = JobReason::kResources;
  pend.expected_start = 700;
  pend.priority = 55;
  jobs.push_back(pend);
  Job held = test::JobBuilder(10).name("held", 1001).held().partitions({"batch", "gpu"}).build();
  held.spec.user = "bob";
  held.reason = JobReason::kJobHeldUser;
  jobs.push_back(held);
  for (int32_t task = 1; task <= 3; ++task) {
    Job t = test::JobBuilder(10 + static_cast<uint64_t>(task)).name("arr", 1000).array(11, task, 2).submitted(120).build();
    t.spec.user = "alice";
    t.reason = JobReason::kPriority;
    jobs.push_back(t);
  }
  return jobs;
}

struct Listing {
  bool asked_brief = false;
  std::string out;
};

// squeue `args` over the jobs, the controller answering as it would (brief or full).
Listing list(const std::vector<std::string>& args, bool honour_brief) {
  Listing l;
  pb::QueueReply r;
  auto captured = test::capture_output([&] {
    return cmd::queue_with(args, [&](const pb::QueueRequest& q) -> Result<pb::QueueReply*> {
      l.asked_brief = q.brief();
      r.Clear();
      r.set_now(1000);
      for (const Job& j : varied_jobs()) {
        if (q.brief() && honour_brief) net::to_pb_brief(j, *r.add_jobs());
        else net::to_pb(j, false, *r.add_jobs());
      }
      return &r;
    });
  });
  l.out = captured.out;
  return l;
}

}  // namespace

TEST_CASE("squeue: brief listings print what full records print, and are asked for only where they suffice") {
  const std::vector<std::vector<std::string>> brief_lines = {
      {"squeue"},
      {"squeue", "-l"},
      {"squeue", "-r"},
      {"squeue", "-o", "%.18i %A %F %K %P %j %u %U %t %T %M %D %R %N %l %L %C %r %S %V %e %Q"},
      {"squeue", "-S", "-C,u,-M,l,V", "-o", "%i %C %u"},
      {"squeue", "-O", "JobID,Partition,Name,UserName,State,TimeUsed,NumNodes,ReasonList"},
  };
  for (const auto& args : brief_lines) {
    CAPTURE(args.back());
    Listing brief = list(args, true), full = list(args, false);
    CHECK(brief.asked_brief);
    CHECK(brief.out == full.out);
    CHECK(brief.out.find("alice") != std::string::npos);
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"squeue", "-o", "%i %a"}, {"squeue", "-o", "%i %Z"}, {"squeue", "-S", "a"}, {"squeue", "--json"}}) {
    CAPTURE(args.back());
    CHECK(!list(args, true).asked_brief);
  }
}

TEST_CASE("squeue: a cell's view is the text squeue_value gives, for every field over jobs of every kind") {
  std::string letters = "iAFKPjuUtTMDRNlLCrSVeQaZomcEyBnxYkqvwfgG";
  for (char c : {kSqNumTasks, kSqExitCode, kSqStdOut, kSqStdErr, kSqStdIn, kSqTimeMin, kSqDeadline, kSqCpusPerTask,
                 kSqRestarts, kSqReqSwitch, kSqWait4Switch})
    letters += c;
  std::string scratch = "left over from another cell";
  for (const Job& j : varied_jobs()) {
    for (bool brief : {false, true}) {
      pb::Job pj;
      if (brief) net::to_pb_brief(j, pj);
      else net::to_pb(j, false, pj);
      for (char f : letters)
        CHECK_MESSAGE(std::string(cmd::squeue_cell(pj, f, 1000, scratch)) == cmd::squeue_value(pj, f, 1000),
                      "job " << j.id.value << " field " << f);
    }
  }
}
