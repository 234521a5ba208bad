// The accounting store as a daemon of its own (`hq accounting`, [accounting] storage =
// "remote"): the controller starts before it and ships once it is up; a store killed with
// SIGKILL and started again gets every record that waited, each once; sacctmgr's changes
// are stored there; users cannot talk to it, nor, once the store has a secret of its own,
// anyone who holds only the cluster secret.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "../pg_server.hpp"
#include "../skip.hpp"
#include "cluster_fixture.hpp"
#include "cmd/accounting/remote_store.hpp"

using namespace hq::test;

namespace {

class StoreDaemon {
 public:
  // `path`: the store's SQLite file or PostgreSQL URI ("": the config's).
  explicit StoreDaemon(const LocalCluster& c, std::string path = "") : c_(c), path_(std::move(path)) {}
  ~StoreDaemon() { stop(); }
  void start() {
    std::vector<std::string> argv{HQ_BINARY, "accounting", "-c", c_.dir() + "/config.toml"};
    if (!path_.empty()) argv.insert(argv.end(), {"--path", path_});
    auto pid = hq::cmd::spawn_daemon(argv, c_.dir() + "/accounting.log");
    pid_ = pid ? *pid : -1;
  }
  void kill9() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  void stop() {
    if (pid_ > 0) hq::cmd::stop_process(pid_, 5000);
    pid_ = -1;
  }

 private:
  const LocalCluster& c_;
  std::string path_;
  pid_t pid_ = -1;
};

std::string remote_store(int port) {
  return "[accounting]\nstorage = \"remote\"\nhost = \"127.0.0.1\"\nport = " + std::to_string(port) + "\n";
}

// sacct's JobIDRaw of every run of every job, one per line (-D: each run), sorted.
std::vector<std::string> stored_runs(const LocalCluster& c, const std::string& ids) {
  auto r = c.hq("acct -X -D -n -P -o JobIDRaw,State -j " + ids);
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return r.rc == 0 ? lines : std::vector<std::string>{"rc " + std::to_string(r.rc) + ": " + r.out};
}

}  // namespace

// The controller first, then its store; the store killed and started again; `db`: the store's
// file or database ("": the config's SQLite file).
void store_comes_and_goes(const std::string& db) {
  int store_port = free_port();
  LocalCluster c(1, 2, 20, remote_store(store_port));
  REQUIRE(c.ready());  // the controller runs, and its nodes, with no store yet
  StoreDaemon store(c, db);

  std::string first = c.submit("--wrap true");
  REQUIRE(c.wait_state(first, "COMPLETED", 30));
  auto down = c.hq("acct -X -n -j " + first);
  CHECK(down.rc == 1);
  CHECK(down.out.find("cannot reach the accounting store at 127.0.0.1:" + std::to_string(store_port)) != std::string::npos);

  store.start();  // after the controller: the record that waited arrives
  std::vector<std::string> want = {first + "|COMPLETED"};
  CHECK(wait_until([&] { return stored_runs(c, first) == want; }, 20));

  // The model reaches the store too (the controller registered its cluster there).
  CHECK(wait_until([&] { return c.hq("acctmgr -i add account physics").rc == 0; }, 20));

  store.kill9();
  std::string ids = first;
  for (int i = 0; i < 4; ++i) {
    std::string id = c.submit("--wrap true");
    REQUIRE(c.wait_state(id, "COMPLETED", 30));
    ids += "," + id;
    want.push_back(id + "|COMPLETED");
  }
  std::sort(want.begin(), want.end());
  store.start();
  CHECK(wait_until([&] { return stored_runs(c, ids) == want; }, 20));  // none lost
  // A change made before the kill was stored by the daemon, not only held by the controller
  // (its own copy, kept for starts without a store, goes first).
  c.kill9_controller();
  std::filesystem::remove(c.dir() + "/state/acct_model.cache");
  c.start_controller();
  CHECK(wait_until([&] { return c.hq("acctmgr -n -P list account format=account").out.find("physics") != std::string::npos; }, 20));
  CHECK(stored_runs(c, ids) == want);
}

TEST_CASE("e2e: hq accounting as its own daemon: any start order, killed and restarted, every record once") {
  store_comes_and_goes("");
}

TEST_CASE("e2e: hq accounting on PostgreSQL: any start order, killed and restarted, every record once") {
  auto& server = hq::test::PgServer::instance();
  if (!server.why_not().empty()) HQ_SKIP(server.why_not());
  hq::test::TempDir name;  // a database of this test's own
  store_comes_and_goes(server.uri("e" + std::filesystem::path(name.path()).filename().string()));
}

TEST_CASE("e2e: hq accounting answers controllers only: a user's token is refused") {
  int store_port = free_port();
  LocalCluster c(1, 2, 20, remote_store(store_port));
  REQUIRE(c.ready());
  StoreDaemon store(c);
  store.start();
  REQUIRE(wait_for_text(c.dir() + "/accounting.log", "listening on"));
  auto r = sh("HQ_CLIENT_SOCKET=none HQ_CONTROLLER=127.0.0.1:" + std::to_string(store_port) + " " + HQ_BINARY + " queue");
  CHECK(r.rc != 0);
  CHECK(r.out.find("the accounting store answers controllers only") != std::string::npos);
  CHECK(slurp(c.dir() + "/accounting.log").find("refused client") != std::string::npos);
}

TEST_CASE("e2e: a controller started while its store is down enforces the accounts it last knew") {
  int store_port = free_port();
  LocalCluster c(1, 2, 20, remote_store(store_port) + "enforce = \"associations\"\n");
  REQUIRE(c.ready());
  StoreDaemon store(c);
  store.start();
  REQUIRE(wait_until([&] { return c.hq("acctmgr -i add account physics").rc == 0; }, 20));
  REQUIRE(c.hq("acctmgr -i add user root account=physics").rc == 0);
  store.kill9();
  c.kill9_controller();
  c.start_controller();  // nothing to load the model from but what it kept
  // (bounded: a controller without the model answers "try again", which the client retries)
  auto submit = [&](const std::string& args) { return sh("cd " + c.dir() + " && timeout 10 " + HQ_BINARY + " submit " + args); };
  CHECK(wait_until([&] { return submit("--parsable -A physics --wrap true").rc == 0; }, 20));
  auto unknown = submit("-A chemistry --wrap true");
  CHECK(unknown.rc != 0);
  CHECK(unknown.out.find("Invalid account") != std::string::npos);
  CHECK(slurp(c.dir() + "/controller.log").find("enforcing the accounts, users and QOS last known") != std::string::npos);
}

TEST_CASE("e2e: hq accounting with a secret of its own: the controller uses it, the cluster secret alone is refused") {
  int store_port = free_port();
  LocalCluster c(1, 2, 20, remote_store(store_port));
  REQUIRE(c.ready());
  std::string keys = c.dir() + "/keys";
  auto made = sh(std::string(HQ_BINARY) + " keygen " + keys + " --store-secret");
  INFO(made.out);
  REQUIRE(made.rc == 0);
  CHECK(sh(std::string(HQ_BINARY) + " keygen " + keys + " --store-secret").rc == 1);  // never overwritten
  StoreDaemon store(c);
  store.start();
  REQUIRE(wait_for_text(c.dir() + "/accounting.log", "listening on"));
  CHECK(slurp(c.dir() + "/accounting.log").find("accounting.secret (the store's own secret)") != std::string::npos);

  std::string id = c.submit("--wrap true");  // the controller mints from accounting.secret too
  REQUIRE(c.wait_state(id, "COMPLETED", 30));
  std::vector<std::string> want = {id + "|COMPLETED"};
  CHECK(wait_until([&] { return stored_runs(c, id) == want; }, 20));
  // A node's span out of service goes to the daemon too, and comes back for sacctmgr.
  REQUIRE(c.hq("control drain e1 --reason 'disk check'").rc == 0);
  CHECK(c.hq("acctmgr -n -P list events format=NodeName,State,Reason").out == "e1|DRAIN|disk check\n");

  // Someone with the cluster secret alone (a node's root) cannot act as the controller.
  hq::test::TempDir node_keys;
  std::filesystem::copy_file(keys + "/secret", node_keys.path() + "/secret");
  hq::cmd::RemoteAcctStore forged({{"127.0.0.1", static_cast<uint16_t>(store_port)}, keys + "/ca.pem", node_keys.path(), 10});
  auto count = forged.count();
  CHECK_FALSE(count.is_ok());
  hq::cmd::RemoteAcctStore real({{"127.0.0.1", static_cast<uint16_t>(store_port)}, keys + "/ca.pem", keys, 10});
  auto stored = real.count();
  REQUIRE_MESSAGE(stored.is_ok(), stored.status().message());
  CHECK(*stored >= 1);
}
