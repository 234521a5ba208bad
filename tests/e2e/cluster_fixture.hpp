// End-to-end fixture: a real controller and N node agents (the hq binary) on 127.0.0.1
// in a temp dir, a fixed free port so a restarted controller is found again, bounded
// waits, and every process stopped at scope exit.
#pragma once
#include <arpa/inet.h>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <cstdio>
#include <fstream>
#include <map>
#include <functional>
#include <netinet/in.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "../loopback.hpp"
#include "../skip.hpp"
#include "../temp_dir.hpp"
#include "../wait_until.hpp"
#include "cmd/process.hpp"

namespace hq::test {

struct CmdResult {
  int rc = -1;
  std::string out;
};

inline CmdResult sh(const std::string& cmd) {
  CmdResult r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs the hq binary as another user (needs root and setpriv), in `dir`.
inline CmdResult as_user(int uid, const std::string& dir, const std::string& args, const std::string& env = "") {
  return sh("cd " + dir + " && setpriv --reuid=" + std::to_string(uid) + " --regid=" + std::to_string(uid) +
            " --clear-groups env " + (env.empty() ? "" : env + " ") + HQ_BINARY + " " + args);
}

// Why tests cannot act as several users here (they need root and setpriv), or "".
inline std::string why_users_cannot_switch() {
  if (geteuid() != 0) return "not root (euid " + std::to_string(geteuid()) + ")";
  return sh("command -v setpriv").rc == 0 ? "" : "no setpriv";
}

// Ends the test case as skipped unless it can act as several users.
#define HQ_SKIP_UNLESS_USERS_SWITCH()                                                      \
  do {                                                                                     \
    if (std::string why = ::hq::test::why_users_cannot_switch(); !why.empty())             \
      HQ_SKIP("needs root and setpriv to act as other users: " + why);                     \
  } while (0)

// A world-writable directory in the cluster dir, reachable by other users.
inline std::string shared_dir(const std::string& cluster_dir) {
  std::string shared = cluster_dir + "/shared";
  return sh("mkdir -m 1777 " + shared + " && chmod 755 " + cluster_dir).rc == 0 ? shared : "";
}

// A raw TCP connection to 127.0.0.1:port with a 10 s receive timeout; -1 on failure.
inline int raw_connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  close(fd);
  return -1;
}


inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How often `needle` occurs in `text`.
inline int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) ++n;
  return n;
}

// The first line of `text` that contains `needle`, or "".
inline std::string line_with(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  size_t begin = text.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, text.find('\n', at) - begin);
}

// Environment variables for the processes a test spawns (agents take HQ_* settings from
// theirs), unset again at scope exit so that later tests do not inherit them.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const std::string& name, const std::string& value) { set(name, value); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& name : names_) unsetenv(name.c_str());
  }
  void set(const std::string& name, const std::string& value) {
    setenv(name.c_str(), value.c_str(), 1);
    names_.push_back(name);
  }

 private:
  std::vector<std::string> names_;
};

// Starts shell command `cmd` in the background: its output, then "rc=N", go to `log`, its
// pid to `log`.pid (for signals). Returns whether it could be started.
inline bool run_background(const std::string& cmd, const std::string& log) {
  std::remove(log.c_str());
  return sh("(" + cmd + " > " + log + " 2>&1 & echo $! > " + log + ".pid; wait $!; echo rc=$? >> " + log +
            ") > /dev/null 2>&1 &").rc == 0;
}
// Waits (bounded) until `log` holds `text`.
inline bool wait_for_text(const std::string& log, const std::string& text, double seconds = 30) {
  return wait_until([&] { return slurp(log).find(text) != std::string::npos; }, seconds);
}

// `cmd` (srun or salloc asking for an allocation on a full cluster) in the background,
// once it says it waits; its log is `log`.
inline void run_waiting(const std::string& cmd, const std::string& log) {
  REQUIRE(run_background(cmd, log));
  REQUIRE(wait_for_text(log, "queued and waiting for resources"));
}

// Ctrl-C to the command run_background started with `log`; its whole log once it ended.
inline std::string interrupt_and_collect(const std::string& log) {
  REQUIRE(sh("kill -INT $(cat " + log + ".pid)").rc == 0);
  REQUIRE(wait_for_text(log, "rc="));
  return slurp(log);
}

// A job body that waits until `file` (relative to the job's directory) has content: the
// test decides when the job ends (LocalCluster::release), no sleep guesses how long.
inline std::string until_file(const std::string& file) {
  return "while [ ! -s " + file + " ]; do sleep 0.05; done";
}

class LocalCluster {
 public:
  // `extra` is appended to the [controller] section (e.g. limits for one test);
  // `node_extra` to the [[node]] table (e.g. gres).
  explicit LocalCluster(int nodes, int cpus = 2, int node_timeout_s = 20, const std::string& extra = "",
                        const std::string& cluster_extra = "", const std::string& node_extra = "")
      : nodes_(nodes), port_(free_port()) {
    std::ofstream(dir_.path() + "/config.toml")
        << "[cluster]\nname = \"e2e\"\nkeys_dir = \"" << dir_.path() << "/keys\"\n"
        << (cluster_extra.find("allow_root_jobs") == std::string::npos ? "allow_root_jobs = true\n" : "") << cluster_extra
        << "[controller]\nhost = \"127.0.0.1\"\nport = " << port_
        << "\nstate_dir = \"" << dir_.path() << "/state\"\nnode_timeout = \"" << node_timeout_s
        << "s\"\nheartbeat_interval = \"1s\"\n"
        << "kill_wait = \"1s\"\nsnapshot_every = 100\nhandshake_timeout = \"2s\"\n" << extra
        << "[[node]]\nnames = \"e[1-" << nodes << "]\"\ncpus = " << cpus << "\nmemory = \"4G\"\n" << node_extra
        << "[[partition]]\nname = \"debug\"\nnodes = \"e[1-" << nodes << "]\"\ndefault = true\nmax_time = \"1h\"\n";
    setenv("HQ_CONTROLLER", ("127.0.0.1:" + std::to_string(port_)).c_str(), 1);
    setenv("HQ_HOME", (dir_.path() + "/home").c_str(), 1);
    setenv("HQ_CA_FILE", (dir_.path() + "/keys/ca.pem").c_str(), 1);
    setenv("HQ_SECRET_FILE", (dir_.path() + "/keys/secret").c_str(), 1);
    setenv("HQ_AUTH_SOCKET", (dir_.path() + "/state/auth.sock").c_str(), 1);
    // Clients here are on the controller's host: its local socket, as for users there.
    setenv("HQ_CLIENT_SOCKET", (dir_.path() + "/state/client.sock").c_str(), 1);
    unsetenv("HQ_INSECURE_PLAINTEXT");
    keys_ok_ = sh(std::string(HQ_BINARY) + " keygen " + dir_.path() + "/keys e2e").rc == 0;
    start_controller();
    for (int i = 1; i <= nodes; ++i) agents_.push_back(spawn_agent(i));
    ready_ = keys_ok_ && wait_until([&] { return responding_nodes() == nodes_; }, 20);
  }
  ~LocalCluster() {
    for (pid_t p : agents_) cmd::stop_process(p, 5000);
    cmd::stop_process(controller_, 5000);
    unsetenv("HQ_CLIENT_SOCKET");
    if (test_case_failed()) print_log_tails();
  }
  // The last lines of each daemon's log and of the jobs' output files in the cluster's
  // directory, to stderr: what a failure seen only in CI left.
  // Runs in the destructor, maybe while a failed REQUIRE unwinds: nothing may escape.
  void print_log_tails() const noexcept {
    try {
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(dir_.path(), ec)) {
        auto ext = entry.path().extension();
        if (ext != ".log" && ext != ".out") continue;
        std::cerr << "---- last lines of " << entry.path().filename().string() << " ----\n"
                  << sh("tail -n 40 '" + entry.path().string() + "'").out;
      }
    } catch (...) {
    }
  }

  bool ready() const { return ready_; }
  const std::string& dir() const { return dir_.path(); }
  pid_t controller_pid() const { return controller_; }
  pid_t agent_pid(int i) const { return agents_[i - 1]; }

  int port() const { return port_; }

  void start_controller() {
    spawn_controller();
    wait_until([&] { return sh(std::string(HQ_BINARY) + " queue").rc == 0; }, 10);
  }
  // Starts the controller and returns at once (stopped with the cluster).
  void spawn_controller() {
    auto pid = cmd::spawn_daemon({HQ_BINARY, "controller", "--config", dir_.path() + "/config.toml"},
                                 dir_.path() + "/controller.log");
    controller_ = pid ? *pid : -1;
  }
  pid_t spawn_agent(int i) {
    std::string name = "e" + std::to_string(i);
    auto pid = cmd::spawn_daemon({HQ_BINARY, "node", "--name", name, "--state-dir", dir_.path() + "/" + name,
                                  "--run-dir", dir_.path() + "/" + name + "/run", "--kill-jobs-on-exit"},
                                 dir_.path() + "/" + name + ".log");
    return pid ? *pid : -1;
  }
  // An extra agent the config may not declare (dynamic node); stopped with the cluster.
  pid_t spawn_extra_agent(const std::string& name, const std::vector<std::string>& extra_args = {}) {
    std::vector<std::string> argv{HQ_BINARY, "node", "--name", name, "--state-dir", dir_.path() + "/" + name,
                                  "--run-dir", dir_.path() + "/" + name + "/run", "--kill-jobs-on-exit"};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    auto pid = cmd::spawn_daemon(argv, dir_.path() + "/" + name + ".log");
    if (pid) agents_.push_back(*pid);
    return pid ? *pid : -1;
  }
  // Replaces agent i (1-based) by a fresh process after SIGKILL (its jobs keep running
  // and the new agent re-adopts them).
  void restart_agent_after_kill9(int i) {
    kill9_agent(i);
    respawn_agent(i);
  }
  // The same, once the controller has seen agent i go silent, and waiting until it answers
  // again: nodes() are responding before and after.
  void restart_agent_seen(int i) {
    int before = responding_nodes();
    kill9_agent(i);
    REQUIRE(wait_until([&] { return responding_nodes() == before - 1; }, 20));
    respawn_agent(i);
    REQUIRE(wait_until([&] { return responding_nodes() == before; }, 20));
  }
  void kill9_agent(int i) {
    kill(agents_[i - 1], SIGKILL);
    waitpid(agents_[i - 1], nullptr, 0);
  }
  void respawn_agent(int i) { agents_[i - 1] = spawn_agent(i); }
  void kill9_controller() {
    kill(controller_, SIGKILL);
    waitpid(controller_, nullptr, 0);
  }

  // The queue line of the only job named `name` (all states), or "".
  std::string queue_line(const std::string& name) const {
    return line_with(hq("queue -t all -h").out, " " + name + " ");
  }

  int responding_nodes() const {
    auto r = sh(std::string(HQ_BINARY) + " nodes --json");
    return r.rc == 0 ? count(r.out, "\"responding\": true") : -1;
  }

  CmdResult hq(const std::string& args) const { return sh("cd " + dir_.path() + " && " + HQ_BINARY + " " + args); }

  // "PENDING", "COMPLETED", ... or "" if unknown.
  std::string state(const std::string& id) const {
    auto r = hq("queue -t all -h -j " + id);
    std::istringstream in(r.out);
    std::string jobid, part, name, user, st;
    in >> jobid >> part >> name >> user >> st;
    static const std::map<std::string, std::string> names = {
        {"PD", "PENDING"}, {"R", "RUNNING"}, {"CD", "COMPLETED"}, {"CA", "CANCELLED"},
        {"F", "FAILED"}, {"TO", "TIMEOUT"}, {"NF", "NODE_FAIL"}, {"PR", "PREEMPTED"}, {"OO", "OUT_OF_MEMORY"},
        {"DL", "DEADLINE"}, {"S", "SUSPENDED"}};
    return jobid == id && names.count(st) ? names.at(st) : "";
  }
  bool wait_state(const std::string& id, const std::string& want, double seconds) const {
    return wait_until([&] { return state(id) == want; }, seconds);
  }
  // Why pending job `id` waits: "None" until a scheduling pass has looked at it.
  std::string reason(const std::string& id) const {
    std::string json = hq("queue --json -j " + id).out;
    std::string key = "\"reason\": \"";
    size_t at = json.find(key);
    return at == std::string::npos ? "" : json.substr(at + key.size(), json.find('"', at + key.size()) - at - key.size());
  }
  // Waits until a scheduling pass has decided about pending job `id`: a job still pending
  // then was not startable, which a sleep could only hope for.
  bool wait_considered(const std::string& id, double seconds) const {
    return wait_until([&] { std::string r = reason(id); return !r.empty() && r != "None"; }, seconds);
  }
  // Ends the jobs waiting in until_file(file).
  void release(const std::string& file) const { std::ofstream(dir() + "/" + file) << "go\n"; }
  // Node e<node>'s spool directory for job `id`: its launch record ("pids") and, once the
  // job's shim saw the script end, its "exit" status.
  std::string spool(int node, const std::string& id) const { return dir() + "/e" + std::to_string(node) + "/job" + id; }
  // A running job holding every node (until release("never"), or a cancel): the next
  // allocation waits. Its id, or "" when it did not start.
  std::string fill_cluster() const {
    std::ofstream(dir() + "/hold.sh") << "#!/bin/bash\n" << until_file("never") << "\n";
    std::string id = submit("-N" + std::to_string(nodes_) + " --exclusive hold.sh");
    return wait_state(id, "RUNNING", 30) ? id : "";
  }
  std::string submit(const std::string& args) const {
    auto r = hq("submit --parsable " + args);
    std::string id = r.out;
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    return r.rc == 0 ? id : "ERROR: " + r.out;
  }

 private:
  TempDir dir_;
  int nodes_;
  int port_;
  pid_t controller_ = -1;
  std::vector<pid_t> agents_;
  bool ready_ = false;
  bool keys_ok_ = false;
};

// A shell command's start that runs a persona from the cluster's bin/ in its directory:
// in_bin(c) + "sacct -X".
inline std::string in_bin(const LocalCluster& c) { return "cd " + c.dir() + " && " + c.dir() + "/bin/"; }

// `command_line` run as user nobody, in a world-writable directory of the cluster's
// (needs HQ_SKIP_UNLESS_USERS_SWITCH first): what another user gets.
inline CmdResult as_nobody(const LocalCluster& c, const std::string& command_line) {
  std::string shared = c.dir() + "/shared";
  sh("mkdir -p " + shared + " && chmod 1777 " + shared + " && chmod 755 " + c.dir());
  return sh("cd " + shared + " && setpriv --reuid=65534 --regid=65534 --clear-groups " + command_line);
}

}  // namespace hq::test
