#include "cmd/agent/launcher.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

#include "cmd/agent/cgroup.hpp"
#include "cmd/agent/fork_memory.hpp"
#include "cmd/agent/shim_memory.hpp"
#include "cmd/agent/vfork_into.hpp"
#include "core/job_env.hpp"
#include "core/pattern.hpp"
#include "core/step_exit.hpp"
#include "net/clock.hpp"

namespace hq::cmd {
namespace {

std::string resolve(const std::string& path, const std::string& workdir) {
  if (path.empty() || path[0] == '/') return path;
  return workdir + "/" + path;
}

Status write_script(const std::string& dir, const Job& job, std::string& path) {
  path = dir + "/script";
  int fd = open_script_file(dir, geteuid() == 0 ? job.spec.uid : geteuid());
  if (fd < 0) return io_error("cannot write " + path + ": " + std::strerror(errno));
  const std::string& s = *job.spec.script;
  bool ok = write_whole_file(fd, s.data(), s.size());
  close(fd);
  if (!ok) return io_error("short write to " + path);
  // The directory stays the agent's (its records there are trusted after a restart); the
  // user may only enter it to run the script, which is theirs.
  if (chmod(dir.c_str(), 0711) != 0) return io_error("cannot open " + dir + " to the job: " + std::strerror(errno));
  if (geteuid() == 0 && chown(path.c_str(), job.spec.uid, job.spec.gid) != 0)
    return io_error("cannot hand " + path + " to uid " + std::to_string(job.spec.uid));
  return Status::ok();
}

// Everything the child needs, prepared before fork so the child only makes syscalls.
struct ChildPlan {
  std::string script, workdir, out_path, err_path;
  std::string error_prefix;  // slurmstepd's words: "slurmstepd-n1: error: "
  std::string in_path = "/dev/null";
  int out_flags = O_WRONLY | O_CREAT | O_TRUNC;  // --open-mode=append: O_APPEND instead
  std::vector<std::string> argv_s, env_s;
  std::vector<std::string> cgroup_procs;
  std::string exit_path;       // where the shim writes the script's wait status
  std::string exit_tmp_path;   // written first, then renamed to exit_path
  std::string pids_path;       // the agent's pid record: the shim removes it if the agent never says go
  std::string lease_path, fenced_path;
  int64_t fence_timeout = 0;
  cpu_set_t affinity;
  bool bind = false;
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

// What the shim and the script read once forked: copied into a ForkBlock, since the child
// has no heap (HeapNotForked) and must not allocate.
struct ShimPlan {
  const char *script, *workdir, *out_path, *err_path, *error_prefix, *in_path;
  const char *exit_path, *exit_tmp_path, *pids_path, *lease_path, *fenced_path;
  char* const* argv;
  char* const* env;
  char* const* cgroup_procs;
  const gid_t* groups;
  size_t group_count;
  int out_flags;
  int64_t fence_timeout;
  cpu_set_t affinity;
  bool bind, switch_user;
  uid_t uid;
  gid_t gid;
  char* script_stack;  // ShimArea::kStack bytes for the script's child, above a guard page
  // The shim joins the job's cgroup itself (a forked shim, as a v2 group or systemd's unit
  // want it out of the agent's); else the script's child does (a shim sharing the agent's
  // memory must not count in the job's memory group, see start_shim).
  bool shim_joins;
  bool born_in_group;  // a forked shim started inside the job's v2 group: nothing to join
};

// ShimPlan's texts and where each comes from.
constexpr std::pair<const char* ShimPlan::*, std::string ChildPlan::*> kShimTexts[] = {
    {&ShimPlan::script, &ChildPlan::script},       {&ShimPlan::workdir, &ChildPlan::workdir},
    {&ShimPlan::out_path, &ChildPlan::out_path},   {&ShimPlan::err_path, &ChildPlan::err_path},
    {&ShimPlan::error_prefix, &ChildPlan::error_prefix}, {&ShimPlan::in_path, &ChildPlan::in_path},
    {&ShimPlan::exit_path, &ChildPlan::exit_path}, {&ShimPlan::exit_tmp_path, &ChildPlan::exit_tmp_path},
    {&ShimPlan::pids_path, &ChildPlan::pids_path}, {&ShimPlan::lease_path, &ChildPlan::lease_path},
    {&ShimPlan::fenced_path, &ChildPlan::fenced_path}};
// ShimPlan's lists and where each comes from.
constexpr std::pair<char* const* ShimPlan::*, std::vector<std::string> ChildPlan::*> kShimLists[] = {
    {&ShimPlan::argv, &ChildPlan::argv_s}, {&ShimPlan::env, &ChildPlan::env_s},
    {&ShimPlan::cgroup_procs, &ChildPlan::cgroup_procs}};

size_t shim_plan_size(const ChildPlan& p) {
  size_t bytes = sizeof(ShimPlan) + alignof(ShimPlan) + p.groups.size() * sizeof(gid_t) + alignof(gid_t);
  for (auto [to, from] : kShimTexts) bytes += ForkBlock::size_of(p.*from);
  for (auto [to, from] : kShimLists) bytes += ForkBlock::size_of(p.*from);
  return bytes;
}

// `p` copied into `block`; nullptr if it did not fit.
ShimPlan* flatten(const ChildPlan& p, ForkBlock& block) {
  ShimPlan* f = block.room<ShimPlan>(1);
  gid_t* groups = block.room<gid_t>(p.groups.size());
  if (!f || (!groups && !p.groups.empty())) return nullptr;
  *f = ShimPlan{};
  for (auto [to, from] : kShimTexts)
    if (!(f->*to = block.put(p.*from))) return nullptr;
  for (auto [to, from] : kShimLists)
    if (!(f->*to = block.put_list(p.*from))) return nullptr;
  if (groups) std::copy(p.groups.begin(), p.groups.end(), groups);
  f->groups = groups;
  f->group_count = p.groups.size();
  f->out_flags = p.out_flags;
  f->fence_timeout = p.fence_timeout;
  f->affinity = p.affinity;
  f->bind = p.bind;
  f->switch_user = p.switch_user;
  f->uid = p.uid;
  f->gid = p.gid;
  f->script_stack = nullptr;
  f->shim_joins = true;
  f->born_in_group = false;
  return f;
}

// "<stage>[ <path>]: <errno's text>" to the agent, then exit: no allocation.
[[noreturn]] void child_fail(int fd, const char* stage, const char* path = nullptr) {
  char msg[512];
  int n = path ? snprintf(msg, sizeof msg, "%s %s: %s", stage, path, strerror(errno))
               : snprintf(msg, sizeof msg, "%s: %s", stage, strerror(errno));
  if (n > 0) (void)!write(fd, msg, std::min(static_cast<size_t>(n), sizeof msg - 1));
  _exit(127);
}

// Signals the shim ignores (its script, in a process group of its own, gets them); the
// script gets their default dispositions back before exec.
constexpr int kShimIgnores[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
                                SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};

// Reads one byte from `fd` (blocking) and closes it: whether it was `token` (end of file
// means the writer ended without sending it).
bool read_token(int fd, char token) {
  char c = 0;
  ssize_t n;
  while ((n = read(fd, &c, 1)) < 0 && errno == EINTR) {
  }
  close(fd);
  return n == 1 && c == token;
}

// Waits for the agent's go ('G' on `go_fd`), sent once it has recorded the job for a
// restarted agent to find. End of file instead means the agent died (or could not record
// it) first: no trace of the job is left to adopt, so its controller will run it again, and
// the script must not start.
bool agent_says_go(int go_fd) { return read_token(go_fd, 'G'); }

// The job's cgroup joined, before anything of the job runs: every descendant is in it.
void join_job_cgroup(const ShimPlan& p, int report_fd) {
  for (char* const* procs = p.cgroup_procs; *procs; ++procs)
    if (!join_cgroup_file(*procs)) child_fail(report_fd, "join cgroup");
}

// What the shim hands the script's child.
struct ScriptChild {
  const ShimPlan* plan;
  int report_fd, go_fd;
  int went_fd;  // the child writes 'W' here once the agent said go (close-on-exec)
};

// The batch script itself, a vfork-style child of the shim (the shim waits until it execs
// or exits): its own process group; its pid to the agent, which records it; once the agent
// says go, its CPUs, the user, files, exec. Only system calls, on the shim's plan.
[[noreturn]] void run_script(ScriptChild& c) {
  const ShimPlan& p = *c.plan;
  int report_fd = c.report_fd;
  if (!p.shim_joins) join_job_cgroup(p, report_fd);
  setpgid(0, 0);
  char pid_msg[32];
  int len = snprintf(pid_msg, sizeof pid_msg, "P%d;", static_cast<int>(getpid()));
  (void)!write(report_fd, pid_msg, static_cast<size_t>(len));
  if (!agent_says_go(c.go_fd)) {
    unlink(p.pids_path);  // an agent starting now must not adopt this job
    _exit(127);
  }
  (void)!write(c.went_fd, "W", 1);
  // Not to be traced by the job's user while it still shares the shim's memory (or the
  // agent's, see start_shim).
  if (p.switch_user) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  for (int sig : kShimIgnores) signal(sig, SIG_DFL);
  if (p.bind && sched_setaffinity(0, sizeof p.affinity, &p.affinity) != 0) child_fail(report_fd, "sched_setaffinity");
  if (p.switch_user) {
    // Raw system calls: glibc's setuid() would set the ids of every thread it knows of,
    // and the shim (a child of _Fork()), whose memory this child shares, still lists the
    // agent's.
    if (syscall(SYS_setgroups, p.group_count, p.groups) != 0) child_fail(report_fd, "setgroups");
    if (syscall(SYS_setresgid, p.gid, p.gid, p.gid) != 0) child_fail(report_fd, "setgid");
    if (syscall(SYS_setresuid, p.uid, p.uid, p.uid) != 0) child_fail(report_fd, "setuid");
    // The switch set the memory's dumpable mode to fs.suid_dumpable, which may let the
    // user trace it (1) until the exec: not so.
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  }
  bool chdir_failed = chdir(p.workdir) != 0;
  int chdir_errno = errno;
  if (chdir_failed && chdir("/tmp") != 0) child_fail(report_fd, "chdir");
  int in = open(p.in_path, O_RDONLY);
  if (in < 0) child_fail(report_fd, "open", p.in_path);
  int out = open(p.out_path, p.out_flags, 0644);
  if (out < 0) child_fail(report_fd, "open", p.out_path);
  int err = out;
  if (strcmp(p.err_path, p.out_path) != 0) {
    err = open(p.err_path, p.out_flags, 0644);
    if (err < 0) child_fail(report_fd, "open", p.err_path);
  }
  if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) child_fail(report_fd, "dup2");
  if (chdir_failed) {  // slurmstepd's line, word for word (snprintf: dprintf allocates its buffer)
    char line[1024];
    int n = snprintf(line, sizeof line, "%scouldn't chdir to `%s': %s: going to /tmp instead\n", p.error_prefix,
                     p.workdir, strerror(chdir_errno));
    if (n > 0) (void)!write(2, line, std::min(static_cast<size_t>(n), sizeof line - 1));
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(p.script, p.argv, p.env);
  child_fail(report_fd, "execve");
}

// Seconds since the lease file was touched; 0 when there is none (no agent ever had one).
double lease_age(const char* path) {
  struct stat st {};
  struct timespec now {};
  if (stat(path, &st) != 0 || clock_gettime(CLOCK_REALTIME, &now) != 0) return 0;
  return static_cast<double>(now.tv_sec - st.st_mtim.tv_sec) + static_cast<double>(now.tv_nsec - st.st_mtim.tv_nsec) * 1e-9;
}

// Waits for the script; with a fence timeout, polls 4 times a second and kills the
// script's process group once the agent's lease is older than that (leaving a marker first).
int wait_fenced(const ShimPlan& p, pid_t script) {
  int status = 0;
  bool fenced = false;
  while (true) {
    pid_t r = waitpid(script, &status, p.fence_timeout > 0 && !fenced ? WNOHANG : 0);
    if (r == script) return status;
    if (r < 0 && errno != EINTR) return status;
    if (r != 0 || fenced) continue;
    if (lease_age(p.lease_path) > static_cast<double>(p.fence_timeout)) {
      int fd = open(p.fenced_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) close(fd);
      kill(-script, SIGKILL);
      fenced = true;
      continue;
    }
    struct timespec tick {0, 250000000};  // 4 checks a second: the fence comes at most 0.25 s late
    nanosleep(&tick, nullptr);
  }
}

// Closes every descriptor from 3 up except `a` and `b` (a < b).
void keep_only(int a, int b) {
  if (a > 3) close_range(3, static_cast<unsigned>(a) - 1, 0);
  if (b > a + 1) close_range(static_cast<unsigned>(a) + 1, static_cast<unsigned>(b) - 1, 0);
  close_range(static_cast<unsigned>(b) + 1, ~0U, 0);
}


// Starts the script's child: vfork-style, sharing the shim's memory until it execs, on a
// stack of its own with a guard page below it (no copy of the shim's page tables to make,
// and none to tear down at its exec; only the pages it touches are mapped); where clone3
// is not to be had (an older kernel, a seccomp filter), a plain _Fork().
pid_t start_script_child(ScriptChild& child, int report_fd) {
  pid_t script = vfork_on_stack(child.plan->script_stack, ShimArea::kStack,
                                [](void* c) { run_script(*static_cast<ScriptChild*>(c)); }, &child);
  if (clone3_refused(script)) {
    script = _Fork();  // no atfork handlers: they would touch the heap this process has not got
    if (script == 0) run_script(child);
    if (script < 0) script = -errno;
  }
  if (script < 0) {
    errno = -script;
    child_fail(report_fd, "fork");
  }
  return script;
}

// Whether the script's child got the agent's go ('W' on `went_fd`); end of file: it ended
// without.
bool child_went(int went_fd) { return read_token(went_fd, 'W'); }

// The job's shim (the agent's child, root): starts the script, tells the agent its pid,
// lets it run once the agent says go, waits for it and writes its wait status to
// `exit_path`, so the end is known even if the agent was restarted meanwhile. Only
// syscalls here.
[[noreturn]] void run_shim(const ShimPlan& p, int report_fd, int go_fd) {
  setsid();
  // Nothing of the agent (its sockets, event loop) stays open in a long-lived copy.
  keep_only(std::min(report_fd, go_fd), std::max(report_fd, go_fd));
  if (p.shim_joins && !p.born_in_group) join_job_cgroup(p, report_fd);
  for (int sig : kShimIgnores) signal(sig, SIG_IGN);
  signal(SIGCHLD, SIG_DFL);  // not the agent's handler, which writes to a descriptor closed here
  int went[2];
  if (pipe2(went, O_CLOEXEC) != 0) child_fail(report_fd, "pipe");
  ScriptChild child{&p, report_fd, go_fd, went[1]};
  pid_t script = start_script_child(child, report_fd);
  close(went[1]);
  close(go_fd);
  close(report_fd);
  int status = 0;
  if (!child_went(went[0])) {
    waitpid(script, &status, 0);
    if (!WIFSIGNALED(status)) {  // the agent never said go: nothing of the job ran
      unlink(p.pids_path);
      _exit(127);
    }  // killed before it could read the go: its end is still the job's
  } else {
    status = wait_fenced(p, script);
  }
  int fd = open(p.exit_tmp_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);  // a kept directory's stale one is written over
  if (fd >= 0) {
    char msg[32];
    int n = snprintf(msg, sizeof msg, "%d\n", status);
    bool ok = write_whole_file(fd, msg, static_cast<size_t>(n));
    close(fd);
    if (ok) rename(p.exit_tmp_path, p.exit_path);
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
}

// The script's stdout, stderr or stdin file.
enum class Stdio { kOut, kErr, kIn };
std::string batch_path(const Job& job, const std::string& node, Stdio which) {
  std::string workdir = job.spec.workdir.empty() ? "/tmp" : job.spec.workdir;
  PatternContext ctx;
  ctx.job_id = job.id.value;
  ctx.user = job.spec.user;
  ctx.job_name = job.spec.name;
  ctx.node = node;
  ctx.array_job_id = job.array_job_id;
  if (job.array_job_id) ctx.array_task = job.array_task_id;
  std::string pattern = !job.spec.output.empty() ? job.spec.output : job.array_job_id ? "slurm-%A_%a.out" : "slurm-%j.out";
  if (which == Stdio::kErr && !job.spec.error.empty()) pattern = job.spec.error;
  if (which == Stdio::kIn) pattern = job.spec.extra->input;
  return resolve(expand_pattern(pattern, ctx), workdir);
}

Result<ChildPlan> plan_child(const BatchLaunch& l) {
  const Job& job = l.job;
  ChildPlan p;
  if (Status s = make_job_dir(l.spool_dir, job.id.value); !s) return s;
  if (Status s = write_script(job_dir(l.spool_dir, job.id.value), job, p.script); !s) return s;
  p.workdir = job.spec.workdir.empty() ? "/tmp" : job.spec.workdir;
  p.error_prefix = stepd_error_prefix(l.node_name);
  p.out_path = batch_path(job, l.node_name, Stdio::kOut);
  p.err_path = batch_path(job, l.node_name, Stdio::kErr);
  if (!job.spec.extra->input.empty()) p.in_path = batch_path(job, l.node_name, Stdio::kIn);
  if (job.spec.extra->open_mode == 1) p.out_flags = O_WRONLY | O_CREAT | O_APPEND;
  p.argv_s.push_back(p.script);
  p.argv_s.insert(p.argv_s.end(), job.spec.argv.begin(), job.spec.argv.end());
  LaunchContext lc{l.node_name, l.cluster, l.nodelist, l.node_index, 1, {}, l.node_gpus, l.gpus_renumbered, l.step_socket};
  lc.topo = l.topo;
  for (const NodeAlloc& a : job.alloc)
    if (a.node == l.node_name) {
      lc.cpus_on_node = a.cpus;
      lc.gpus = a.gpus;
    }
  p.env_s = job_environment(job, lc);
  p.cgroup_procs = l.cgroup_procs;
  p.exit_path = exit_file(l.spool_dir, job.id.value);
  p.exit_tmp_path = p.exit_path + ".new";
  p.pids_path = pids_file(l.spool_dir, job.id.value);
  p.lease_path = lease_file(l.spool_dir);
  p.fenced_path = fenced_file(l.spool_dir, job.id.value);
  p.fence_timeout = l.fence_timeout;
  CPU_ZERO(&p.affinity);
  for (int32_t cpu : l.affinity)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &p.affinity), p.bind = true;
  if (geteuid() == 0) {
    p.switch_user = true;
    p.uid = job.spec.uid;
    p.gid = job.spec.gid;
    p.groups.assign(job.spec.groups.begin(), job.spec.groups.end());
  } else if (job.spec.uid != getuid()) {
    return denied("this agent runs as uid " + std::to_string(getuid()) + " and cannot start jobs for uid " +
                  std::to_string(job.spec.uid));
  }
  return p;
}

}  // namespace

namespace {

// Reads the shim's report until `until` is in it, or to the end of file (until = 0).
void read_report(int fd, std::string& report, char until) {
  char buf[512];
  while (until == 0 || report.find(until) == std::string::npos) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    report.append(buf, static_cast<size_t>(n));
  }
}

// "P<pid>;" at the start of the report: the script's pid (removed from the report); 0 if absent.
pid_t take_script_pid(std::string& report) {
  size_t end = report.find(';');
  if (report.size() < 2 || report[0] != 'P' || end == std::string::npos) return 0;
  pid_t pid = static_cast<pid_t>(std::atoi(report.substr(1, end - 1).c_str()));
  report.erase(0, end + 1);
  return pid;
}

}  // namespace

namespace {

// What the shim starts from, in its area: its plan and the pipes' ends (the agent's two
// are closed in the shim).
struct ShimStart {
  ShimPlan* plan;
  int report_write, go_read, report_read, go_write;
};

[[noreturn]] void shim_main(void* arg) {
  const ShimStart& start = *static_cast<const ShimStart*>(arg);
  close(start.report_read);
  close(start.go_write);
  run_shim(*start.plan, start.report_write, start.go_read);
}

// Starts the shim: sharing the agent's memory, on its area, when `share` (and the kernel
// allows), else a fork without the agent's heap, born in the job's group where that is one
// v2 group (`cgroup_procs`, its cgroup.procs). Its pid, or -errno.
// A shim that shares the agent's memory is not a member of the job's cgroup (its script's
// child joins it): the kernel would count the agent's whole memory as its own there, and an
// OOM kill in the job's memory group that picked it would kill every process sharing it,
// the agent too. So it stays in the agent's groups, which is why only v1 shares (the caller
// decides): there the agent's service manager does not track its processes by these groups,
// while a v2 group is also systemd's unit, whose stop would kill shims left in it. The
// script's child shares the memory until its exec and is made not dumpable, as a root
// agent is from its start (Agent::start), so the job's user cannot trace into it.
pid_t start_shim(ShimArea& area, ShimStart* start, bool share, const std::vector<std::string>& cgroup_procs) {
  ShimPlan& plan = *start->plan;
  if (void* thread = share ? copy_thread_area(area.thread_room()) : nullptr) {
    plan.shim_joins = false;
    pid_t pid = clone_sharing_memory(area.shim_stack(), ShimArea::kStack, thread, shim_main, start);
    if (!clone3_refused(pid)) return pid;  // else refused: fork
  }
  plan.shim_joins = true;
  HeapNotForked without_heap;
  // Born in the job's v2 group where the kernel can: a move there afterwards (a write to
  // cgroup.procs) takes the kernel's threadgroup lock for writing, which may wait for an
  // RCU grace period (cmd/agent/vfork_into.hpp). Not where clone3 or its flag is refused.
  static bool clone_into_group = true;  // the agent's event loop only
  if (int dir = clone_into_group ? open_v2_group_dir(cgroup_procs) : -1; dir >= 0) {
    plan.born_in_group = true;
    pid_t pid = fork_into_cgroup(dir, shim_main, start);
    close(dir);
    if (pid > 0) return pid;
    plan.born_in_group = false;
    if (clone3_refused(pid)) clone_into_group = false;
  }
  // _Fork: glibc's fork() runs its atfork handlers in the child (malloc's, stdio's walk
  // over every open FILE, NSS's), which read the heap this child has not got.
  pid_t pid = _Fork();
  if (pid == 0) shim_main(start);
  return pid < 0 ? -errno : pid;
}

}  // namespace

Result<LaunchedJob> launch_batch(const BatchLaunch& launch, const RecordLaunch& record) {
  auto plan = plan_child(launch);
  if (!plan) return plan.status();
  ShimArea area(shim_plan_size(*plan) + sizeof(ShimStart) + alignof(ShimStart));
  if (!area.ok()) return io_error(std::string("cannot map memory for the job's shim: ") + std::strerror(errno));
  ForkBlock block = area.plan();
  auto* start = block.room<ShimStart>(1);
  ShimPlan* shim_plan = flatten(*plan, block);
  if (!shim_plan || !start) {
    area.free_after_reap();
    return internal("the job's shim plan did not fit the memory sized for it");
  }
  shim_plan->script_stack = area.script_stack();
  int report[2], go[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    area.free_after_reap();
    return io_error(std::string("pipe: ") + std::strerror(errno));
  }
  if (pipe2(go, O_CLOEXEC) != 0) {
    close(report[0]);
    close(report[1]);
    area.free_after_reap();
    return io_error(std::string("pipe: ") + std::strerror(errno));
  }
  *start = ShimStart{shim_plan, report[1], go[0], report[0], go[1]};
  pid_t pid = start_shim(area, start, launch.share_agent_memory, plan->cgroup_procs);
  bool shared = !shim_plan->shim_joins;
  if (pid < 0) {
    for (int fd : {report[0], report[1], go[0], go[1]}) close(fd);
    area.free_after_reap();
    return io_error(std::string("fork: ") + std::strerror(-pid));
  }
  close(report[1]);
  close(go[0]);
  // "P<script pid>;" from the shim; the record; go; then an error text if the script could
  // not start, or end of file once it has exec'd (the pipe closes on exec).
  std::string text;
  read_report(report[0], text, ';');
  LaunchedJob out{pid, take_script_pid(text), shared, {}};
  Status recorded = out.script > 0 ? record(out) : Status::ok();
  if (out.script > 0 && recorded) (void)!write(go[1], "G", 1);
  close(go[1]);
  read_report(report[0], text, 0);
  close(report[0]);
  if (!recorded || !text.empty() || out.script <= 0) {
    int status = 0;
    pid_t reaped;
    while ((reaped = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (reaped == pid) area.free_after_reap();  // else a shim may still run on it: left mapped
    if (!recorded) return recorded;
    if (text.empty() && WIFSIGNALED(status))
      text = "the job's shim was killed by signal " + std::to_string(WTERMSIG(status));
    return io_error("launch failed: " + (text.empty() ? std::string("no report from the job's shim") : text));
  }
  out.area = std::move(area);
  return out;
}

std::string cancelled_banner(const std::string& what, const std::string& node, const std::string& why) {
  return "*** " + what + " ON " + node + " CANCELLED AT " + net::local_time_text(net::wall_now()) + why + " ***";
}

std::string batch_error_path(const Job& job, const std::string& node) { return batch_path(job, node, Stdio::kErr); }

bool append_job_line(const std::string& path, uid_t owner, const std::string& line) {
  // Looked at before it is opened: opening a device (a watchdog, a tape) can act by itself.
  struct stat before {};
  if (lstat(path.c_str(), &before) != 0 || !S_ISREG(before.st_mode) || before.st_uid != owner) return false;
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == owner && st.st_dev == before.st_dev &&
            st.st_ino == before.st_ino;  // the same file it looked at
  if (ok) ok = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  close(fd);
  return ok;
}

}  // namespace hq::cmd
