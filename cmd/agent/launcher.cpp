#include "cmd/agent/launcher.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <grp.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/job_env.hpp"
#include "core/pattern.hpp"

namespace hq::cmd {
namespace {

std::string job_dir(const std::string& spool, uint64_t id) { return spool + "/job" + std::to_string(id); }

std::string resolve(const std::string& path, const std::string& workdir) {
  if (path.empty() || path[0] == '/') return path;
  return workdir + "/" + path;
}

Status write_script(const std::string& dir, const Job& job, std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return io_error("cannot create spool dir " + dir + ": " + ec.message());
  path = dir + "/script";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
  if (fd < 0) return io_error("cannot write " + path + ": " + std::strerror(errno));
  const std::string& s = job.spec.script;
  bool ok = write(fd, s.data(), s.size()) == static_cast<ssize_t>(s.size());
  close(fd);
  if (!ok) return io_error("short write to " + path);
  if (geteuid() == 0) {
    if (chown(dir.c_str(), job.spec.uid, job.spec.gid) != 0 || chown(path.c_str(), job.spec.uid, job.spec.gid) != 0)
      return io_error("cannot hand " + dir + " to uid " + std::to_string(job.spec.uid));
  }
  return Status::ok();
}

// Everything the child needs, prepared before fork so the child only makes syscalls.
struct ChildPlan {
  std::string script, workdir, out_path, err_path;
  std::vector<std::string> argv_s, env_s;
  std::vector<char*> argv, env;
  std::vector<std::string> cgroup_procs;
  cpu_set_t affinity;
  bool bind = false;
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

[[noreturn]] void child_fail(int fd, const char* stage) {
  char msg[256];
  int n = snprintf(msg, sizeof msg, "%s: %s", stage, strerror(errno));
  if (n > 0) (void)!write(fd, msg, static_cast<size_t>(n));
  _exit(127);
}

[[noreturn]] void run_child(const ChildPlan& p, int report_fd) {
  setsid();
  // Join the job's cgroup before anything else runs, so every descendant is in it.
  char pid[24];
  int len = snprintf(pid, sizeof pid, "%d", static_cast<int>(getpid()));
  for (const auto& procs : p.cgroup_procs) {
    int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, pid, static_cast<size_t>(len)) != len) child_fail(report_fd, "join cgroup");
    close(fd);
  }
  if (p.bind && sched_setaffinity(0, sizeof p.affinity, &p.affinity) != 0) child_fail(report_fd, "sched_setaffinity");
  if (p.switch_user) {
    if (setgroups(p.groups.size(), p.groups.data()) != 0) child_fail(report_fd, "setgroups");
    if (setgid(p.gid) != 0) child_fail(report_fd, "setgid");
    if (setuid(p.uid) != 0) child_fail(report_fd, "setuid");
  }
  bool chdir_failed = chdir(p.workdir.c_str()) != 0;
  if (chdir_failed && chdir("/tmp") != 0) child_fail(report_fd, "chdir");
  int in = open("/dev/null", O_RDONLY);
  int out = open(p.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) child_fail(report_fd, ("open " + p.out_path).c_str());
  int err = out;
  if (p.err_path != p.out_path) {
    err = open(p.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err < 0) child_fail(report_fd, ("open " + p.err_path).c_str());
  }
  if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) child_fail(report_fd, "dup2");
  if (chdir_failed) dprintf(2, "hq: couldn't chdir to `%s': going to /tmp instead\n", p.workdir.c_str());
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execve(p.script.c_str(), p.argv.data(), p.env.data());
  child_fail(report_fd, "execve");
}

Result<ChildPlan> plan_child(const BatchLaunch& l) {
  const Job& job = l.job;
  ChildPlan p;
  if (Status s = write_script(job_dir(l.spool_dir, job.id.value), job, p.script); !s) return s;
  p.workdir = job.spec.workdir.empty() ? "/tmp" : job.spec.workdir;
  PatternContext ctx;
  ctx.job_id = job.id.value;
  ctx.user = job.spec.user;
  ctx.job_name = job.spec.name;
  ctx.node = l.node_name;
  std::string out_pat = job.spec.output.empty() ? "slurm-%j.out" : job.spec.output;
  p.out_path = resolve(expand_pattern(out_pat, ctx), p.workdir);
  p.err_path = job.spec.error.empty() ? p.out_path : resolve(expand_pattern(job.spec.error, ctx), p.workdir);
  p.argv_s.push_back(p.script);
  p.argv_s.insert(p.argv_s.end(), job.spec.argv.begin(), job.spec.argv.end());
  LaunchContext lc{l.node_name, l.cluster, l.nodelist, l.node_index, 1, {}, l.node_gpus, l.gpus_renumbered};
  for (const NodeAlloc& a : job.alloc)
    if (a.node == l.node_name) {
      lc.cpus_on_node = a.cpus;
      lc.gpus = a.gpus;
    }
  p.env_s = job_environment(job, lc);
  p.cgroup_procs = l.cgroup_procs;
  CPU_ZERO(&p.affinity);
  for (int32_t cpu : l.affinity)
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &p.affinity), p.bind = true;
  for (auto& s : p.argv_s) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : p.env_s) p.env.push_back(s.data());
  p.env.push_back(nullptr);
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

Result<pid_t> launch_batch(const BatchLaunch& launch) {
  auto plan = plan_child(launch);
  if (!plan) return plan.status();
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return io_error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return io_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(*plan, fds[1]);
  }
  close(fds[1]);
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf - 1)) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  if (n > 0) {
    int status;
    waitpid(pid, &status, 0);
    return io_error("launch failed: " + std::string(buf, static_cast<size_t>(n)));
  }
  setpgid(pid, pid);  // the child did setsid(); harmless if already the leader
  return pid;
}

void cleanup_spool(const std::string& spool_dir, uint64_t job_id) {
  std::error_code ec;
  std::filesystem::remove_all(job_dir(spool_dir, job_id), ec);
}

}  // namespace hq::cmd
