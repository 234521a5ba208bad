// End to end, through the Slurm personas: a batch script written for Slurm, with lines hq
// has no use for yet (mail, time-min, ...), is submitted and runs, sbatch telling once
// on stderr what does not act, and a refused option fails with its reason; squeue's
// filters (-t in any case, -u lists, --me, -n) and its errors are Slurm's.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <tuple>
#include <vector>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {
// Whether squeue's `out` has a line for job `id`.
bool lists(const std::string& out, const std::string& id) {
  std::istringstream in(out);
  std::string first;
  for (std::string line; std::getline(in, line);)
    if (std::istringstream(line) >> first && first == id) return true;
  return false;
}
}  // namespace

TEST_CASE("e2e: a Slurm script with mail, QOS and other unused lines runs - sbatch warns once each - --container is refused") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::ofstream(c.dir() + "/real.sh") << "#!/bin/bash\n"
                                         "#SBATCH --job-name=real --output=real-%j.out\n"
                                         "#SBATCH --mail-type=END,FAIL\n"
                                         "#SBATCH --mail-user=someone@example.org\n"
                                         "#SBATCH --qos=normal --time-min=5 --get-user-env --comment=\"a b\"\n"
                                         "#SBATCH --tmp=10G --exclusive=user --nice\n"
                                         "echo ran\n";
  auto r = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch --parsable real.sh");
  INFO(r.out);
  REQUIRE(r.rc == 0);
  CHECK(r.out.find("sbatch: warning: --tmp: temporary disk is not tracked\n") != std::string::npos);
  CHECK(r.out.find("--time-min") == std::string::npos);  // acts (backfill may lower the limit): nothing to tell
  CHECK(r.out.find("--mail") == std::string::npos);  // mail is sent (or logged): nothing to tell
  CHECK(r.out.find("--qos") == std::string::npos);      // stored: nothing to tell
  CHECK(r.out.find("--comment") == std::string::npos);
  CHECK(r.out.find("--get-user-env") == std::string::npos);  // means nothing here: silent
  std::string id = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  id.erase(id.find_last_not_of("\n") + 1);
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  CHECK(slurp(c.dir() + "/real-" + id + ".out") == "ran\n");
  auto shown = c.hq("show job " + id).out;  // scontrol's StdOut: expanded and absolute
  CHECK(shown.find("   StdOut=" + c.dir() + "/real-" + id + ".out\n") != std::string::npos);
  CHECK(shown.find("   StdErr=" + c.dir() + "/real-" + id + ".out\n") != std::string::npos);
  CHECK(shown.find(" QOS=normal\n") != std::string::npos);
  CHECK(shown.find("   Comment=a b \n") != std::string::npos);
  CHECK(shown.find("   StdIn=/dev/null\n") != std::string::npos);
  auto one = sh(c.dir() + "/bin/scontrol -o show job " + id);  // -o: the record on one line
  CHECK(one.rc == 0);
  CHECK(one.out.rfind("JobId=" + id + " JobName=real ", 0) == 0);
  CHECK(one.out.find(" JobState=COMPLETED ") != std::string::npos);
  CHECK(one.out.find(" StdOut=" + c.dir() + "/real-" + id + ".out") != std::string::npos);
  CHECK(std::count(one.out.begin(), one.out.end(), '\n') == 1);
  auto refused = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch --container=/b --wrap true");
  CHECK(refused.rc == 1);
  CHECK(refused.out.find("sbatch: error: --container: OCI containers are not supported by hq") != std::string::npos);
}

TEST_CASE("e2e: sbatch refuses a bad option value or an unknown option with Slurm 22.05's words and exit code") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  // Captured from Slurm 22.05's sbatch on the slurm-bench (stderr, exit code).
  const std::vector<std::tuple<std::string, std::string, int>> cases = {
      {"--mail-type=bogus", "sbatch: error: Invalid --mail-type specification\n", 255},
      {"--time=bogus", "sbatch: error: Invalid --time specification\n", 255},
      {"--bogus", "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n", 255},
      {"-N abc", "sbatch: error: \"abc\" is not a valid node count\n", 255},
      {"--mem=abc", "sbatch: error: Invalid --mem specification\n", 255},
      {"-n 0", "sbatch: error: Invalid numeric value \"0\" for --ntasks.\n", 1},
      {"--begin=xx", "Invalid time specification (pos=0): xx\nsbatch: error: Invalid --begin specification\n", 255},
      {"--signal=XX", "sbatch: error: Invalid --signal specification\n", 255},
      {"--open-mode=x", "sbatch: error: Invalid --open-mode specification\n", 255},
      {"--time-min=xx", "sbatch: error: Invalid --time-min specification\n", 255},
  };
  for (const auto& [args, out, rc] : cases) {
    auto r = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch " + args + " --wrap true");
    INFO(args);
    CHECK(r.rc == rc);
    CHECK(r.out == out);
  }
  auto own = c.hq("submit --time=bogus --wrap true");  // hq's own command keeps hq's words
  CHECK(own.rc == 1);
  CHECK(own.out == "hq submit: error: invalid time limit 'bogus'\n");
  // --help and --usage in a script's #SBATCH lines answer as on the command line, exit 0
  // (Slurm's arg_set_help/arg_set_usage exit there too).
  std::ofstream(c.dir() + "/help.sh") << "#!/bin/sh\n#SBATCH -J x\n#SBATCH --help\necho ran\n";
  std::ofstream(c.dir() + "/usage.sh") << "#!/bin/sh\n#SBATCH --usage\necho ran\n";
  auto help = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch help.sh");
  CHECK(help.rc == 0);
  CHECK(help.out == sh(c.dir() + "/bin/sbatch --help").out);
  auto usage = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sbatch usage.sh");
  CHECK(usage.rc == 0);
  CHECK(usage.out == sh(c.dir() + "/bin/sbatch --usage").out);
  CHECK(c.hq("queue -h -t all").out.empty());  // nothing was submitted
}

TEST_CASE("e2e: squeue filters as Slurm's - states in any case, user lists, --me - an unknown id or state fails with Slurm's words - sinfo -h") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string sq = "cd " + c.dir() + " && " + c.dir() + "/bin/squeue ";
  std::string running = c.submit("-J runner --wrap '" + until_file("sq.go") + "'");
  std::string pending = c.submit("-J waiter --wrap true");
  REQUIRE(c.wait_state(running, "RUNNING", 15));
  auto lower = sh(sq + "-h -t pending");
  CHECK(lists(lower.out, pending));
  CHECK_FALSE(lists(lower.out, running));
  auto r = sh(sq + "-h -t r,PD");
  CHECK(lists(r.out, pending));
  CHECK(lists(r.out, running));
  auto me = sh(sq + "-h --me -u root,0");
  CHECK(lists(me.out, running));
  auto nobody = sh(sq + "-h -u nosuchuser_hq");
  CHECK(nobody.rc == 1);
  CHECK(nobody.out.find("squeue: error: Invalid user: nosuchuser_hq") != std::string::npos);
  auto unknown = sh(sq + "-j 999999");
  CHECK(unknown.rc == 1);
  CHECK(unknown.out.find("slurm_load_jobs error: Invalid job id specified") != std::string::npos);
  auto unknown_option = sh(sq + "--bogus");
  CHECK(unknown_option.rc == 1);  // not CLI11's 109; getopt's words, as Slurm's squeue
  CHECK(unknown_option.out == "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n");
  auto short_option = sh(sq + "-z");
  CHECK(short_option.rc == 1);
  CHECK(short_option.out == "squeue: invalid option -- 'z'\nTry \"squeue --help\" for more information\n");
  auto bad = sh(sq + "-t foo");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("squeue: error: Invalid job state specified: foo\nsqueue: error: Valid job states include: PENDING,") !=
        std::string::npos);
  auto named = sh(sq + "-h -n waiter");
  CHECK(lists(named.out, pending));
  CHECK_FALSE(lists(named.out, running));
  auto formatted = sh(sq + "-t pd -o '%i|%T|%.3j|%R|%C'");
  CHECK(formatted.rc == 0);
  CHECK(formatted.out == "JOBID|STATE|NAM|NODELIST(REASON)|CPUS\n" + pending + "|PENDING|wai|(Resources)|1\n");
  auto sinfo = sh("cd " + c.dir() + " && " + c.dir() + "/bin/sinfo -h");  // -h is --noheader, as in Slurm
  CHECK(sinfo.rc == 0);
  CHECK(sinfo.out.find("PARTITION") == std::string::npos);
  CHECK(sinfo.out.find("debug") != std::string::npos);
  c.release("sq.go");
  REQUIRE(c.wait_state(pending, "COMPLETED", 20));
}

TEST_CASE("e2e: a cancelled or timed-out job's stderr gets slurmstepd's '*** JOB N ON NODE CANCELLED AT T ***' line") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  std::string cancelled = c.submit("-o cancelled-%j.out --wrap 'echo started; sleep 300'");
  REQUIRE(wait_until([&] { return slurp(c.dir() + "/cancelled-" + cancelled + ".out") == "started\n"; }, 15));
  REQUIRE(c.hq("cancel " + cancelled).rc == 0);
  REQUIRE(c.wait_state(cancelled, "CANCELLED", 15));
  std::string out = slurp(c.dir() + "/cancelled-" + cancelled + ".out");
  INFO(out);
  CHECK(out.find("slurmstepd-e1: error: *** JOB " + cancelled + " ON e1 CANCELLED AT ") != std::string::npos);
  CHECK(out.find("DUE TO TIME LIMIT") == std::string::npos);
  std::string limited = c.submit("--time=2s -o limited-%j.out -e limited-%j.err --wrap 'sleep 120'");
  REQUIRE(c.wait_state(limited, "TIMEOUT", 20));
  std::string err = slurp(c.dir() + "/limited-" + limited + ".err");
  INFO(err);
  CHECK(err.find("*** JOB " + limited + " ON e1 CANCELLED AT ") != std::string::npos);
  CHECK(err.find(" DUE TO TIME LIMIT ***\n") != std::string::npos);
  CHECK(err.find("CANCELLED", err.find("CANCELLED") + 1) == std::string::npos);  // once
  CHECK(slurp(c.dir() + "/limited-" + limited + ".out").empty());  // stderr only
}

TEST_CASE("e2e: scancel picks jobs by user, name and state as Slurm's - ids with filters only among them") {
  LocalCluster c(1, 1);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string sc = "cd " + c.dir() + " && " + c.dir() + "/bin/scancel ";
  std::string running = c.submit("-J keep --wrap 'sleep 300'");
  REQUIRE(c.wait_state(running, "RUNNING", 15));
  std::string a = c.submit("-J drop --wrap true"), b = c.submit("-J drop --wrap true"), other = c.submit("-J other --wrap true");
  auto by_name = sh(sc + "-n drop -t pending");
  CHECK(by_name.rc == 0);
  CHECK(c.wait_state(a, "CANCELLED", 10));
  CHECK(c.wait_state(b, "CANCELLED", 10));
  CHECK(c.state(other) == "PENDING");
  CHECK(c.state(running) == "RUNNING");
  auto none = sh(sc + "--me -t pending " + running);  // running is not pending: nothing to cancel
  CHECK(none.rc == 0);
  CHECK(c.state(running) == "RUNNING");
  auto mine = sh(sc + "--me");
  CHECK(mine.rc == 0);
  CHECK(c.wait_state(running, "CANCELLED", 15));
  CHECK(c.wait_state(other, "CANCELLED", 10));
  auto state = sh(sc + "-t completed");
  CHECK(state.rc == 1);
  CHECK(state.out.find("Invalid job state specified: completed\nValid job states are PENDING, RUNNING, and SUSPENDED") !=
        std::string::npos);
  auto bad = sh(sc + "-u nosuchuser_hq");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("scancel: error: Invalid user name: nosuchuser_hq") != std::string::npos);
  // An unknown or finished job: Slurm 22.05's scancel says nothing and exits 0; -v tells.
  auto unknown = sh(sc + "99999");
  CHECK(unknown.rc == 0);
  CHECK(unknown.out.empty());
  auto finished = sh(sc + "-v " + a);
  CHECK(finished.rc == 0);
  CHECK(finished.out == "scancel: Terminating job " + a + "\nscancel: error: Kill job error on job id " + a +
                            ": Job/step already completing or completed\n");
  auto option = sh(sc + "--bogus");
  CHECK(option.rc == 1);
  CHECK(option.out == "scancel: unrecognized option '--bogus'\nTry \"scancel --help\" for more information\n");
  CHECK(c.hq("cancel 99999").rc == 1);  // hq's own command says what it could not do
}

TEST_CASE("e2e: --mail-type mails through mail_prog once the change is durable - Slurm's subjects - logged without one") {
  TempDir mail;
  std::string prog = mail.path() + "/fake-sendmail", box = mail.path() + "/mails.txt";
  std::ofstream(prog) << "#!/bin/sh\n[ \"$1\" = -t ] || exit 2\ncat >> " << box << "\necho --- >> " << box << "\n";
  REQUIRE(chmod(prog.c_str(), 0755) == 0);
  LocalCluster c(1, 2, 20, "", "mail_prog = \"" + prog + "\"\n");
  REQUIRE(c.ready());
  auto id = c.submit("-J train --mail-type=begin,end --mail-user=alice@example.org --wrap true");
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  REQUIRE(wait_until([&] { return slurp(box).find("Ended") != std::string::npos; }, 10));
  std::string mails = slurp(box);
  CHECK(mails.find("To: alice@example.org\nSubject: Slurm Job_id=" + id + " Name=train Began, Queued time 00:00:0") !=
        std::string::npos);
  CHECK(mails.find("Subject: Slurm Job_id=" + id + " Name=train Ended, Run time 00:00:0") != std::string::npos);
  CHECK(mails.find(", COMPLETED, ExitCode 0\n") != std::string::npos);
  CHECK(c.hq("show job " + id).out.find("   MailUser=alice@example.org MailType=BEGIN,END\n") != std::string::npos);
  auto bad = c.hq("submit --mail-type=bogus --wrap true");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("Invalid --mail-type specification") != std::string::npos);
  CHECK(c.submit("--wrap true --mail-type=NONE").find("ERROR") == std::string::npos);
}

TEST_CASE("e2e: without a mail_prog the controller logs each mail") {
  LocalCluster c(1, 2, 20, "", "mail_prog = \"/nonexistent/sendmail\"\n");
  REQUIRE(c.ready());
  auto id = c.submit("--mail-type=END --wrap true");
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  CHECK(wait_until([&] { return slurp(c.dir() + "/controller.log").find("Name=wrap Ended") != std::string::npos; }, 10));
  CHECK(slurp(c.dir() + "/controller.log").find("not sent (/nonexistent/sendmail cannot run)") != std::string::npos);
}

TEST_CASE("e2e: launch failures carry their cause - a missing -D runs in /tmp with slurmstepd's line") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  auto bad_out = c.submit("-o /nonexistent/x.out --wrap true");
  REQUIRE(c.wait_state(bad_out, "FAILED", 20));
  auto shown = c.hq("show job " + bad_out).out;  // Slurm's Reason=: the StateDesc, '_' for spaces
  CHECK(shown.find("Reason=launch_failed:_open_/nonexistent/x.out:_No_such_file_or_directory") != std::string::npos);
  auto json = c.hq("squeue --json -t all -j " + bad_out).out;
  CHECK(json.find("\"state_description\": \"launch failed: open \\/nonexistent\\/x.out: No such file or directory\"") !=
        std::string::npos);  // json-c writes "/" as "\/", as Slurm's squeue --json does
  auto nowhere = c.submit("-D /nonexistent -o " + c.dir() + "/d.out --wrap pwd");
  REQUIRE(c.wait_state(nowhere, "COMPLETED", 20));
  CHECK(slurp(c.dir() + "/d.out") ==
        "slurmstepd-e1: error: couldn't chdir to `/nonexistent': No such file or directory: going to /tmp instead\n/tmp\n");
}

TEST_CASE("e2e: sbatch --uid runs root's job as another user - others get Slurm's refusal, exit 255") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  auto made = sh("cd " + shared + " && " + c.dir() + "/bin/sbatch --parsable --uid=nobody -o out-%j.txt --wrap 'id -u'");
  REQUIRE(made.rc == 0);
  std::string id = made.out.substr(0, made.out.find('\n'));
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  CHECK(slurp(shared + "/out-" + id + ".txt") == "65534\n");
  CHECK(c.hq("queue -h -t all -o %u -j " + id).out == "nobody\n");
  auto refused = as_nobody(c, c.dir() + "/bin/sbatch --uid=root --wrap true");
  CHECK(refused.rc == 255);
  CHECK(refused.out == "sbatch: error: --uid only permitted by root user\n");
  auto unknown = sh("cd " + shared + " && " + c.dir() + "/bin/sbatch --uid=nosuchuser_hq --wrap true");
  CHECK(unknown.rc == 255);
  CHECK(unknown.out == "sbatch: error: Invalid --uid specification\n");
}

TEST_CASE("e2e: --hint=nomultithread takes whole cores on a node with two threads per core - SLURM_HINT - bad hints refused") {
  LocalCluster c(1, 4, 20, "", "", "sockets = 1\ncores_per_socket = 2\nthreads_per_core = 2\n");
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  std::string one = c.submit("-n1 --hint=nomultithread -o hint-%j.out --wrap 'echo $SLURM_HINT; sleep 300'");
  REQUIRE(c.wait_state(one, "RUNNING", 20));
  CHECK(c.hq("show job " + one).out.find("NumCPUs=2 ") != std::string::npos);  // a whole core: both threads
  CHECK(wait_until([&] { return slurp(c.dir() + "/hint-" + one + ".out") == "nomultithread\n"; }, 10));
  std::string two = c.submit("-n2 --hint=nomultithread --wrap true");  // two cores: only one is left
  REQUIRE(c.wait_considered(two, 20));
  CHECK(c.state(two) == "PENDING");
  std::string plain = c.submit("-n2 --wrap true");  // two CPUs: the threads of the other core
  CHECK(c.wait_state(plain, "COMPLETED", 20));
  std::string sb = "cd " + c.dir() + " && " + c.dir() + "/bin/sbatch ";
  auto bogus = sh(sb + "--hint=bogus --wrap true");
  CHECK(bogus.rc == 1);  // Slurm's words and exit code
  CHECK(bogus.out == "sbatch: error: unrecognized --hint argument \"bogus\", see --hint=help\n");
  auto bound = sh(sb + "-H --hint=compute_bound --wrap true");
  CHECK(bound.rc == 0);
  CHECK(bound.out.find("sbatch: warning: --hint=compute_bound: it does not change CPU placement on hq yet\n") == 0);
  CHECK(c.hq("cancel " + one).rc == 0);
  CHECK(c.wait_state(two, "COMPLETED", 20));
}

TEST_CASE("e2e: a user's sbatch --priority is taken and ignored as Slurm's - a held job shows Priority=0") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  REQUIRE(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto made = as_nobody(c, c.dir() + "/bin/sbatch --parsable -H --priority=5 --wrap true");
  INFO(made.out);
  REQUIRE(made.rc == 0);
  std::string id = made.out.substr(0, made.out.find('\n'));
  std::string show = c.dir() + "/bin/scontrol show job " + id;
  CHECK(sh(show).out.find(" Priority=0 ") != std::string::npos);  // held
  CHECK(sh(c.dir() + "/bin/squeue -h -o %Q -j " + id).out == "0\n");
  REQUIRE(as_nobody(c, c.dir() + "/bin/scontrol release " + id).rc == 0);
  REQUIRE(c.wait_state(id, "COMPLETED", 20));
  std::string after = sh(show).out;
  size_t at = after.find(" Priority=");
  REQUIRE(at != std::string::npos);
  std::string prio = after.substr(at + 10, after.find(' ', at + 10) - at - 10);
  CHECK(prio != "0");
  CHECK(prio != "5");  // the user's value was not taken: the computed one
  auto root_made = sh(c.dir() + "/bin/sbatch --parsable -H --priority=5 --wrap true");
  std::string rid = root_made.out.substr(0, root_made.out.find('\n'));
  REQUIRE(sh(c.dir() + "/bin/scontrol release " + rid).rc == 0);
  REQUIRE(c.wait_state(rid, "COMPLETED", 20));
  CHECK(sh(c.dir() + "/bin/scontrol show job " + rid).out.find(" Priority=5 ") != std::string::npos);  // root's fixes it
}
