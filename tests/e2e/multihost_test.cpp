// End to end across "hosts": the controller and two node agents each in a network
// namespace of their own (created here, joined by veth links to a bridge in the
// controller's namespace, addresses 10.231.0.0/24 that exist only inside them). The
// agents start first, have only the cluster secret, fetch the CA over the link, join as
// dynamic nodes; a client on node 1 (through its agent's token service) runs a job on
// node 2. The same runs on loopback as a test of its own; without namespaces (no root, no
// `ip`) the namespaced one is skipped, not passed.
#include <doctest/doctest.h>

#include <csignal>
#include <unistd.h>

#include "cluster_fixture.hpp"

using namespace hq::test;

namespace {

// Three namespaces ("c", "n1", "n2") if `separate`, else all on loopback; removed (with
// their links) at the end. why_not() says why namespaces were asked for but not made.
class Hosts {
 public:
  explicit Hosts(bool separate) {
    if (!separate) return;
    auto where = sh("command -v ip");
    if (geteuid() != 0) why_not_ = "not root (euid " + std::to_string(geteuid()) + ")";
    else if (where.rc != 0) why_not_ = "no ip(8)";
    else if (auto list = sh("ip netns list"); list.rc != 0) why_not_ = "ip netns list: " + list.out;
    if (!why_not_.empty()) return;
    ip_ = where.out.substr(0, where.out.find('\n'));  // spawn_daemon needs a path
    std::string tag = std::to_string(getpid() % 100000);
    for (const char* role : {"c", "n1", "n2"}) names_.push_back("hq" + tag + role);
    std::string script = "set -e; ";
    for (const auto& ns : names_) script += "ip netns add " + ns + "; ip -n " + ns + " link set lo up; ";
    script += "ip -n " + names_[0] + " link add br0 type bridge; ip -n " + names_[0] + " link set br0 up; ";
    script += "ip -n " + names_[0] + " addr add 10.231.0.1/24 dev br0; ";
    for (int i = 1; i <= 2; ++i) {
      std::string a = "hv" + tag + "a" + std::to_string(i), b = "hv" + tag + "b" + std::to_string(i);
      script += "ip link add " + a + " type veth peer name " + b + "; ";
      script += "ip link set " + a + " netns " + names_[i] + "; ip link set " + b + " netns " + names_[0] + "; ";
      script += "ip -n " + names_[0] + " link set " + b + " master br0; ip -n " + names_[0] + " link set " + b + " up; ";
      script += "ip -n " + names_[i] + " addr add 10.231.0." + std::to_string(10 + i) + "/24 dev " + a + "; ";
      script += "ip -n " + names_[i] + " link set " + a + " up; ";
    }
    auto r = sh("sh -c '" + script + "'");
    if (r.rc != 0) {
      why_not_ = "cannot set up network namespaces: " + r.out;
      cleanup();
    }
  }
  ~Hosts() { cleanup(); }
  bool separate() const { return !names_.empty(); }
  const std::string& why_not() const { return why_not_; }
  // argv prefix that runs a command on host `i` (0: controller, 1-2: nodes).
  std::vector<std::string> on(int i) const {
    if (!separate()) return {};
    return {ip_, "netns", "exec", names_[i]};
  }
  std::string shell_on(int i) const { return separate() ? "ip netns exec " + names_[i] + " " : ""; }
  std::string controller_ip() const { return separate() ? "10.231.0.1" : "127.0.0.1"; }

 private:
  void cleanup() {
    for (const auto& ns : names_) sh("ip netns del " + ns);
    names_.clear();
  }
  std::vector<std::string> names_;
  std::string ip_;
  std::string why_not_;
};

// Daemons this test started, stopped in reverse order at scope exit (also after a failed REQUIRE).
struct Daemons {
  std::vector<pid_t> pids;
  ~Daemons() {
    for (auto it = pids.rbegin(); it != pids.rend(); ++it) hq::cmd::stop_process(*it, 5000);
  }
};

// Agents first with only the secret, then the controller; a client on node 1 runs a job on node 2.
void agents_first_secret_only(const Hosts& hosts) {
  TempDir dir;
  for (const char* v : {"HQ_CONTROLLER", "HQ_CLIENT_SOCKET", "HQ_CA_FILE", "HQ_AUTH_SOCKET", "HQ_SECRET_FILE", "HQ_CONFIG"}) unsetenv(v);
  setenv("HQ_HOME", (dir.path() + "/home").c_str(), 1);
  int port = hosts.separate() ? 6817 : free_port();
  std::string addr = hosts.controller_ip() + ":" + std::to_string(port);
  REQUIRE(sh(std::string(HQ_BINARY) + " keygen " + dir.path() + "/keys mh").rc == 0);
  std::ofstream(dir.path() + "/config.toml")
      << "[cluster]\nname = \"mh\"\nkeys_dir = \"" << dir.path() << "/keys\"\nallow_root_jobs = true\n"
      << "[controller]\nhost = \"" << hosts.controller_ip() << "\"\nport = " << port << "\nstate_dir = \"" << dir.path()
      << "/state\"\nheartbeat_interval = \"1s\"\n"
      << "[[partition]]\nname = \"batch\"\nnodes = \"ALL\"\ndefault = true\n";
  Daemons daemons;
  auto spawn = [&](int host, std::vector<std::string> argv, const std::string& log) {
    std::vector<std::string> full = hosts.on(host);
    full.insert(full.end(), argv.begin(), argv.end());
    auto pid = hq::cmd::spawn_daemon(full, dir.path() + "/" + log);
    if (pid) daemons.pids.push_back(*pid);
  };
  // The agents first: they have nothing but the secret and the controller's address.
  for (int i = 1; i <= 2; ++i) {
    std::string name = "n" + std::to_string(i);
    spawn(i, {HQ_BINARY, "node", "--controller", addr, "--secret", dir.path() + "/keys/secret", "--name", name,
              "--state-dir", dir.path() + "/" + name, "--run-dir", dir.path() + "/" + name + "/run",
              "--kill-jobs-on-exit"},
          name + ".log");
  }
  // The controller only once each agent has tried its address and failed (it logs its first tries).
  for (const char* log : {"/n1.log", "/n2.log"})
    CHECK(wait_until([&] { return slurp(dir.path() + log).find("; retrying") != std::string::npos; }, 10));
  spawn(0, {HQ_BINARY, "controller", "--config", dir.path() + "/config.toml"}, "controller.log");
  // A client on node 1 knows nothing but what node 1's agent published.
  std::string on_n1 = hosts.shell_on(1) + "env HQ_RUN_DIR=" + dir.path() + "/n1/run " + HQ_BINARY + " ";
  CHECK(wait_until([&] { return count(sh(on_n1 + "nodes --json").out, "\"responding\": true") == 2; }, 30));
  std::string ctl_log = slurp(dir.path() + "/controller.log");
  if (hosts.separate()) {
    CHECK(ctl_log.find("registered from 10.231.0.11") != std::string::npos);
    CHECK(ctl_log.find("registered from 10.231.0.12") != std::string::npos);
  }
  CHECK(slurp(dir.path() + "/n2.log").find("fetched the cluster CA") != std::string::npos);
  auto submitted = sh("cd " + dir.path() + " && " + on_n1 + "submit --parsable -w n2 -o " + dir.path() +
                      "/mh-%j.out --wrap 'echo $SLURMD_NODENAME'");
  REQUIRE(submitted.rc == 0);
  std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  CHECK(wait_until([&] { return slurp(dir.path() + "/mh-" + id + ".out") == "n2\n"; }, 20));
  CHECK(wait_until([&] { return sh(on_n1 + "queue -t all -h -j " + id).out.find(" CD ") != std::string::npos; }, 10));
}

}  // namespace

TEST_CASE("e2e: controller and agents on separate hosts (network namespaces), agents first, secret only") {
  Hosts hosts(/*separate=*/true);
  if (!hosts.separate()) HQ_SKIP("needs network namespaces: " + hosts.why_not());
  agents_first_secret_only(hosts);
}

TEST_CASE("e2e: controller and agents on loopback, agents first, secret only") {
  agents_first_secret_only(Hosts(/*separate=*/false));
}
