// Job mail as Slurm sends it: --mail-type's words, which change sends which mail (FAIL
// before END for a job that failed, REQUEUE, TIME_LIMIT), Slurm's subjects, and an array
// summarized unless ARRAY_TASKS.
#include <doctest/doctest.h>

#include "builders.hpp"
#include "core/mail.hpp"

using namespace hq;
using hq::test::JobBuilder;

namespace {
Job mailing(uint64_t id, const std::string& types) {
  Job j = JobBuilder(id).build();
  j.spec.name = "train";
  JobExtras e;
  e.mail_type = *parse_mail_types(types);
  j.spec.extra = e;
  j.submit_time = 100;
  j.start_time = 130;
  j.end_time = 192;
  return j;
}
}  // namespace

TEST_CASE("mail types: Slurm's words in any case, ALL, NONE, and Slurm's error") {
  CHECK(*parse_mail_types("end,fail") == "END,FAIL");
  CHECK(*parse_mail_types("ALL") == "BEGIN,END,FAIL,REQUEUE,INVALID_DEPEND,STAGE_OUT");
  CHECK(parse_mail_types("NONE")->empty());
  CHECK(*parse_mail_types("time_limit_90,array_tasks") == "TIME_LIMIT_90,ARRAY_TASKS");
  auto bad = parse_mail_types("END,bogus");
  REQUIRE(!bad.is_ok());
  CHECK(bad.status().message() == "Invalid --mail-type specification");
}

TEST_CASE("mail: which changes send which mail, with Slurm's subjects") {
  Job j = mailing(12, "BEGIN,END,FAIL,TIME_LIMIT");
  auto begin = mails_for_start(j, {});
  REQUIRE(begin.size() == 1);
  CHECK(mail_subject(j, {}, begin[0]) == "Slurm Job_id=12 Name=train Began, Queued time 00:00:30");
  j.state = JobState::kCompleted;
  auto ended = mails_for_end(j, {}, false);
  REQUIRE(ended.size() == 1);
  CHECK(mail_subject(j, {}, ended[0]) == "Slurm Job_id=12 Name=train Ended, Run time 00:01:02, COMPLETED, ExitCode 0");
  j.state = JobState::kTimeout;  // the limit's own mail, then FAIL (not END)
  auto timeout = mails_for_end(j, {}, false);
  REQUIRE(timeout.size() == 2);
  CHECK(mail_subject(j, {}, timeout[0]) == "Slurm Job_id=12 Name=train Reached time limit, Run time 00:01:02");
  CHECK(mail_subject(j, {}, timeout[1]) == "Slurm Job_id=12 Name=train Failed, Run time 00:01:02, TIMEOUT, ExitCode 0");
  Job only_end = mailing(13, "END");
  only_end.state = JobState::kFailed;
  only_end.exit_code = 3;
  auto failed = mails_for_end(only_end, {}, false);  // END alone: a failure is an end too
  REQUIRE(failed.size() == 1);
  CHECK(mail_subject(only_end, {}, failed[0]) == "Slurm Job_id=13 Name=train Ended, Run time 00:01:02, FAILED, ExitCode 3");
  CHECK(mails_for_end(only_end, {}, true).empty());  // a requeue mails only with REQUEUE
  CHECK(mails_for_end(mailing(14, "REQUEUE"), {}, true).size() == 1);
  CHECK(mails_for_start(mailing(15, "END"), {}).empty());
}

TEST_CASE("mail: an array mails once - its first start, its last end - unless ARRAY_TASKS") {
  Job a = mailing(20, "BEGIN,END"), b = mailing(21, "BEGIN,END");
  for (Job* t : {&a, &b}) t->array_job_id = 20;
  a.array_task_id = 1;
  b.array_task_id = 2;
  b.start_time = 140;
  std::vector<const Job*> tasks{&a, &b};
  CHECK(mails_for_start(a, tasks).size() == 1);
  CHECK(mails_for_start(b, tasks).empty());  // a started first
  a.state = JobState::kCompleted;
  b.state = JobState::kRunning;
  CHECK(mails_for_end(a, tasks, false).empty());  // b still runs
  b.state = JobState::kFailed;
  b.exit_code = 2;
  auto last = mails_for_end(b, tasks, false);
  REQUIRE(last.size() == 1);
  CHECK(mail_subject(b, tasks, last[0]) == "Slurm Array Summary Job_id=20_* (20) Name=train Ended, Mixed, ExitCode [0-2]");
  Job each = mailing(30, "END,ARRAY_TASKS");
  each.array_job_id = 30;
  each.array_task_id = 4;
  each.state = JobState::kCompleted;
  auto own = mails_for_end(each, {&each}, false);
  REQUIRE(own.size() == 1);
  CHECK(mail_subject(each, {&each}, own[0]) ==
        "Slurm Array Task Job_id=30_4 (30) Name=train Ended, Run time 00:01:02, COMPLETED, ExitCode 0");
}
