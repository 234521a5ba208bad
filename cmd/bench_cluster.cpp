#include "cmd/bench_cluster.hpp"

#include <chrono>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cmd/auth_client.hpp"
#include "cmd/client/job_query.hpp"
#include "cmd/keys.hpp"
#include "cmd/paths.hpp"
#include "cmd/process.hpp"
#include "net/clock.hpp"

namespace hq::cmd {

BenchCluster::~BenchCluster() {
  for (auto it = pids.rbegin(); it != pids.rend(); ++it) stop_process(*it, 5000);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}


Status start_cluster(BenchCluster& c, int nodes, int cpus, bool plaintext) {
  char tmpl[] = "/tmp/hq-bench-XXXXXX";
  if (!mkdtemp(tmpl)) return io_error("mkdtemp failed");
  c.dir = tmpl;
  int declared = std::max(nodes, 1);
  std::ofstream(c.dir + "/config.toml")
      << "[cluster]\nname = \"bench\"\nkeys_dir = \"" << c.dir << "/keys\"\nallow_root_jobs = true\n[controller]\nhost = \"127.0.0.1\"\nport = 0\nstate_dir = \"" << c.dir
      << "/state\"\nmin_job_age = \"1h\"\nsnapshot_every = 100000\n"
      << "[[node]]\nnames = \"b[1-" << declared << "]\"\ncpus = " << cpus << "\nmemory = \"64G\"\n"
      << "[[partition]]\nname = \"bench\"\nnodes = \"b[1-" << declared << "]\"\ndefault = true\n";
  if (!c.accounting_db.empty()) std::ofstream(c.dir + "/config.toml", std::ios::app) << "[accounting]\npath = \"" << c.accounting_db << "\"\n";
  if (Status s = keygen(c.dir + "/keys", "bench"); !s) return s;
  c.transport = plaintext ? net::Transport{true, ""} : net::Transport{false, read_small_file(c.dir + "/keys/ca.pem")};
  std::vector<std::string> argv = {self_exe(), "controller", "--config", c.dir + "/config.toml"};
  if (plaintext) argv.push_back("--insecure-plaintext");
  auto ctl = spawn_daemon(argv, c.dir + "/controller.log");
  if (!ctl) return ctl.status();
  c.pids.push_back(*ctl);
  for (int i = 0; i < 200 && c.addr.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    c.addr = read_small_file(c.dir + "/state/controller.addr");
  }
  if (c.addr.empty()) return unavailable("bench controller did not start; see " + c.dir + "/controller.log");
  c.addr.erase(c.addr.find_last_not_of("\n ") + 1);
  for (int i = 1; i <= nodes; ++i) {
    std::string name = "b" + std::to_string(i);
    std::vector<std::string> node_argv = {self_exe(), "node", "--controller", c.addr, "--name", name,
                                          "--state-dir", c.dir + "/" + name, "--ca", c.dir + "/keys/ca.pem",
                                          "--secret", c.dir + "/keys/secret", "--run-dir", c.dir + "/" + name + "/run",
                                          "--kill-jobs-on-exit"};
    if (plaintext) node_argv.push_back("--insecure-plaintext");
    auto a = spawn_daemon(node_argv, c.dir + "/" + name + ".log");
    if (a) c.pids.push_back(*a);
  }
  return Status::ok();
}

bool run_client(const BenchCluster& c, const std::vector<std::string>& argv, const std::string& out) {
  std::string exe = self_exe();
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    setenv("HQ_CONTROLLER", c.addr.c_str(), 1);
    setenv("HQ_CA_FILE", (c.dir + "/keys/ca.pem").c_str(), 1);
    setenv("HQ_AUTH_SOCKET", (c.dir + "/state/auth.sock").c_str(), 1);
    if (c.transport.plaintext) setenv("HQ_INSECURE_PLAINTEXT", "1", 1);
    setenv("HQ_CLIENT_SOCKET", c.local_socket ? (c.dir + "/state/client.sock").c_str() : "none", 1);
    execv(exe.c_str(), args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A client connection as a CLI would make it: a fresh token from the token service.
Result<std::unique_ptr<net::RpcClient>> bench_connect(const BenchCluster& c) {
  auto token = fetch_token(c.dir + "/state/auth.sock");
  if (!token) return token.status();
  net::Transport t = c.transport;
  t.token = *token;
  return net::RpcClient::connect(*net::parse_endpoint(c.addr), t, "client");
}

Status wait_for_nodes(net::RpcClient& client, int nodes) {
  for (int i = 0; i < 200; ++i) {
    pb::Envelope q;
    q.mutable_nodes();
    auto r = client.call(q);
    int up = 0;
    if (r) for (const auto& node : r->nodes_reply().nodes()) up += node.responding();
    if (up == nodes) return Status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return unavailable("the bench cluster's " + std::to_string(nodes) + " agents did not all come up");
}

Status wait_until_idle(net::RpcClient& client, double timeout_s) {
  double deadline = net::mono_seconds() + timeout_s;
  while (net::mono_seconds() < deadline) {
    auto r = query_jobs(client, pb::QueueRequest{});
    if (r && r->jobs_size() == 0) return Status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return unavailable("the benchmark's jobs did not all end within " + std::to_string(static_cast<int>(timeout_s)) + " s");
}

}  // namespace hq::cmd
