// End to end: configless join. A node agent that has only the cluster secret (no CA file,
// no config) fetches the CA from the controller, checks it with the secret, caches it,
// and joins as a dynamic node; a restart uses the cached CA.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <atomic>
#include <csignal>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>

#include "cluster_fixture.hpp"

using namespace hq::test;

TEST_CASE("e2e: an agent with only the secret fetches the CA, checks it, caches it and joins") {
  LocalCluster c(1, 2, 20, "[[partition]]\nname = \"all\"\nnodes = \"ALL\"\n");
  REQUIRE(c.ready());
  std::string ca_file = getenv("HQ_CA_FILE");
  unsetenv("HQ_CA_FILE");
  pid_t agent = c.spawn_extra_agent("bare1");
  setenv("HQ_CA_FILE", ca_file.c_str(), 1);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 2; }, 20));
  std::string log = slurp(c.dir() + "/bare1.log");
  CHECK(log.find("fetched the cluster CA") != std::string::npos);
  CHECK(slurp(c.dir() + "/bare1/ca.pem") == slurp(ca_file));
  std::string job = c.submit("-p all -w bare1 -o bare-%j.out --wrap 'echo $SLURMD_NODENAME'");
  REQUIRE(c.wait_state(job, "COMPLETED", 15));
  CHECK(slurp(c.dir() + "/bare-" + job + ".out") == "bare1\n");

  // Restarted, it uses the cached CA: no second fetch.
  kill(agent, SIGTERM);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 1; }, 20));
  unsetenv("HQ_CA_FILE");
  c.spawn_extra_agent("bare1");
  setenv("HQ_CA_FILE", ca_file.c_str(), 1);
  REQUIRE(wait_until([&] { return c.responding_nodes() == 2; }, 20));
  std::string again = slurp(c.dir() + "/bare1.log");  // both runs log here
  CHECK(again.find("fetched the cluster CA") == again.rfind("fetched the cluster CA"));
}

TEST_CASE("e2e: a client on a node finds the controller, CA and token service through its agent") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string run = c.dir() + "/e1/run";
  REQUIRE(wait_until([&] { return !slurp(run + "/controller").empty(); }, 10));
  CHECK(slurp(run + "/ca.pem") == slurp(c.dir() + "/keys/ca.pem"));
  // Nothing but HQ_RUN_DIR (what /run/hq is on a real node) and an empty home.
  std::string env = "env -u HQ_CONTROLLER -u HQ_CLIENT_SOCKET -u HQ_CA_FILE -u HQ_AUTH_SOCKET -u HQ_SECRET_FILE HQ_HOME=" + c.dir() +
                    "/nohome HQ_CONFIG=/nonexistent HQ_RUN_DIR=" + run + " ";
  auto submitted = sh("cd " + c.dir() + " && " + env + HQ_BINARY + " submit --parsable -o nodeclient.out --wrap 'echo from node'");
  REQUIRE(submitted.rc == 0);
  std::string id = submitted.out.substr(0, submitted.out.find_first_of("\n;"));
  CHECK(c.wait_state(id, "COMPLETED", 15));
  CHECK(slurp(c.dir() + "/nodeclient.out") == "from node\n");
  auto without = sh("cd " + c.dir() + " && " + "env -u HQ_CONTROLLER -u HQ_CLIENT_SOCKET -u HQ_CA_FILE -u HQ_AUTH_SOCKET HQ_HOME=" + c.dir() +
                    "/nohome HQ_CONFIG=/nonexistent HQ_RUN_DIR=" + c.dir() + "/nothing " + HQ_BINARY + " queue");
  CHECK(without.rc != 0);
  CHECK(without.out.find("no controller found") != std::string::npos);
}

TEST_CASE("e2e: a client with --wait-for-controller waits for a controller that is not up yet") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  c.kill9_controller();
  CHECK(c.hq("queue").rc != 0);  // without the flag: an error at once
  std::string out = c.dir() + "/waited.txt";
  auto started = std::chrono::steady_clock::now();
  sh("(cd " + c.dir() + " && " + HQ_BINARY + " submit --wait-for-controller --parsable --wrap true > " + out +
     " 2> " + out + ".err; echo $? >> " + out + ".rc) > /dev/null 2>&1 &");
  // It says it waits (after its first try failed), and has not ended.
  CHECK(wait_until([&] { return slurp(out + ".err").find("waiting for the controller") != std::string::npos; }, 10));
  CHECK(slurp(out + ".rc").empty());
  c.start_controller();
  REQUIRE(wait_until([&] { return !slurp(out + ".rc").empty(); }, 20));
  CHECK(slurp(out + ".rc") == "0\n");
  std::string id = slurp(out);
  id = id.substr(0, id.find('\n'));
  CHECK(c.wait_state(id, "COMPLETED", 15));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
}

TEST_CASE("e2e: agents that tried 20 times to reach a controller all register within 2 s of its start") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::vector<size_t> log_before;
  for (int i = 1; i <= 3; ++i) log_before.push_back(slurp(c.dir() + "/e" + std::to_string(i) + ".log").size());
  c.kill9_controller();
  // An agent logs its first 3 failed tries and every 20th: a 4th line is its 20th, by when
  // its backoff (0.2 s doubling) has been at its 2 s cap for 15 tries.
  for (int i = 1; i <= 3; ++i) {
    std::string log = c.dir() + "/e" + std::to_string(i) + ".log";
    REQUIRE(wait_until([&] { return count(slurp(log).substr(log_before[i - 1]), "; retrying") >= 4; }, 45));
  }
  auto started = std::chrono::steady_clock::now();
  c.start_controller();
  REQUIRE(wait_until([&] { return c.responding_nodes() == 3; }, 10));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO("all three registered " << took << " s after the controller was started");
  CHECK(took < 2.5);  // 2 s of backoff cap plus the controller's own start-up
}

namespace {

// A DNS server on 127.0.0.1 that answers every query with one SRV record: `target:port`.
class FakeDns {
 public:
  FakeDns(const std::string& target, uint16_t port) {
    fd_ = bind_loopback(SOCK_DGRAM, port_);
    timeval tv{0, 200000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string rdata{static_cast<char>(0), static_cast<char>(10), static_cast<char>(0), static_cast<char>(5),
                      static_cast<char>(port >> 8), static_cast<char>(port & 0xff)};
    rdata += static_cast<char>(target.size()) + target + std::string(1, '\0');
    answer_ = std::string("\xc0\x0c\x00\x21\x00\x01\x00\x00\x00\x3c", 10) +
              std::string{static_cast<char>(rdata.size() >> 8), static_cast<char>(rdata.size() & 0xff)} + rdata;
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeDns() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  std::string server() const { return "127.0.0.1:" + std::to_string(port_); }
  int queries() const { return queries_; }

 private:
  void serve() {
    while (!stop_) {
      char buf[512];
      sockaddr_in from{};
      socklen_t len = sizeof from;
      ssize_t n = recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 12) continue;
      std::string reply(buf, static_cast<size_t>(n));
      reply[2] = static_cast<char>(0x81);
      reply[3] = static_cast<char>(0x80);
      reply[7] = 1;  // one answer
      reply += answer_;
      sendto(fd_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), len);
      ++queries_;
    }
  }
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<int> queries_{0};
  std::atomic<bool> stop_{false};
  std::string answer_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("e2e: agents and clients find the controller through a DNS SRV record _hq._tcp.<domain>") {
  LocalCluster c(1, 2, 20, "[[partition]]\nname = \"all\"\nnodes = \"ALL\"\n");
  REQUIRE(c.ready());
  std::string addr = getenv("HQ_CONTROLLER");
  uint16_t port = static_cast<uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1)));
  FakeDns dns("localhost", port);
  setenv("HQ_DNS_SERVER", dns.server().c_str(), 1);
  setenv("HQ_SRV_DOMAIN", "cluster.test", 1);
  unsetenv("HQ_CONTROLLER");
  c.spawn_extra_agent("srv1");  // no --controller: found through DNS
  bool joined = wait_until([&] { return c.responding_nodes() == 2; }, 20);
  std::string home = c.dir() + "/nohome";  // no local cluster to find there
  auto via_dns = sh("cd " + c.dir() + " && env -u HQ_CLIENT_SOCKET HQ_HOME=" + home + " HQ_CONFIG=/nonexistent HQ_RUN_DIR=/nonexistent " +
                    HQ_BINARY + " nodes");
  setenv("HQ_CONTROLLER", addr.c_str(), 1);
  unsetenv("HQ_DNS_SERVER");
  unsetenv("HQ_SRV_DOMAIN");
  CHECK(joined);
  CHECK(via_dns.rc == 0);
  CHECK(via_dns.out.find("srv1") != std::string::npos);
  CHECK(dns.queries() >= 2);
}
