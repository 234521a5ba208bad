// End-to-end: the real hq binary as controller + agents on 127.0.0.1.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

#include "cluster_fixture.hpp"
#include "net/client.hpp"
#include "net/clock.hpp"
#include "net/token.hpp"

using namespace hq::test;

TEST_CASE("e2e: batch jobs run with Slurm's environment, patterns and directives") {
  LocalCluster c(3);
  REQUIRE(c.ready());
  std::ofstream(c.dir() + "/job.sh") << "#!/bin/bash\n"
                                        "#SBATCH --job-name=envcheck\n"
                                        "#SBATCH -o out-%j-%x.txt\n"
                                        "#SBATCH -N 2 --ntasks-per-node=1\n"
                                        "echo \"id=$SLURM_JOB_ID hq=$HQ_JOB_ID name=$SLURM_JOB_NAME\"\n"
                                        "echo \"nodes=$SLURM_JOB_NODELIST n=$SLURM_JOB_NUM_NODES ntasks=$SLURM_NTASKS\"\n"
                                        "echo \"part=$SLURM_JOB_PARTITION cwd=$(pwd) args=$*\"\n"
                                        "echo \"mine=$MY_VAR\"\n"
                                        "echo to-stderr >&2\n";
  std::string id = c.submit("--export=MY_VAR=hello job.sh x y");
  REQUIRE(id.find("ERROR") == std::string::npos);
  REQUIRE(c.wait_state(id, "COMPLETED", 15));
  std::string out = slurp(c.dir() + "/out-" + id + "-envcheck.txt");
  CHECK(out.find("id=" + id + " hq=" + id + " name=envcheck") != std::string::npos);
  CHECK(out.find("nodes=e[1-2] n=2 ntasks=2") != std::string::npos);
  CHECK(out.find("part=debug cwd=" + c.dir() + " args=x y") != std::string::npos);
  CHECK(out.find("mine=hello") != std::string::npos);
  CHECK(out.find("to-stderr") != std::string::npos);
}

TEST_CASE("e2e: exit codes, --wait, stdin scripts and the sbatch/squeue names") {
  LocalCluster c(2);
  REQUIRE(c.ready());
  std::string failed = c.submit("--wrap 'exit 3'");
  REQUIRE(c.wait_state(failed, "FAILED", 15));
  CHECK(c.hq("show job " + failed).out.find("ExitCode=3:0") != std::string::npos);
  // A running job's EndTime is when its limit ends it, as squeue's %e says (not Unknown).
  std::string running = c.submit("-t 5 --wrap 'sleep 60'");
  REQUIRE(c.wait_state(running, "RUNNING", 15));
  std::string end = c.hq("queue -h -j " + running + " -o %e").out;
  REQUIRE(end.size() > 1);
  end.pop_back();
  CHECK(end != "N/A");
  CHECK(c.hq("show job " + running).out.find("EndTime=" + end + " ") != std::string::npos);
  c.hq("cancel " + running);

  auto waited = c.hq("submit --wait --wrap 'exit 4'");
  CHECK(waited.rc == 4);

  auto piped = sh("cd " + c.dir() + " && printf '#!/bin/sh\\necho piped\\n' | " HQ_BINARY " submit");
  CHECK(piped.out.find("Submitted batch job ") == 0);

  CHECK(c.hq("install-links " + c.dir() + "/bin").rc == 0);
  auto sb = sh("cd " + c.dir() + " && bin/sbatch --parsable --wrap true");
  CHECK(sb.rc == 0);
  CHECK(sb.out.find_first_not_of("0123456789\n") == std::string::npos);
  auto sq = sh(c.dir() + "/bin/squeue");
  CHECK(sq.out.find("JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)") != std::string::npos);

  auto bad = c.hq("submit --wrap true -p nosuch");
  CHECK(bad.rc == 1);
  CHECK(bad.out.find("Invalid partition name specified: nosuch") != std::string::npos);
  auto toobig = c.hq("submit --wrap true -N 5");
  CHECK(toobig.rc == 1);
  CHECK(toobig.out.find("Node count specification invalid") != std::string::npos);
}

TEST_CASE("e2e: cancel and time limit kill the whole process group") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string cancelled = c.submit("--wrap 'sleep 300 & echo $! > child.pid; wait'");
  REQUIRE(c.wait_state(cancelled, "RUNNING", 10));
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/child.pid").empty(); }, 10));
  pid_t child = std::stoi(slurp(c.dir() + "/child.pid"));
  CHECK(kill(child, 0) == 0);
  CHECK(c.hq("cancel " + cancelled).rc == 0);
  CHECK(c.wait_state(cancelled, "CANCELLED", 10));
  CHECK(wait_until([&] { return kill(child, 0) != 0; }, 5));

  std::string limited = c.submit("--time=2s --wrap 'trap \"\" TERM; sleep 120'");  // ignores SIGTERM
  REQUIRE(c.wait_state(limited, "RUNNING", 10));
  CHECK(c.wait_state(limited, "TIMEOUT", 15));  // 2 s limit + 1 s kill_wait, then SIGKILL
  CHECK(c.reason(limited) == "TimeLimit");     // scontrol show job: JobState=TIMEOUT Reason=TimeLimit

  CHECK(c.hq("cancel 999999").rc == 1);
  std::string held = c.submit("--hold --wrap true");
  CHECK(c.hq("queue").out.find("(JobHeldUser)") != std::string::npos);
  CHECK(c.hq("cancel " + held).rc == 0);
  CHECK(c.wait_state(held, "CANCELLED", 5));
}

TEST_CASE("e2e: a queue larger than one frame comes in pages - listings carry no scripts") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string script = "#!/bin/sh\ntrue\n";
  while (script.size() < (1200u << 10)) script += "# padding padding padding padding padding padding padding\n";
  { std::ofstream(c.dir() + "/big.sh") << script; }
  std::vector<std::string> ids;
  for (int i = 0; i < 16; ++i) ids.push_back(c.submit("--hold big.sh"));  // 19 MB of scripts: over one 16 MiB frame
  REQUIRE(ids.back().size() > 0);
  auto json = c.hq("queue --json");
  REQUIRE(json.rc == 0);
  for (const auto& id : ids) CHECK(json.out.find("\"job_id\": \"" + id + "\"") != std::string::npos);
  CHECK(json.out.size() > (16u << 20));  // the whole records, scripts included, in several replies
  CHECK(json.out.find("\"more\": true") == std::string::npos);  // the pages are one listing now
  auto table = c.hq("queue -h");
  REQUIRE(table.rc == 0);
  CHECK(std::count(table.out.begin(), table.out.end(), '\n') == 16);
}

TEST_CASE("e2e: kill -9 of the controller loses no acknowledged job and double-counts none") {
  LocalCluster c(2);
  REQUIRE(c.ready());
  std::string longjob = c.submit("--wrap '" + until_file("go") + "; echo done >> long.out'");
  REQUIRE(c.wait_state(longjob, "RUNNING", 10));
  std::vector<std::string> ids;
  for (int i = 0; i < 30; ++i) ids.push_back(c.submit("--wrap 'echo " + std::to_string(i) + " > q" + std::to_string(i) + ".out'"));
  for (const auto& id : ids) REQUIRE(id.find("ERROR") == std::string::npos);
  c.kill9_controller();
  c.start_controller();
  c.release("go");  // the long job ran through the restart
  // Every acknowledged job is known again and finishes; the long job ran once.
  for (const auto& id : ids) CHECK_MESSAGE(c.wait_state(id, "COMPLETED", 30), "job " << id);
  CHECK(c.wait_state(longjob, "COMPLETED", 30));
  CHECK(slurp(c.dir() + "/long.out") == "done\n");
  for (int i = 0; i < 30; ++i) CHECK(slurp(c.dir() + "/q" + std::to_string(i) + ".out") == std::to_string(i) + "\n");
  std::string next = c.submit("--wrap true");
  CHECK(std::stoull(next) > std::stoull(ids.back()));  // ids keep increasing across restarts
}

TEST_CASE("e2e: garbage and oversized frames close only that connection") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  int port = std::stoi(std::string(getenv("HQ_CONTROLLER")).substr(10));
  for (const std::string payload : {std::string("GET / HTTP/1.0\r\n\r\n"), std::string("\xff\xff\xff\xff", 4),
                                    std::string("\x00\x00\x00\x05hello", 9)}) {
    int fd = raw_connect(port);  // 10 s receive timeout: the test never hangs
    REQUIRE(fd >= 0);
    CHECK(write(fd, payload.data(), payload.size()) == static_cast<ssize_t>(payload.size()));
    char buf[64];
    double t0 = hq::net::mono_seconds();
    while (read(fd, buf, sizeof buf) > 0) {
    }  // the controller answers (a TLS alert) or closes; it must not crash or wait forever
    CHECK(hq::net::mono_seconds() - t0 < 10);
    close(fd);
  }
  CHECK(kill(c.controller_pid(), 0) == 0);
  std::string id = c.submit("--wrap true");
  CHECK(c.wait_state(id, "COMPLETED", 10));
  CHECK(slurp(c.dir() + "/controller.log").find("handshake") != std::string::npos);
}

TEST_CASE("e2e: jobs run as the submitting user, with that user's groups") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  auto r = sh("cd " + shared + " && setpriv --reuid=65534 --regid=65534 --groups=65534,100 " HQ_BINARY
              " submit --parsable --wrap 'id -u; id -g; id -G; echo $SLURM_JOB_USER'");
  REQUIRE(r.rc == 0);
  std::string id = r.out.substr(0, r.out.find('\n'));
  REQUIRE(c.wait_state(id, "COMPLETED", 15));
  std::string out = slurp(shared + "/slurm-" + id + ".out");
  CHECK(out.find("65534\n65534\n") == 0);
  CHECK(out.find("100") != std::string::npos);
  CHECK(sh("stat -c %u " + shared + "/slurm-" + id + ".out").out == "65534\n");
}

TEST_CASE("e2e: an agent killed with -9 and restarted re-adopts its running job, which completes once") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string id = c.submit("--wrap 'echo $$ >> runs.txt; " + until_file("go") + "; echo done >> runs.txt'");
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  REQUIRE(wait_until([&] { return !slurp(c.spool(1, id) + "/pids").empty(); }, 10));  // the launch record
  c.restart_agent_after_kill9(1);
  INFO("agent log: " << slurp(c.dir() + "/e1.log"));
  REQUIRE(wait_until([&] { return slurp(c.dir() + "/e1.log").find("job " + id + " adopted") != std::string::npos; }, 20));
  c.release("go");
  CHECK(c.wait_state(id, "COMPLETED", 20));
  std::string runs = slurp(c.dir() + "/runs.txt");
  CHECK(std::count(runs.begin(), runs.end(), '\n') == 2);  // one run: its pid, then done
  CHECK(runs.find("done\n") != std::string::npos);
  CHECK(c.hq("show job " + id + " --json").out.find("\"restart_count\": 0") != std::string::npos);
}

TEST_CASE("e2e: a job that ends while no agent runs is reported once by the next agent, with its exit code") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string id = c.submit("--wrap '" + until_file("go") + "; exit 3'");
  std::string spool = c.spool(1, id);
  REQUIRE(wait_until([&] { return !slurp(spool + "/pids").empty(); }, 10));  // the launch record
  c.kill9_agent(1);
  c.release("go");
  // It ends meanwhile: its shim has written the exit status and is gone.
  pid_t shim = std::stoi(line_with(slurp(spool + "/pids"), "shim=").substr(5));
  REQUIRE(wait_until([&] { return !slurp(spool + "/exit").empty() && !hq::cmd::process_alive(shim); }, 10));
  c.respawn_agent(1);
  CHECK(c.wait_state(id, "FAILED", 20));
  CHECK(c.hq("show job " + id).out.find("ExitCode=3:0") != std::string::npos);
  INFO("agent log: " << slurp(c.dir() + "/e1.log"));
  CHECK(slurp(c.dir() + "/e1.log").find("ended while no agent ran") != std::string::npos);
}

TEST_CASE("e2e: an end the controller never acknowledged survives an agent restart: the job ends once, not run again") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string id = c.submit("--wrap 'echo $$ >> runs.txt; " + until_file("go") + "; exit 3'");
  std::string spool = c.spool(1, id);
  REQUIRE(wait_until([&] { return !slurp(spool + "/pids").empty(); }, 10));  // the launch record
  c.kill9_controller();
  c.release("go");
  // The agent reported the end to no one: it keeps it in the job's spool until acknowledged.
  REQUIRE(wait_until([&] { return !slurp(spool + "/ended").empty(); }, 10));
  c.restart_agent_after_kill9(1);
  c.start_controller();
  CHECK(c.wait_state(id, "FAILED", 20));
  CHECK(c.hq("show job " + id).out.find("ExitCode=3:0") != std::string::npos);
  std::string runs = slurp(c.dir() + "/runs.txt");
  CHECK(std::count(runs.begin(), runs.end(), '\n') == 1);
  CHECK(c.hq("show job " + id + " --json").out.find("\"restart_count\": 0") != std::string::npos);
  CHECK(wait_until([&] { return !std::filesystem::exists(spool); }, 10));  // acknowledged: gone
}

TEST_CASE("e2e: a job its agent no longer has is requeued with the same id") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string id = c.submit("--wrap 'echo $$ >> runs.txt; " + until_file("go") + "'");
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/runs.txt").empty(); }, 10));
  pid_t first = std::stoi(slurp(c.dir() + "/runs.txt"));
  c.kill9_agent(1);
  kill(-first, SIGKILL);                       // the run is lost with its record (like a reboot)
  sh("rm -rf " + c.spool(1, id));
  c.respawn_agent(1);                          // the new agent knows nothing of the job
  c.release("go");                             // the second run may end
  CHECK(c.wait_state(id, "COMPLETED", 20));
  std::string runs = slurp(c.dir() + "/runs.txt");
  CHECK(std::count(runs.begin(), runs.end(), '\n') == 2);
  CHECK(c.hq("show job " + id + " --json").out.find("\"restart_count\": 1") != std::string::npos);
}

TEST_CASE("e2e: a silent node goes DOWN - its job is requeued and completes elsewhere (or ends NODE_FAIL with --no-requeue) - it returns when heard again") {
  LocalCluster c(2, 2, 3);  // node_timeout 3 s
  REQUIRE(c.ready());
  // The first run records its pid and waits; a rerun (SLURM_RESTART_COUNT > 0) finishes at once.
  std::string script = "--wrap 'if [ \"$SLURM_RESTART_COUNT\" -gt 0 ]; then hostname > rerun.out; exit 0; fi; "
                       "echo $$ > silent.pid; sleep 60'";
  std::string id = c.submit("-w e1 -o run-%j.out " + script);
  std::string once = c.submit("-w e1 --no-requeue --wrap 'sleep 60'");
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  REQUIRE(c.wait_state(once, "RUNNING", 10));
  REQUIRE(wait_until([&] { return !slurp(c.dir() + "/silent.pid").empty(); }, 10));
  pid_t job_pid = std::stoi(slurp(c.dir() + "/silent.pid"));
  // The requeued job names e1 only (-w), so it waits for e1 to return; there its new run
  // replaces the old one, which the silent agent was still running.
  kill(c.agent_pid(1), SIGSTOP);
  CHECK(c.wait_state(once, "NODE_FAIL", 10));
  CHECK(c.wait_state(id, "PENDING", 10));
  CHECK(c.hq("show node e1").out.find("State=DOWN+NOT_RESPONDING") != std::string::npos);
  CHECK(c.hq("show node e1").out.find("Reason=Not responding") != std::string::npos);
  CHECK(c.hq("show job " + id).out.find("Restarts=1") != std::string::npos);
  kill(c.agent_pid(1), SIGCONT);
  CHECK(wait_until([&] { return c.hq("show node e1").out.find("State=IDLE") != std::string::npos ||
                                c.hq("show node e1").out.find("State=MIXED") != std::string::npos; }, 10));
  CHECK(wait_until([&] { return kill(job_pid, 0) != 0; }, 10));  // the first run was stopped on return
  CHECK(c.wait_state(id, "COMPLETED", 15));
  std::string after = c.submit("--wrap true");
  CHECK(c.wait_state(after, "COMPLETED", 10));
}

TEST_CASE("e2e: a job on a failed node runs again on another node, keeping its id") {
  LocalCluster c(2, 1, 3);  // one CPU each, node_timeout 3 s
  REQUIRE(c.ready());
  std::string id = c.submit("-o moved-%j.out --wrap 'if [ \"$SLURM_RESTART_COUNT\" -gt 0 ]; then echo rerun on $SLURMD_NODENAME; exit 0; fi; sleep 60'");
  REQUIRE(c.wait_state(id, "RUNNING", 10));
  int node = c.hq("queue -h -j " + id).out.find("e2") != std::string::npos ? 2 : 1;
  kill(c.agent_pid(node), SIGSTOP);
  CHECK(c.wait_state(id, "COMPLETED", 20));
  std::string other = "e" + std::to_string(3 - node);
  CHECK(slurp(c.dir() + "/moved-" + id + ".out").find("rerun on " + other) != std::string::npos);
  kill(c.agent_pid(node), SIGCONT);
}

namespace {
// Connects with an explicit token; returns the first call's outcome (pipelined handshake).
hq::Status try_token(const std::string& dir, const std::string& token) {
  auto ep = hq::net::parse_endpoint(getenv("HQ_CONTROLLER"));
  hq::net::Transport t{false, slurp(dir + "/keys/ca.pem"), "", token};
  auto c = hq::net::RpcClient::connect(*ep, t, "client", 5, /*pipelined=*/true);
  if (!c) return c.status();
  hq::pb::Envelope q;
  q.mutable_queue();
  auto r = (*c)->call(q, 5);
  return r ? hq::Status::ok() : r.status();
}
}  // namespace

TEST_CASE("e2e: forged, expired, wrongly signed and replayed tokens are refused") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  auto ring = hq::net::parse_keyring(slurp(c.dir() + "/keys/secret"), "secret");
  REQUIRE(ring.is_ok());
  hq::Time now = hq::net::wall_now();
  hq::net::Identity me;
  auto good = hq::net::mint_token(*ring, me, now);
  CHECK(try_token(c.dir(), *good).is_ok());
  auto replay = try_token(c.dir(), *good);
  CHECK(replay.message().find("already used") != std::string::npos);
  auto other = hq::net::parse_keyring("1 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", "x");
  CHECK(try_token(c.dir(), *hq::net::mint_token(*other, me, now)).message().find("signature is wrong") != std::string::npos);
  CHECK(try_token(c.dir(), *hq::net::mint_token(*ring, me, now - 600)).message().find("expired") != std::string::npos);
  hq::net::Identity node;
  node.role = "node";
  node.node = "e1";
  CHECK(try_token(c.dir(), *hq::net::mint_token(*ring, node, now)).message().find("not valid for role") != std::string::npos);
  CHECK(try_token(c.dir(), "").message().find("no identity token") != std::string::npos);
  CHECK(slurp(c.dir() + "/controller.log").find("refused client") != std::string::npos);
  std::string id = c.submit("--wrap true");  // normal clients are unaffected
  CHECK(c.wait_state(id, "COMPLETED", 10));
}

TEST_CASE("e2e: users may cancel only their own jobs - root may cancel any") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  auto as = [&](int uid, const std::string& args) { return as_user(uid, shared, args); };
  auto sub = as(65534, "submit --parsable --hold --wrap true");
  REQUIRE(sub.rc == 0);
  std::string id = sub.out.substr(0, sub.out.find('\n'));
  auto denied = as(65533, "cancel " + id);
  INFO("submit said: " << sub.out << " cancel said: " << denied.out);
  CHECK(denied.rc == 1);
  CHECK(denied.out.find("Access/permission denied") != std::string::npos);
  CHECK(c.state(id) == "PENDING");
  CHECK(slurp(c.dir() + "/controller.log").find("denied: uid 65533 may not cancel job " + id) != std::string::npos);
  CHECK(as(65534, "cancel " + id).rc == 0);  // the owner may
  CHECK(c.wait_state(id, "CANCELLED", 5));
  auto second = as(65534, "submit --parsable --hold --wrap true");
  std::string id2 = second.out.substr(0, second.out.find('\n'));
  CHECK(c.hq("cancel " + id2).rc == 0);      // root may
  CHECK(c.wait_state(id2, "CANCELLED", 5));
}

TEST_CASE("e2e: on the controller's host the kernel says who a client is - no token, and no acting as another user") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string sock = c.dir() + "/state/client.sock";
  REQUIRE(access(sock.c_str(), F_OK) == 0);
  std::string shared = shared_dir(c.dir());
  REQUIRE(!shared.empty());
  // No token service at all: the local socket needs none, TCP cannot go without one.
  std::string no_tokens = "env HQ_AUTH_SOCKET=/nonexistent HQ_CLIENT_SOCKET=" + sock + " ";
  auto mine = sh(no_tokens + HQ_BINARY + " submit --parsable --hold --wrap true");
  REQUIRE(mine.rc == 0);
  std::string id = mine.out.substr(0, mine.out.find('\n'));
  auto tcp = sh(std::string("env HQ_AUTH_SOCKET=/nonexistent HQ_CLIENT_SOCKET=none ") + HQ_BINARY + " queue");
  CHECK(tcp.rc != 0);
  CHECK(tcp.out.find("token service") != std::string::npos);
  // Another user through the same socket is that user: it sees the queue, and may not
  // cancel root's job nor submit as root.
  auto theirs = as_user(65534, shared, "queue --json");
  CHECK(theirs.rc == 0);
  auto denied = as_user(65534, shared, "cancel " + id);
  CHECK(denied.rc == 1);
  CHECK(denied.out.find("Access/permission denied") != std::string::npos);
  CHECK(c.state(id) == "PENDING");
  auto sub = as_user(65534, shared, "submit --parsable --hold --wrap true");
  REQUIRE(sub.rc == 0);
  std::string id2 = sub.out.substr(0, sub.out.find('\n'));
  CHECK(c.hq("show job " + id2).out.find("UserId=nobody(65534)") != std::string::npos);
  // A node cannot come in through it: nodes connect over TLS with their tokens.
  auto local = hq::net::RpcClient::connect_local(sock, "node", 5, /*pipelined=*/true);
  REQUIRE(local.is_ok());
  hq::pb::Envelope q;
  q.mutable_queue();
  CHECK(!(*local)->call(q, 5).is_ok());  // refused (the words may be lost to the hang-up)
  CHECK(c.hq("cancel " + id + " " + id2).rc == 0);
}

TEST_CASE("e2e: squeue asked again while the queue stands is sent the controller's kept listing as a file - the same text") {
  LocalCluster c(1);  // its controller checks each kept listing against a fresh one (HQ_CHECK_LISTINGS)
  REQUIRE(c.ready());
  std::string sock = c.dir() + "/state/client.sock";
  for (int i = 0; i < 3; ++i) REQUIRE(c.hq("submit --hold --wrap true").rc == 0);
  struct Answer {
    std::string text;  // the listing, as bytes or read from the file
    bool as_file = false;
  };
  auto ask = [&](bool as_file) {  // what squeue asks over the local socket
    auto client = hq::net::RpcClient::connect_local(sock, "client", 5, /*pipelined=*/true);
    REQUIRE(client.is_ok());
    hq::pb::Envelope env;
    auto* q = env.mutable_queue();
    q->set_brief(true);
    q->mutable_render()->set_wanted(true);
    q->mutable_render()->set_header(true);
    q->set_listing_as_file(as_file);
    auto reply = (*client)->call_unparsed_jobs(env, 5);
    REQUIRE(reply.is_ok());
    Answer a;
    uint64_t bytes = reply->parts.rest.queue_reply().listing_file_bytes();
    int fd = (*client)->take_passed_file();
    a.as_file = bytes > 0;
    CHECK(a.as_file == (fd >= 0));
    if (a.as_file) {
      a.text.resize(bytes);
      CHECK(pread(fd, a.text.data(), bytes, 0) == static_cast<ssize_t>(bytes));
      CHECK(write(fd, "x", 1) == -1);  // sealed
      close(fd);
    } else {
      REQUIRE(reply->parts.listing.has_value());
      a.text = std::string(*reply->parts.listing);
    }
    return a;
  };
  Answer made = ask(true);  // made now, and kept
  CHECK(!made.as_file);
  CHECK(made.text.find("JOBID") != std::string::npos);
  Answer kept = ask(true);
  CHECK(kept.as_file);
  CHECK(kept.text == made.text);
  Answer bytes = ask(false);  // a client that takes no file gets the kept text as bytes (the same key)
  CHECK(!bytes.as_file);
  CHECK(bytes.text == made.text);
  // squeue itself prints it, to a pipe and to a file (sendfile to each).
  CHECK(c.hq("queue").out == made.text);
  CHECK(c.hq("queue | cat").out == made.text);
  CHECK(c.hq("queue > listing.txt && cat listing.txt").out == made.text);
  // The queue changes: the next listing is made afresh, with the new job.
  auto sub = c.hq("submit --parsable --hold --wrap true");
  REQUIRE(sub.rc == 0);
  std::string id = sub.out.substr(0, sub.out.find('\n'));
  Answer after = ask(true);
  CHECK(!after.as_file);
  CHECK(after.text.find(id) != std::string::npos);
  CHECK(after.text != made.text);
  CHECK(c.hq("queue").out == after.text);
}

TEST_CASE("e2e: connection floods are capped and stalled or idle peers are dropped") {
  LocalCluster c(1, 2, 20, "max_connections_per_peer = 4\nclient_idle_timeout = \"2s\"\n");
  REQUIRE(c.ready());  // the agent holds one of the 4
  int port = std::stoi(std::string(getenv("HQ_CONTROLLER")).substr(10));
  std::vector<int> silent;
  for (int i = 0; i < 3; ++i) silent.push_back(raw_connect(port));
  int extra = raw_connect(port);  // accepted in arrival order: after the 3, so over the cap
  char buf[16];
  double t0 = hq::net::mono_seconds();
  CHECK(read(extra, buf, sizeof buf) == 0);  // refused at once: closed without a word
  CHECK(hq::net::mono_seconds() - t0 < 1);
  close(extra);
  auto over_tcp = [&] { return sh(std::string("HQ_CLIENT_SOCKET=none ") + HQ_BINARY + " queue"); };
  CHECK(over_tcp().rc != 0);                 // the cap holds for everyone from this address
  CHECK(c.hq("queue").rc == 0);              // (the local socket counts per user, apart)
  // The silent peers never finish a handshake: dropped after handshake_timeout (2 s).
  CHECK(wait_until([&] { return over_tcp().rc == 0; }, 8));
  for (int fd : silent) close(fd);
  CHECK(slurp(c.dir() + "/controller.log").find("refusing connections from 127.0.0.1") != std::string::npos);

  auto ring = hq::net::parse_keyring(slurp(c.dir() + "/keys/secret"), "secret");
  hq::net::Transport t{false, slurp(c.dir() + "/keys/ca.pem"), "", *hq::net::mint_token(*ring, {}, hq::net::wall_now())};
  auto idle = hq::net::RpcClient::connect(*hq::net::parse_endpoint(getenv("HQ_CONTROLLER")), t, "client", 5);
  REQUIRE(idle.is_ok());
  // The controller sends nothing unasked: recv returns when it closes the idle connection.
  double idle_from = hq::net::mono_seconds();
  auto closed = (*idle)->recv(10);
  CHECK(!closed.is_ok());
  CHECK(closed.status().message().find("timed out") == std::string::npos);  // closed, not our own timeout
  CHECK(hq::net::mono_seconds() - idle_from > 1.5);                          // after client_idle_timeout (2 s)
  std::string id = c.submit("--wrap true");  // the agent (heartbeats) and new clients are fine
  CHECK(c.wait_state(id, "COMPLETED", 10));
}

TEST_CASE("e2e: key rotation keeps a running cluster working throughout") {
  LocalCluster c(1);
  REQUIRE(c.ready());
  std::string keys = c.dir() + "/keys";
  auto old_ring = *hq::net::parse_keyring(slurp(keys + "/secret"), "secret");
  std::string running = c.submit("--wrap '" + until_file("go") + "; echo once >> rot.out'");
  REQUIRE(c.wait_state(running, "RUNNING", 10));

  REQUIRE(c.hq("keygen " + keys + " --rotate").rc == 0);
  CHECK(wait_until([&] { return slurp(c.dir() + "/controller.log").find("signing key 2") != std::string::npos; }, 5));
  std::string during = c.submit("--wrap true");  // tokens from the service now use key 2
  CHECK(c.wait_state(during, "COMPLETED", 10));
  CHECK(try_token(c.dir(), *hq::net::mint_token(old_ring, {}, hq::net::wall_now())).is_ok());  // key 1 still verifies

  c.kill9_controller();  // agents reconnect: their new node tokens are signed with key 2
  c.start_controller();
  CHECK(wait_until([&] { return c.responding_nodes() == 1; }, 20));
  CHECK(slurp(c.dir() + "/e1.log").find("signing key 2") != std::string::npos);

  REQUIRE(c.hq("keygen " + keys + " --retire 1").rc == 0);
  CHECK(wait_until([&] {
    return try_token(c.dir(), *hq::net::mint_token(old_ring, {}, hq::net::wall_now())).message().find("retired key 1") !=
           std::string::npos;
  }, 5));
  std::string after = c.submit("--wrap true");
  CHECK(c.wait_state(after, "COMPLETED", 10));
  c.release("go");  // the job ran through both rotations and the restart
  CHECK(c.wait_state(running, "COMPLETED", 20));
  CHECK(slurp(c.dir() + "/rot.out") == "once\n");
}

TEST_CASE("e2e: root jobs need allow_root_jobs - other users' scripts are hidden - private mode hides jobs") {
  HQ_SKIP_UNLESS_USERS_SWITCH();
  for (bool priv : {false, true}) {
    LocalCluster c(1, 2, 20, "", std::string("allow_root_jobs = false\n") + (priv ? "private_jobs = true\n" : ""));
    REQUIRE(c.ready());
    auto root_job = c.hq("submit --wrap true");
    CHECK(root_job.rc == 1);
    CHECK(root_job.out.find("may not run as root") != std::string::npos);
    std::string shared = shared_dir(c.dir());
    REQUIRE(!shared.empty());
    auto as = [&](int uid, const std::string& args) { return as_user(uid, shared, args, "SECRET_TOKEN=hunter2"); };
    auto sub = as(65534, "submit --parsable --hold --wrap 'echo $SECRET_TOKEN'");
    REQUIRE(sub.rc == 0);
    std::string id = sub.out.substr(0, sub.out.find('\n'));
    auto own = as(65534, "queue --json");
    CHECK(own.out.find("hunter2") != std::string::npos);        // the owner sees everything
    CHECK(c.hq("queue --json").out.find("hunter2") != std::string::npos);  // and so does root
    auto other = as(65533, "queue --json");
    CHECK(other.out.find("hunter2") == std::string::npos);      // never another user's env or script
    CHECK((other.out.find("\"job_id\": \"" + id + "\"") != std::string::npos) == !priv);
  }
}
