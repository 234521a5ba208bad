// End to end: job confinement on the host's cgroups (v1 or v2, whichever it has): a
// job over its --mem ends OUT_OF_MEMORY; a daemonized child is gone once its job ends
// or is cancelled; the job's CPUs, peak memory and CPU time are reported; a step's task
// killed for memory is reported as such, and --oom-kill-step ends its step.
#include <doctest/doctest.h>

#include <csignal>
#include <fstream>
#include <sstream>

#include "steps_fixture.hpp"

using namespace hq::test;

namespace {

bool alive(const std::string& pid_file) {
  std::string text = slurp(pid_file);
  if (text.empty()) return false;
  pid_t pid = std::stoi(text);
  return pid > 0 && kill(pid, 0) == 0;
}

// Why agent e1 of `c` confines jobs in no cgroup (its log line saying so), or "".
std::string why_no_cgroups(const LocalCluster& c) {
  std::string log = slurp(c.dir() + "/e1.log");
  return log.find("job confinement: cgroup") != std::string::npos ? "" : line_with(log, "no usable cgroup");
}

// A job leaves a daemonized child (its own session, like a daemon) behind, in the agent's
// confinement `mode` (--cgroup); the child must die when the job ends or is cancelled.
void check_daemonized_children_die(const LocalCluster& c, const std::string& mode) {
  std::string log = slurp(c.dir() + "/e1.log");
  INFO("mode " << mode << "; agent log: " << log);
  std::string ended_pid = c.dir() + "/ended.pid", cancelled_pid = c.dir() + "/cancelled.pid";
  std::string daemon = "setsid sh -c \\\"echo \\\\$\\\\$ > %s; exec sleep 300\\\" </dev/null >/dev/null 2>&1 &";
  std::string go = c.dir() + "/go";
  // The job starts the child, then waits until the test has seen the child alive (`go`):
  // ending at once would let the agent kill the child before the test could look.
  auto script = [&](const std::string& pid_file, const std::string& then) {
    std::string d = daemon;
    d.replace(d.find("%s"), 2, pid_file);
    return "--wrap \"" + d + " " + until_file(pid_file) + "; " + until_file(go) + "; " + then + "\"";
  };
  std::string a = c.submit(script(ended_pid, "true"));
  REQUIRE(wait_until([&] { return alive(ended_pid); }, 10));
  std::ofstream(go) << "go\n";
  REQUIRE(c.wait_state(a, "COMPLETED", 15));
  CHECK(wait_until([&] { return !alive(ended_pid); }, 5));

  std::string b = c.submit(script(cancelled_pid, "sleep 300"));
  REQUIRE(c.wait_state(b, "RUNNING", 10));
  REQUIRE(wait_until([&] { return alive(cancelled_pid); }, 10));
  c.hq("cancel " + b);
  REQUIRE(c.wait_state(b, "CANCELLED", 15));
  CHECK(wait_until([&] { return !alive(cancelled_pid); }, 5));
}

}  // namespace

TEST_CASE("e2e: a job that allocates more memory than --mem ends OUT_OF_MEMORY") {
  ScopedEnv env("HQ_JOB_PIDS_MAX", "64");
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  if (std::string why = why_no_cgroups(c); !why.empty()) HQ_SKIP("memory limits need cgroups: " + why);
  std::string log = slurp(c.dir() + "/e1.log");
  // The job reads its own limits from its cgroup (v1 paths per controller, v2 one path).
  bool v1 = log.find("cgroup v1") != std::string::npos;
  std::string limits = v1 ? "m=$(grep :memory: /proc/self/cgroup | cut -d: -f3); c=$(grep :cpuset: /proc/self/cgroup | cut -d: -f3); "
                            "p=$(grep :pids: /proc/self/cgroup | cut -d: -f3); "
                            "cat /sys/fs/cgroup/memory$m/memory.limit_in_bytes /sys/fs/cgroup/cpuset$c/cpuset.cpus /sys/fs/cgroup/pids$p/pids.max"
                          : "g=$(grep ^0:: /proc/self/cgroup | cut -d: -f3); "
                            "cat /sys/fs/cgroup$g/memory.max /sys/fs/cgroup$g/cpuset.cpus /sys/fs/cgroup$g/pids.max";
  std::string shown_limits = c.submit("--mem=48M -o " + c.dir() + "/limits.out --wrap '" + limits + "'");
  REQUIRE(c.wait_state(shown_limits, "COMPLETED", 20));
  std::string text = slurp(c.dir() + "/limits.out");
  CHECK(text.find(std::to_string(48 << 20) + "\n") == 0);
  CHECK(text.find("\n64\n") != std::string::npos);
  CHECK(text.find("/job_") == std::string::npos);
  std::string hog = c.submit("--mem=32M --wrap 'head -c 400M /dev/zero | tail; echo after'");
  REQUIRE(c.wait_state(hog, "OUT_OF_MEMORY", 30));
  auto job = c.hq("show job " + hog);
  CHECK(job.out.find("JobState=OUT_OF_MEMORY Reason=OutOfMemory") != std::string::npos);
  std::string fine = c.submit("--mem=64M --wrap 'head -c 8M /dev/zero | tail | wc -c'");
  REQUIRE(c.wait_state(fine, "COMPLETED", 20));
  auto shown = c.hq("show job " + fine);
  CHECK(shown.out.find("MaxRSS=") != std::string::npos);
  CHECK(shown.out.find("TotalCPU=") != std::string::npos);
}

TEST_CASE("e2e: daemonized children die with their job, whether it ends or is cancelled (cgroups)") {
  ScopedEnv env("HQ_CGROUP", "auto");
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  if (std::string why = why_no_cgroups(c); !why.empty()) HQ_SKIP("no cgroups to confine jobs in: " + why);
  check_daemonized_children_die(c, "auto");
}

TEST_CASE("e2e: daemonized children die with their job, whether it ends or is cancelled (no cgroups)") {
  ScopedEnv env("HQ_CGROUP", "none");
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  CHECK(slurp(c.dir() + "/e1.log").find("process group only") != std::string::npos);
  check_daemonized_children_die(c, "none");
}

TEST_CASE("e2e: a step's task killed for memory - srun says Out Of Memory - --oom-kill-step kills the rest of the step") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  if (std::string why = why_no_cgroups(c); !why.empty()) HQ_SKIP("memory limits need cgroups: " + why);
  // Task 0 eats memory past the job's --mem; task 1 sleeps, then says it survived.
  std::string hog = "if [ $SLURM_PROCID = 0 ]; then head -c 400M /dev/zero | tail; exit; fi; ";
  std::string id = submit_steps(c, "--mem=48M -n2 -o oom-%j.out",
                                "srun -n2 sh -c '" + hog + "sleep 2; echo survived'; echo \"plain rc=$?\"\n" +
                                "srun -n2 --oom-kill-step sh -c '" + hog + "sleep 60; echo outlived'; echo \"kill rc=$?\"\n");
  REQUIRE(c.wait_state(id, "OUT_OF_MEMORY", 45));  // the job's cgroup counted the kills
  std::string out = slurp(c.dir() + "/oom-" + id + ".out");
  INFO(out);
  size_t detected = out.find("Detected 1 oom-kill event(s) in StepId=" + id + ".0");
  CHECK(detected != std::string::npos);
  size_t srun_line = out.find("srun: error: e1: task 0: Out Of Memory");
  CHECK(srun_line != std::string::npos);
  CHECK(srun_line > detected);  // after the node's line, as in Slurm
  size_t survived = out.find("survived\n"), plain = out.find("plain rc=1\n");
  CHECK(survived != std::string::npos);  // the other task ran on (before or after the OOM kill)
  CHECK(plain != std::string::npos);
  CHECK(survived < plain);
  CHECK(out.find("kill rc=1") != std::string::npos);
  CHECK(out.find("outlived") == std::string::npos);                  // killed with the step
  auto shown = c.hq("show job " + id).out;
  CHECK(shown.find("Step=" + id + ".0 Name=sh State=OUT_OF_MEMORY") != std::string::npos);
  CHECK(shown.find("Step=" + id + ".1 Name=sh State=OUT_OF_MEMORY") != std::string::npos);
}

TEST_CASE("e2e: every step has a cgroup of its own on each node - --exact CPUs, --cpu-bind, --mem, leftovers killed at its end") {
  LocalCluster c(2, 2);
  REQUIRE(c.ready());
  if (std::string why = why_no_cgroups(c); !why.empty()) HQ_SKIP("step cgroups need cgroups: " + why);
  // Two --exact steps run at once (each waits for the other's CPU file): CPUs of their own.
  std::string exact = "srun --exact -n1 -c1 sh -c 'grep Cpus_allowed_list: /proc/self/status > %s.cpus; " +
                      std::string("for i in $(seq 400); do [ -s %o.cpus ] && break; sleep 0.05; done' &\n");
  auto step_line = [&](const char* mine, const char* other) {
    std::string s = exact;
    s.replace(s.find("%s"), 2, mine);
    s.replace(s.find("%o"), 2, other);
    return s;
  };
  std::string hog = "head -c 300M /dev/zero | tail";
  std::string body =
      step_line("a", "b") + step_line("b", "a") + "wait\n" +
      "srun -l cat /proc/self/cgroup | grep -E '(:memory:|0::)/hq/' | sort\n" +
      "srun -l --cpu-bind=cores grep Cpus_allowed_list: /proc/self/status | sort\n" +
      // A step's failure while another step is OOM-killed is not taken for an OOM kill.
      "srun -J bystander -n1 --overlap sh -c '" + until_file("oomed") + "; exit 3' & bystander=$!\n" +
      "srun -J hog -n1 --mem=24M sh -c '" + hog + "'; echo \"oom rc=$?\"; echo done > oomed\n" +
      "wait $bystander; echo \"bystander rc=$?\"\n" +
      "srun -n1 --mem=500M true; echo \"too much rc=$?\"\n" +
      "srun -n1 sh -c 'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $! > daemon.pid'\n" +
      "for i in $(seq 100); do kill -0 $(cat daemon.pid) 2>/dev/null || break; sleep 0.05; done\n" +
      "kill -0 $(cat daemon.pid) 2>/dev/null && echo daemon alive || echo daemon gone\n";
  std::string id = submit_steps(c, "-N2 -n4 --mem=200M -o cg-%j.out", body);
  REQUIRE(c.wait_state(id, "OUT_OF_MEMORY", 60));  // a step's OOM kill makes the job's end OUT_OF_MEMORY too
  std::string out = slurp(c.dir() + "/cg-" + id + ".out");
  INFO(out);
  std::string a = slurp(c.dir() + "/a.cpus"), b = slurp(c.dir() + "/b.cpus");
  CHECK(!a.empty());
  CHECK(!b.empty());
  CHECK(a != b);
  for (const char* task : {"0: ", "1: ", "2: ", "3: "})  // v1 (the memory hierarchy's line) or v2
    CHECK((out.find(std::string(task) + "4:memory:/hq/") != std::string::npos ||
           out.find(std::string(task) + "0::/hq/") != std::string::npos));
  CHECK(out.find("/job_" + id + "/step_2\n") != std::string::npos);
  // --cpu-bind=cores: the two tasks on each node have one CPU each, not the same one.
  CHECK(out.find("0: Cpus_allowed_list:\t0\n1: Cpus_allowed_list:\t1\n") != std::string::npos);
  CHECK(out.find("2: Cpus_allowed_list:\t0\n3: Cpus_allowed_list:\t1\n") != std::string::npos);
  // One oom-kill line (the hog's; the two steps start in either order, so as 4 or 5). Its
  // count is the kernel's: under load it may kill the hog's shell too ("Detected 2 ...").
  size_t detected = out.find(" oom-kill event(s) in StepId=" + id + ".");
  CHECK(detected != std::string::npos);
  CHECK(out.rfind("Detected ", detected) != std::string::npos);
  CHECK(out.find("oom-kill event", out.find('\n', detected)) == std::string::npos);
  CHECK(out.find("oom rc=1") != std::string::npos);
  CHECK(out.find("bystander rc=3") != std::string::npos);
  CHECK(out.find("Unable to create step for job " + id + ": Memory required by task is not available") != std::string::npos);
  CHECK(out.find("too much rc=1") != std::string::npos);
  CHECK(out.find("daemon gone") != std::string::npos);
  auto shown = c.hq("show job " + id).out;
  CHECK(shown.find("Name=bystander State=FAILED") != std::string::npos);
  CHECK(shown.find("Name=hog State=OUT_OF_MEMORY") != std::string::npos);
}

TEST_CASE("e2e: on cgroup v1 a job's next step takes the last one's groups - the same group renamed, its peak and CPU time started again") {
  LocalCluster c(1, 2);
  REQUIRE(c.ready());
  if (std::string why = why_no_cgroups(c); !why.empty()) HQ_SKIP("step cgroups need cgroups: " + why);
  if (slurp(c.dir() + "/e1.log").find("cgroup v1") == std::string::npos)
    HQ_SKIP("step groups are kept for the next step on cgroup v1 only (v2 cannot rename a group)");
  // Each step prints its memory group's inode and name, then what the group counted: the
  // first after holding 40 MB and spinning, the second at once.
  std::string group = "d=/sys/fs/cgroup/memory$(grep :memory: /proc/self/cgroup | cut -d: -f3); "
                      "a=/sys/fs/cgroup/cpuacct$(grep :cpuacct /proc/self/cgroup | cut -d: -f3); "
                      "echo \"$0 $(stat -c %i $d) ${d##*/}\"; ";
  std::string counted = "echo \"$0 peak $(cat $d/memory.max_usage_in_bytes) cpu $(cat $a/cpuacct.usage)\"";
  std::string body = "srun -n1 sh -c '" + group + "head -c 40M /dev/zero | tail > /dev/null; " +
                     "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; " + counted + "' first\n" +
                     "srun -n1 sh -c '" + group + counted + "' second\n";
  std::string id = submit_steps(c, "-n1 -o reuse-%j.out", body);
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  std::string out = slurp(c.dir() + "/reuse-" + id + ".out");
  INFO(out);
  std::istringstream lines(out);
  std::string who, first_inode, first_name, second_inode, second_name;
  int64_t first_peak = -1, first_cpu = -1, second_peak = -1, second_cpu = -1;
  std::string word;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream l(line);
    l >> who;
    std::string a, b;
    int64_t peak = -1, cpu = -1;
    if (!(l >> a >> b)) continue;
    if (a == "peak") {
      peak = std::stoll(b);
      l >> word >> cpu;
      (who == "first" ? first_peak : second_peak) = peak;
      (who == "first" ? first_cpu : second_cpu) = cpu;
    } else {
      (who == "first" ? first_inode : second_inode) = a;
      (who == "first" ? first_name : second_name) = b;
    }
  }
  CHECK(first_name == "step_0");
  CHECK(second_name == "step_1");
  CHECK(!first_inode.empty());
  CHECK(second_inode == first_inode);  // the first step's group, renamed, not a new one
  CHECK(first_peak >= (40 << 20));
  CHECK(second_peak >= 0);
  CHECK(second_peak < (20 << 20));  // started again: not the first step's 40 MB
  CHECK(first_cpu > second_cpu);     // the second step's CPU time counted from its own start
}
