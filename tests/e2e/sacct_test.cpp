// sacct against a real cluster: jobs' records reach the accounting store and outlive the
// controller's memory (MinJobAge) and a restart; Slurm 22.05's lines for the outcomes
// (tests/fixtures/slurm/sacct) and for job steps (tests/fixtures/slurm/sacct-steps); the
// command lines Snakemake and Toil send; who sees what.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "cluster_fixture.hpp"
#include "core/sluid.hpp"
#include "steps_fixture.hpp"

using namespace hq::test;

namespace {


// `sacct ARGS` until its output has `lines` lines (records ship within milliseconds).
std::string sacct_until(const LocalCluster& c, const std::string& args, size_t lines) {
  std::string out;
  wait_until([&] {
    out = sh(in_bin(c) + "sacct " + args).out;
    return static_cast<size_t>(std::count(out.begin(), out.end(), '\n')) >= lines;
  }, 10);
  return out;
}

// Slurm's lines (a -P capture in tests/fixtures/slurm/sacct-steps) of the jobs in `ids`
// (Slurm's id -> hq's), with their ids made hq's, in the order of `order` (Slurm's ids),
// the last `drop` columns left out.
std::string golden_lines(const std::string& file, const std::map<std::string, std::string>& ids,
                         const std::vector<std::string>& order, int drop) {
  std::string text = slurp(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacct-steps/" + file);
  std::map<std::string, std::string> by_job;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream fields(line);
    for (std::string f; std::getline(fields, f, '|');) cols.push_back(f);
    if (line.ends_with("|")) cols.push_back("");
    cols.resize(cols.size() - static_cast<size_t>(drop));
    std::string job = cols[0].substr(0, cols[0].find('.'));
    auto hq_id = ids.find(job);
    if (hq_id == ids.end()) continue;
    std::string out;
    for (size_t i = 0; i < cols.size(); ++i) {
      std::string col = cols[i];
      if ((i == 0 || (i == 1 && file != "fmt-times-P.txt")) && col.rfind(job, 0) == 0) col = hq_id->second + col.substr(job.size());
      out += (i ? "|" : "") + col;
    }
    by_job[job] += out + "\n";
  }
  std::string all;
  for (const auto& job : order) all += by_job[job];
  return all;
}

}  // namespace

TEST_CASE("e2e: sacct shows job steps as Slurm 22.05 does: J.batch, J.0, ... with their states and exit codes") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  // Slurm's jobs 1, 5 and 4 of the capture (its commands.txt).
  std::string failing = submit_steps(c, "-J wrap -N2 -n2", "srun hostname; srun -n1 sleep 1; srun false\n", "one.sh");
  std::string killed = submit_steps(c, "-J wrap -n1", "srun sh -c 'kill -9 $$'\n", "five.sh");
  REQUIRE(c.wait_state(failing, "FAILED", 30));
  REQUIRE(c.wait_state(killed, "FAILED", 30));
  auto srun = sh(in_bin(c) + "srun -N1 true");
  REQUIRE(srun.rc == 0);
  std::string outside = std::to_string(std::stoll(killed) + 1);
  std::map<std::string, std::string> ids = {{"1", failing}, {"5", killed}, {"4", outside}};
  std::string jobs = failing + "," + outside + "," + killed;
  // 5 lines for the first job, 3 for the second, 2 for srun's, and the header.
  std::string fields = "JobID,JobIDRaw,JobName,State,ExitCode,NNodes,NCPUS,NTasks";
  std::string got = sacct_until(c, "-P -j " + jobs + " --format=" + fields, 11);
  CHECK(got == std::string("JobID|JobIDRaw|JobName|State|ExitCode|NNodes|NCPUS|NTasks\n") +
                   golden_lines("fmt-P.txt", ids, {"1", "5", "4"}, 1));  // by hq's ids
  // The job's DerivedExitCode is its worst step's (not the batch script's: 0:9, not 9:0).
  auto derived = sh(in_bin(c) + "sacct -X -n -P -j " + jobs + " --format=JobID,DerivedExitCode");
  std::string want;
  for (const auto& [slurm, hq] : std::vector<std::pair<std::string, std::string>>{{"1", failing}, {"5", killed}, {"4", outside}}) {
    std::string line = golden_lines("fmt-times-P.txt", ids, {slurm}, 0);
    std::vector<std::string> cols;
    std::stringstream fields_in(line.substr(0, line.find('\n')));
    for (std::string f; std::getline(fields_in, f, '|');) cols.push_back(f);
    REQUIRE(cols.size() > 10);
    want += hq + "|" + cols[10] + "\n";
  }
  CHECK(derived.out == want);
  // -j J.S picks lines: the step alone, the batch line alone, a whole job with its steps.
  CHECK(sh(in_bin(c) + "sacct -n -P -o JobID -j " + failing + ".1," + killed + ".batch," + outside).out ==
        failing + ".1\n" + killed + ".batch\n" + outside + "\n" + outside + ".0\n");
  CHECK(sh(in_bin(c) + "sacct -n -P -o JobID -j " + failing + ".extern").out.empty());  // no extern steps, as the capture's
  // -X: the jobs alone.
  CHECK(sh(in_bin(c) + "sacct -X -n -P -o JobID -j " + failing).out == failing + "\n");
  // --json: the same record and steps in Slurm's data_parser shape (its keys are checked
  // against Slurm's own output in tests/cmd/sacct_json_test.cpp).
  auto json = sh(in_bin(c) + "sacct --json -j " + failing);
  CHECK(json.rc == 0);
  CHECK(json.out.find("\"type\": \"openapi\\/dbv0.0.38\"") != std::string::npos);
  CHECK(json.out.find("\n      \"job_id\": " + failing + ",\n") != std::string::npos);
  CHECK(json.out.find("\"current\": \"FAILED\"") != std::string::npos);
  size_t steps = 0;
  for (size_t at = json.out.find("\"step\": {"); at != std::string::npos; at = json.out.find("\"step\": {", at + 1)) ++steps;
  CHECK(steps == 4);  // batch, 0, 1, 2
  CHECK(json.out.find("\"id\": \"batch\"") != std::string::npos);
  CHECK(json.out.find("\"status\": \"FAILED\",\n            \"return_code\": 1\n") != std::string::npos);  // srun false
  auto yaml = sh(in_bin(c) + "sacct --yaml -X -j " + failing);
  CHECK(yaml.out.rfind("%YAML 1.1\n", 0) == 0);
  CHECK(yaml.out.find("\n  !!str steps: !!seq []\n") != std::string::npos);  // -X: no steps
}

TEST_CASE("e2e: a step that ends while the controller is down still gets its sacct line - the agent sends it again") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string id = submit_steps(c, "-J gap -n1 -o gap.out",
                                "touch started\n" + until_file("go1") + "\nsrun -n1 sh -c 'exit 4'\ntouch stepped\n" +
                                    until_file("go2") + "\n",
                                "gap.sh");
  // The script runs (RUNNING alone: the controller may not have sent the launch yet).
  REQUIRE(wait_until([&] { return std::filesystem::exists(c.dir() + "/started"); }, 20));
  c.kill9_controller();
  c.release("go1");
  REQUIRE(wait_until([&] { return std::filesystem::exists(c.dir() + "/stepped"); }, 20));  // the step ran and ended
  c.start_controller();
  c.release("go2");
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  std::string got = sacct_until(c, "-n -P -j " + id + " --format=JobID,State,ExitCode", 3);
  CHECK(got == id + "|COMPLETED|0:0\n" + id + ".batch|COMPLETED|0:0\n" + id + ".0|FAILED|4:0\n");
}

TEST_CASE("e2e: sacct shows each job's outcome as Slurm does, after the controller forgot it and after a restart") {
  LocalCluster c(2, 2, 20, "min_job_age = \"1s\"\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string ok = c.submit("-J okjob --wrap 'echo hi'");
  std::string failed = c.submit("-J failjob --wrap 'exit 3'");
  std::string longjob = c.submit("-J longjob --wrap 'sleep 300'");
  std::string held = c.submit("-H -J heldjob --wrap true");
  REQUIRE(c.wait_state(ok, "COMPLETED", 20));
  REQUIRE(c.wait_state(failed, "FAILED", 20));
  REQUIRE(c.wait_state(longjob, "RUNNING", 20));
  REQUIRE(sh(in_bin(c) + "scancel " + longjob).rc == 0);
  // Gone from the controller's memory (MinJobAge 1 s), still in the store.
  REQUIRE(wait_until([&] { return c.state(longjob).empty() && c.state(ok).empty(); }, 20));

  auto lines = sacct_until(c, "-X -P -n --format=JobID,JobName,State,ExitCode", 3);
  CHECK(lines.find(ok + "|okjob|COMPLETED|0:0\n") != std::string::npos);
  CHECK(lines.find(failed + "|failjob|FAILED|3:0\n") != std::string::npos);
  CHECK(lines.find(longjob + "|longjob|CANCELLED by 0|0:0\n") != std::string::npos);
  CHECK(lines.find("heldjob") == std::string::npos);  // never eligible: outside every window, as Slurm's
  // The default lines: the job's and its batch script's, in Slurm's widths.
  auto all = sh(in_bin(c) + "sacct");
  CHECK(all.rc == 0);
  CHECK(all.out.rfind("JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
                      "------------ ---------- ---------- ---------- ---------- ---------- -------- \n", 0) == 0);
  CHECK(all.out.find(longjob + ".batch           batch                                1  CANCELLED     0:15 ") !=
        std::string::npos);
  CHECK(all.out.find("     longjob      debug                     1 CANCELLED+      0:0 \n") != std::string::npos);
  // With -j there is no window: the held job shows, PENDING.
  CHECK(sh(in_bin(c) + "sacct -n -X -P -o JobID,State,Reason -j " + held).out == held + "|PENDING|JobHeldUser\n");
  // Snakemake's poll and Toil's: the exact command lines.
  auto smk = sh(in_bin(c) + "sacct -X --parsable2 --clusters all --noheader --format=JobIdRaw,State --starttime " +
                "$(date +%Y-%m-%dT%H:00) --endtime now --name okjob");
  CHECK(smk.rc == 0);
  CHECK(smk.out == ok + "|COMPLETED\n");
  auto toil = sh(in_bin(c) + "sacct -n -j " + failed + " --format State,ExitCode -P -S 1970-01-01");
  CHECK(toil.out == "FAILED|3:0\nFAILED|3:0\n");  // the job's line and its batch line

  // A restart keeps every record, once.
  c.kill9_controller();
  c.start_controller();
  auto again = sacct_until(c, "-X -P -n -a -j " + ok + "," + failed + "," + longjob + "," + held + " -o JobID", 4);
  CHECK(again == ok + "\n" + failed + "\n" + longjob + "\n" + held + "\n");
}

TEST_CASE("e2e: sacct takes Slurm's errors and empty answers") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto unknown = sh(in_bin(c) + "sacct -j 999999");
  CHECK(unknown.rc == 0);
  CHECK(unknown.out == slurp(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacct/j-999999-unknown.txt"));
  auto bogus = sh(in_bin(c) + "sacct --format=Bogus");  // stdout is empty: only stderr's line
  CHECK(bogus.rc == 1);
  CHECK(bogus.out == slurp(std::string(HQ_SOURCE_DIR) + "/tests/fixtures/slurm/sacct/format-bogus.err"));
  auto help = sh(in_bin(c) + "sacct --helpformat");
  CHECK(help.rc == 0);
  CHECK(help.out.find("TRESUsageOutTot") != std::string::npos);
  CHECK(sh(in_bin(c) + "sacct --bogus").rc == 1);
  CHECK(sh(in_bin(c) + "sacct -S 2030-01-01 -E 2020-01-01").rc == 1);
}

TEST_CASE("e2e: sacct shows users their own jobs, and others' when asked, as Slurm without PrivateData") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string mine = c.submit("-J rootjob --wrap true");
  REQUIRE(c.wait_state(mine, "COMPLETED", 20));
  REQUIRE(sacct_until(c, "-X -n -j " + mine, 1).find("rootjob") != std::string::npos);
  CHECK(as_nobody(c, c.dir() + "/bin/sacct -X -n -P -o JobID").out.empty());
  CHECK(as_nobody(c, c.dir() + "/bin/sacct -X -n -P -o JobID -a").out == mine + "\n");
  CHECK(as_nobody(c, c.dir() + "/bin/sacct -X -n -P -o JobID -u root").out == mine + "\n");
}

TEST_CASE("e2e: with [accounting] storage = none sacct says accounting is off, and jobs run as before") {
  LocalCluster c(1, 1, 20, "[accounting]\nstorage = \"none\"\n");
  REQUIRE(c.ready());
  std::string id = c.submit("--wrap true");
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  auto r = c.hq("acct -j " + id);
  CHECK(r.rc == 1);
  CHECK(r.out.find("accounting storage is disabled") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(c.dir() + "/state/accounting.db"));
}

TEST_CASE("e2e: each run of a job has its SLUID (SLURM_JOB_SLUID, sacct's SLUID) and its record (-D), a requeue a new one") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string id = c.submit("--wrap 'echo $SLURM_JOB_SLUID >> sluids.txt; " + until_file("go") + "'");
  auto runs = [&] {
    std::string text = slurp(c.dir() + "/sluids.txt");
    return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  };
  REQUIRE(wait_until([&] { return runs() == 1; }, 20));
  REQUIRE(c.hq("requeue " + id).rc == 0);
  REQUIRE(wait_until([&] { return runs() == 2; }, 30));
  c.release("go");
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  std::istringstream seen(slurp(c.dir() + "/sluids.txt"));
  std::string first, second;
  std::getline(seen, first);
  std::getline(seen, second);
  auto a = hq::parse_sluid(first), b = hq::parse_sluid(second);
  REQUIRE(a.has_value());
  REQUIRE(b.has_value());
  CHECK(*b > *a);
  CHECK(hq::sluid_cluster(*a) == 2);  // the store's first cluster id (0 and 1 are reserved)
  std::string out = sacct_until(c, "-X -n -P -o SLUID,OriginalSLUID,State -j " + id, 1);
  CHECK(out == second + "|" + first + "|COMPLETED\n");
  // Each run is a record of its own (Slurm's new row per requeue): -D shows both, the
  // first REQUEUED, submitted again at the requeue.
  auto both = sh(in_bin(c) + "sacct -D -X -n -P -o JobID,State,SLUID,Submit,End -j " + id);
  std::vector<std::string> lines;
  std::istringstream in(both.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind(id + "|REQUEUED|" + first + "|", 0) == 0);
  CHECK(lines[1].rfind(id + "|COMPLETED|" + second + "|", 0) == 0);
  std::string first_end = lines[0].substr(lines[0].rfind('|') + 1), second_submit;
  {
    std::vector<std::string> cols;
    std::stringstream f(lines[1]);
    for (std::string x; std::getline(f, x, '|');) cols.push_back(x);
    REQUIRE(cols.size() == 5);
    second_submit = cols[3];
  }
  CHECK(second_submit >= first_end);  // the second run was submitted at the requeue (ISO times sort)
}

TEST_CASE("e2e: sacct shows an array's tasks that never started as one line, as Slurm's one record of the array") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  // Held, then cancelled: nothing ran. Slurm 22.05 prints "1_[1-20] 1 CANCELLED+".
  std::string held = c.submit("-H -a 1-20 -J heldarr --wrap true");
  REQUIRE(!held.empty());
  REQUIRE(sh(in_bin(c) + "scancel " + held).rc == 0);
  CHECK(sacct_until(c, "-X -P -n -j " + held + " -o JobID,JobIDRaw,JobName,State,NodeList", 1) ==
        held + "_[1-20]|" + held + "|heldarr|CANCELLED by 0|None assigned\n");
  // One task runs (each takes both CPUs), then the array is cancelled: the task that ran
  // has its line, the rest one line, as Slurm's "37_1 38 ... 37_[2-4] 37".
  std::string part = c.submit("-a 1-4 -c 2 -J partarr --wrap 'sleep 300'");
  REQUIRE(!part.empty());
  REQUIRE(wait_until([&] { return c.hq("queue -h -t R").out.find(" partarr ") != std::string::npos; }, 20));
  REQUIRE(sh(in_bin(c) + "scancel " + part).rc == 0);
  std::string lines;
  wait_until([&] {  // the running task ends once its kill is through
    lines = sh(in_bin(c) + "sacct -X -P -n -j " + part + " -o JobID,JobIDRaw,State").out;
    return lines.find("RUNNING") == std::string::npos && lines.find("CANCELLED") != std::string::npos;
  }, 20);
  INFO(lines);
  CHECK(lines.find(part + "_1|" + part + "|CANCELLED by 0\n") == 0);
  CHECK(lines.find(part + "_[2-4]|" + part + "|CANCELLED by 0\n") != std::string::npos);
  CHECK(std::count(lines.begin(), lines.end(), '\n') == 2);
  // A task asked for by name is its own line.
  CHECK(sh(in_bin(c) + "sacct -X -P -n -j " + held + "_7 -o JobID,State").out == held + "_7|CANCELLED by 0\n");
}
