#include "cmd/agent/task_launch.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd/agent/cgroup.hpp"
#include "cmd/agent/vfork_into.hpp"
#include "core/step_exit.hpp"

namespace hq::cmd {
namespace {

constexpr char kPidSlot[] = "SLURM_TASK_PID=";
constexpr char kHqPidSlot[] = "HQ_TASK_PID=";
constexpr size_t kPidDigits = 12;

// Everything the child needs, built before fork so the child only makes syscalls.
struct Prepared {
  std::vector<std::string> candidates;  // where argv[0] may be, in PATH order
  std::vector<std::string> env_s;
  std::string error_prefix;  // "slurmstepd-NODE: error: ", for the chdir and execve lines
  std::vector<char*> argv, env;
  char* pid_slot = nullptr;
  char* hq_pid_slot = nullptr;
  cpu_set_t affinity;
  bool bind = false;
};

std::string env_value(const std::vector<std::string>& env, const std::string& key) {
  for (const auto& kv : env)
    if (kv.size() > key.size() && kv.compare(0, key.size(), key) == 0 && kv[key.size()] == '=') return kv.substr(key.size() + 1);
  return "";
}

std::vector<std::string> candidates_for(const std::string& name, const std::vector<std::string>& env) {
  if (name.find('/') != std::string::npos) return {name};
  std::string path = env_value(env, "PATH");
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> out;
  for (size_t start = 0; start <= path.size();) {
    size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    out.push_back((dir.empty() ? "." : dir) + "/" + name);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

void prepare(const TaskPlan& plan, Prepared& p, std::vector<std::string>& argv_s) {
  p.candidates = candidates_for(plan.argv.at(0), plan.env);
  p.error_prefix = stepd_error_prefix(plan.node);
  for (const auto& kv : plan.env)
    if (kv.rfind(kPidSlot, 0) != 0 && kv.rfind(kHqPidSlot, 0) != 0) p.env_s.push_back(kv);
  p.env_s.push_back(std::string(kPidSlot) + std::string(kPidDigits, '\0'));
  p.env_s.push_back(std::string(kHqPidSlot) + std::string(kPidDigits, '\0'));
  argv_s = plan.argv;
  for (auto& s : argv_s) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : p.env_s) p.env.push_back(s.data());
  p.env.push_back(nullptr);
  p.pid_slot = p.env_s[p.env_s.size() - 2].data() + sizeof kPidSlot - 1;
  p.hq_pid_slot = p.env_s.back().data() + sizeof kHqPidSlot - 1;
  CPU_ZERO(&p.affinity);
  for (int32_t cpu : plan.affinity)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &p.affinity), p.bind = true;
}

[[noreturn]] void child_fail(const char* what) {
  dprintf(2, "hq: error: %s: %s\n", what, strerror(errno));
  _exit(errno ? errno : 1);
}

// `born_in_group`: the child was started inside its (one, v2) group and joins nothing.
[[noreturn]] void run_task(const TaskPlan& plan, const Prepared& p, int in, int out, int err, bool born_in_group) {
  setpgid(0, 0);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
  // The PMI socket becomes descriptor 3, kept across exec (dup2 onto itself keeps CLOEXEC).
  int first_closed = 3;
  if (plan.pmi_fd >= 0) {
    if ((plan.pmi_fd == 3 ? 0 : dup2(plan.pmi_fd, 3)) < 0 || fcntl(3, F_SETFD, 0) != 0) _exit(127);
    first_closed = 4;
  }
  // Nothing else of the agent's goes with the task: a connection (a peer link, the
  // controller's) that a task held open would outlive the agent and hide its death.
  if (close_range(static_cast<unsigned>(first_closed), ~0U, 0) != 0)  // kernels before 5.9: one by one
    for (long fd = first_closed, top = sysconf(_SC_OPEN_MAX); fd < top && fd < (1 << 20); ++fd)
      close(static_cast<int>(fd));
  if (!born_in_group)
    for (const auto& procs : plan.cgroup_procs)
      if (!join_cgroup_file(procs)) child_fail("join cgroup");
  if (p.bind && sched_setaffinity(0, sizeof p.affinity, &p.affinity) != 0) child_fail("sched_setaffinity");
  if (!plan.bind_report.head.empty()) {  // no stdio: nothing allocated in memory the agent shares
    char line[512];
    int n = snprintf(line, sizeof line, "%s%d%s", plan.bind_report.head.c_str(), static_cast<int>(getpid()),
                     plan.bind_report.tail.c_str());
    if (n > 0) (void)!write(2, line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
  }
  snprintf(p.pid_slot, kPidDigits, "%d", static_cast<int>(getpid()));
  snprintf(p.hq_pid_slot, kPidDigits, "%d", static_cast<int>(getpid()));
  // Raw system calls: glibc's setuid() would try to change the ids of every thread of the
  // agent, whose memory this child shares until it execs.
  if (plan.switch_user) {
    if (syscall(SYS_setgroups, plan.groups.size(), plan.groups.data()) != 0) child_fail("setgroups");
    if (syscall(SYS_setgid, plan.gid) != 0) child_fail("setgid");
    if (syscall(SYS_setuid, plan.uid) != 0) child_fail("setuid");
  }
  if (!plan.cwd.empty() && chdir(plan.cwd.c_str()) != 0) {
    dprintf(2, "%scouldn't chdir to `%s': %s: going to /tmp instead\n", p.error_prefix.c_str(), plan.cwd.c_str(),
            strerror(errno));
    if (chdir("/tmp") != 0) child_fail("chdir");
  }
  // Defaults first, then unblocked: no handler of the agent's may run in this child.
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  int saved = ENOENT;
  for (const auto& path : p.candidates) {
    execve(path.c_str(), p.argv.data(), p.env.data());
    if (errno != ENOENT || saved == ENOENT) saved = errno;  // EACCES and the like say more than "not here"
  }
  dprintf(2, "%sexecve(): %s: %s\n", p.error_prefix.c_str(), plan.argv[0].c_str(), strerror(saved));
  _exit(saved);
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

struct ChildArgs {
  const TaskPlan* plan;
  const Prepared* prepared;
  int in, out, err;
};

void born_in_group_child(void* a) {
  auto* c = static_cast<ChildArgs*>(a);
  run_task(*c->plan, *c->prepared, c->in, c->out, c->err, true);
}

// The child, started inside its group where the kernel can, else by vfork() (it then joins
// its groups itself). Returns its pid or -1 with errno set.
pid_t start_child(const TaskPlan& plan, const Prepared& p, int in, int out, int err) {
  static std::atomic<bool> clone_into_group{true};  // until the kernel says it has no such thing
  if (int dir = clone_into_group ? open_v2_group_dir(plan.cgroup_procs) : -1; dir >= 0) {
    ChildArgs args{&plan, &p, in, out, err};
    pid_t pid = vfork_into_cgroup(dir, born_in_group_child, &args);
    close(dir);
    if (pid > 0) return pid;
    if (clone3_refused(pid)) clone_into_group = false;
  }
  pid_t pid = vfork();
  if (pid == 0) run_task(plan, p, in, out, err, false);
  return pid;
}

}  // namespace

std::vector<int32_t> own_affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int32_t> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int32_t c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

Result<LaunchedTask> launch_task(const TaskPlan& plan) {
  if (plan.argv.empty() || plan.argv[0].empty()) return invalid("no command to run");
  Prepared p;
  std::vector<std::string> argv_s;
  prepare(plan, p, argv_s);
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    close_all({in[0], in[1], out[0], out[1], err[0], err[1]});
    return io_error(std::string("pipe: ") + std::strerror(e));
  }
  // vfork (or clone3 alike): the child borrows the agent's memory until it execs, so starting
  // a task does not copy the agent's page tables (a fork of it costs milliseconds more on a
  // VM). The child
  // makes system calls only, and no signal handler of the agent may run in it: every
  // signal stays blocked until it has set them all back to their defaults.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = start_child(plan, p, in[0], out[1], err[1]);
  int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    close_all({in[0], in[1], out[0], out[1], err[0], err[1]});
    return io_error(std::string("vfork: ") + std::strerror(fork_errno));
  }
  close_all({in[0], out[1], err[1]});
  setpgid(pid, pid);  // also here: signals to its group must work before the child's own call
  return LaunchedTask{pid, in[1], out[0], err[0]};
}

}  // namespace hq::cmd
