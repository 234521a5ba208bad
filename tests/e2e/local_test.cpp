// End-to-end: `hq local` restarts. A controller or an agent killed with -9 is revived by
// `hq local start` on the same port and command line; nodes return, jobs survive.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cluster_fixture.hpp"
#include "core/units.hpp"

namespace hq::test {
namespace {

// `hq` against a private HQ_HOME, with nothing of other tests' clusters in the environment.
class LocalHome {
 public:
  LocalHome() : env_("env -u HQ_CONTROLLER -u HQ_CLIENT_SOCKET -u HQ_CONFIG -u HQ_CA_FILE -u HQ_AUTH_SOCKET -u HQ_SECRET_FILE HQ_HOME=" +
                     dir_.path() + "/home ") {}
  // Revives what a failed test left dead, so that its agents' jobs are adopted and end with
  // the cluster (agents run with --kill-jobs-on-exit).
  ~LocalHome() {
    if (std::filesystem::exists(local() + "/daemons")) hq("local start --no-wait");
    if (!cleanup_jobs_.empty()) hq("cancel " + cleanup_jobs_);
    hq("local stop");
  }
  CmdResult hq(const std::string& args) const { return sh("cd " + dir_.path() + " && " + env_ + HQ_BINARY + " " + args); }
  std::string local() const { return dir_.path() + "/home/local"; }
  void cancel_at_exit(const std::string& id) { cleanup_jobs_ += (cleanup_jobs_.empty() ? "" : " ") + id; }

  // The pid `hq local status` lists for a daemon ("controller", "local1", ...); 0 if none.
  pid_t pid_of(const std::string& name) const {
    std::smatch m;
    std::string out = hq("local status").out;
    if (!std::regex_search(out, m, std::regex("\\b" + name + " +pid (\\d+) +(alive|dead)"))) return 0;
    return static_cast<pid_t>(std::stol(m[1]));
  }
  int responding() const {
    auto r = hq("nodes --json");
    int n = 0;
    for (size_t pos = 0; r.rc == 0 && (pos = r.out.find("\"responding\": true", pos)) != std::string::npos; ++pos) ++n;
    return n;
  }
  std::string state(const std::string& id) const {
    std::smatch m;
    std::string out = hq("queue -t all --json -j " + id).out;
    return std::regex_search(out, m, std::regex("\"state\": \"([A-Z_]+)\"")) ? m[1].str() : "";
  }

 private:
  TempDir dir_;
  std::string env_, cleanup_jobs_;
};

// kill -9 of a daemon that is not our child: gone once /proc says so.
bool kill9(pid_t pid) {
  return pid > 0 && kill(pid, SIGKILL) == 0 && wait_until([&] { return !cmd::process_alive(pid); }, 10);
}

}  // namespace

TEST_CASE("hq local start revives a killed controller on its port, and a killed agent with its jobs") {
  LocalHome home;
  auto started = home.hq("local start --nodes 2");
  REQUIRE_MESSAGE(started.rc == 0, started.out);
  std::string addr(trim(slurp(home.local() + "/state/controller.addr")));
  REQUIRE(addr.rfind("127.0.0.1:", 0) == 0);
  CHECK(slurp(home.local() + "/config.toml").find("port = " + addr.substr(10) + "\n") != std::string::npos);

  auto held = home.hq("submit --parsable --hold --wrap true");
  auto running = home.hq("submit --parsable --wrap 'sleep 120'");
  REQUIRE(held.rc == 0);
  REQUIRE(running.rc == 0);
  std::string held_id(trim(held.out)), running_id(trim(running.out));
  home.cancel_at_exit(held_id + " " + running_id);
  REQUIRE(wait_until([&] { return home.state(running_id) == "RUNNING"; }, 20));

  SUBCASE("the controller") {
    pid_t old = home.pid_of("controller");
    REQUIRE(kill9(old));
    CHECK(home.hq("local status").rc == 1);  // one daemon dead
    auto again = home.hq("local start");
    REQUIRE_MESSAGE(again.rc == 0, again.out);
    CHECK(again.out.find("started controller") != std::string::npos);
    CHECK(again.out.find("started local") == std::string::npos);  // the agents kept running
    CHECK(home.pid_of("controller") != old);
    CHECK(std::string(trim(slurp(home.local() + "/state/controller.addr"))) == addr);
    int fd = raw_connect(std::stoi(addr.substr(10)));
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
  }
  SUBCASE("an agent") {
    pid_t old = home.pid_of("local1"), other = home.pid_of("local2");
    REQUIRE(kill9(old));
    auto again = home.hq("local start");
    REQUIRE_MESSAGE(again.rc == 0, again.out);
    CHECK(again.out.find("started local1") != std::string::npos);
    CHECK(again.out.find("started controller") == std::string::npos);
    CHECK(home.pid_of("local1") != old);
    CHECK(home.pid_of("local2") == other);
  }
  CHECK(wait_until([&] { return home.responding() == 2; }, 10));
  CHECK(home.hq("local status").rc == 0);
  CHECK(home.state(held_id) == "PENDING");
  CHECK(home.state(running_id) == "RUNNING");  // adopted by a new agent, or re-learned by a new controller
}

TEST_CASE("hq local keeps its port and shape across stop and start") {
  LocalHome home;
  REQUIRE(home.hq("local start --nodes 1 --no-wait").rc == 0);
  std::string config = slurp(home.local() + "/config.toml");
  std::string addr(trim(slurp(home.local() + "/state/controller.addr")));
  CHECK(home.hq("local start --nodes 3").rc == 1);  // running with another shape
  REQUIRE(home.hq("local stop").rc == 0);
  auto again = home.hq("local start");
  REQUIRE_MESSAGE(again.rc == 0, again.out);
  CHECK(slurp(home.local() + "/config.toml") == config);  // same port, same single node
  CHECK(std::string(trim(slurp(home.local() + "/state/controller.addr"))) == addr);
  CHECK(home.hq("local restart local1").rc == 0);
  CHECK(home.hq("local restart nosuch").rc == 2);
}

TEST_CASE("hq local: --controller naming the local cluster's own address reaches it, with its CA and token service") {
  LocalHome home;
  REQUIRE(home.hq("local start --nodes 1").rc == 0);
  std::string addr(trim(slurp(home.local() + "/state/controller.addr")));
  CHECK(home.hq("queue --controller " + addr).rc == 0);
  CHECK(home.hq("--controller " + addr + " nodes").rc == 0);
  // --ca names the CA (here a wrong one: refused, naming it).
  auto wrong_ca = home.hq("queue --controller 127.0.0.1:1 --ca /nonexistent/ca.pem");
  CHECK(wrong_ca.rc == 1);
  CHECK(wrong_ca.out.find("/nonexistent/ca.pem") != std::string::npos);
  // sbatch, srun and salloc take --ca in their option tables (hq submit|run|alloc too).
  for (const char* cmd : {"submit --wrap true", "run true", "alloc true"}) {
    std::string line = std::string(cmd).insert(std::string(cmd).find(' '), " --controller 127.0.0.1:1 --ca /nonexistent/ca.pem");
    auto r = home.hq(line);
    INFO(line);
    INFO(r.out);
    CHECK(r.rc != 0);
    CHECK(r.out.find("/nonexistent/ca.pem") != std::string::npos);
  }
}


TEST_CASE("hq local start --block-size labels its agents in blocks and writes the matching [topology]") {
  LocalHome home;
  auto started = home.hq("local start --nodes 4 --cpus 1 --block-size 2");
  REQUIRE_MESSAGE(started.rc == 0, started.out);
  CHECK(home.hq("show topology").out ==
        "BlockName=b1 BlockIndex=0 Nodes=local[1-2] BlockSize=2\n"
        "BlockName=b2 BlockIndex=1 Nodes=local[3-4] BlockSize=2\n");
  CHECK(home.hq("show node local3").out.find("Block=b2") != std::string::npos);
  std::ifstream config(home.local() + "/config.toml");
  std::string text((std::istreambuf_iterator<char>(config)), std::istreambuf_iterator<char>());
  CHECK(text.find("[topology]\nblock_sizes = [2]\n") != std::string::npos);
}

}  // namespace hq::test
