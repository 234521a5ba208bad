// A multi-node job on every one of its nodes: the controller launches it on all of them
// (the first runs the script and gets the step addresses, the others hold an alloc-only
// share), keeps those shares through re-registrations and heartbeats, and releases them
// when the job ends or is requeued (docs/design/protocol.md, "Multi-node jobs").
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller_harness.hpp"

using namespace hq;
using hq::test::ControllerHarness;
using hq::test::RecordingPeer;

namespace {

struct Agents {
  std::map<std::string, std::shared_ptr<RecordingPeer>> peers;

  // Registers `name` as its agent would, with a step listener; `running`: jobs it reports.
  void connect(ControllerHarness& h, const std::string& name, const std::vector<uint64_t>& running = {}) {
    if (auto old = peers.find(name); old != peers.end()) {
      old->second->close("cut");
      h.ctl->agent_disconnected(name, old->second);
    }
    static const std::map<std::string, std::string> kAddr = {
        {"n1", "10.0.0.1:40001"}, {"n2", "10.0.0.2:40002"}, {"n3", "fd00::3:40003"}};
    auto peer = std::make_shared<RecordingPeer>(kAddr.at(name));
    pb::RegisterNode reg = test::registration(name);
    reg.set_step_port(name == "n1" ? 6818 : name == "n2" ? 7000 : 7001);
    if (name == "n2") reg.set_step_host("n2.example");
    reg.set_cert_fingerprint("fp-" + name);
    for (uint64_t id : running) reg.add_running_jobs(id);
    REQUIRE(h.ctl->agent_register(peer, 1, reg));
    peers[name] = peer;
    h.settle();
  }
  std::vector<pb::Envelope> take(const std::string& name) { return peers.at(name)->take(); }
  void take_all() {
    for (auto& [name, p] : peers) p->take();
  }
};

// `exclusive`: it holds every CPU of the cluster.
uint64_t submit_three_nodes(ControllerHarness& h, bool exclusive = false) {
  pb::SubmitRequest req = ControllerHarness::job_request();
  req.mutable_spec()->set_exclusive(exclusive);
  req.mutable_spec()->set_nodes_min(3);
  req.mutable_spec()->set_nodes_max(3);
  req.mutable_spec()->set_nodes_set(true);
  req.mutable_spec()->set_ntasks(3);
  auto r = h.submit_request(req);
  REQUIRE_MESSAGE(r, r.status().message());
  h.settle();
  return r->job_id();
}

std::vector<pb::LaunchJob> launches(const std::vector<pb::Envelope>& sent) {
  std::vector<pb::LaunchJob> out;
  for (const auto& m : sent)
    if (m.has_launch()) out.push_back(m.launch());
  return out;
}

int kills(const std::vector<pb::Envelope>& sent, uint64_t id) {
  int n = 0;
  for (const auto& m : sent) n += m.has_kill() && m.kill().job_id() == id;
  return n;
}

// A 3-node cluster with its agents registered and a 3-node job running on it.
struct Running3 {
  ControllerHarness h{"n[1-3]"};
  Agents agents;
  uint64_t id = 0;
  Running3() {
    REQUIRE(h.ok);
    for (const char* n : {"n1", "n2", "n3"}) agents.connect(h, n);
    agents.take_all();
    id = submit_three_nodes(h);
    REQUIRE(h.state_of(id) == "RUNNING");
  }
  void end_on_first(const std::string& state = "COMPLETED", int32_t run = 0) {
    pb::JobEnded e;
    e.set_job_id(id);
    e.set_state(state);
    e.set_restart_count(run);
    h.ctl->agent_job_ended("n1", agents.peers.at("n1"), e);
    h.settle();
  }
};

}  // namespace

TEST_CASE("multi-node launch: every node gets a LaunchJob, the first with the peers, the others alloc_only") {
  Running3 r;
  std::map<std::string, pb::LaunchJob> got;
  for (const char* n : {"n1", "n2", "n3"}) {
    auto l = launches(r.agents.take(n));
    REQUIRE(l.size() == 1);
    got[n] = l[0];
    CHECK(l[0].job().job_id() == r.id);
    CHECK(l[0].nodelist() == "n[1-3]");
  }
  CHECK(got["n1"].node_index() == 0);
  CHECK(got["n2"].node_index() == 1);
  CHECK(got["n3"].node_index() == 2);
  CHECK_FALSE(got["n1"].alloc_only());
  CHECK(got["n2"].alloc_only());
  CHECK(got["n3"].alloc_only());
  CHECK(got["n2"].peers_size() == 0);
  CHECK(got["n3"].peers_size() == 0);
  const auto& peers = got["n1"].peers();
  REQUIRE(peers.size() == 3);
  CHECK(peers[0].node() == "n1");
  CHECK(peers[0].host() == "10.0.0.1");  // the address the controller sees
  CHECK(peers[0].port() == 6818);
  CHECK(peers[0].fingerprint() == "fp-n1");
  CHECK(peers[1].node() == "n2");
  CHECK(peers[1].host() == "n2.example");  // the agent's own step_host
  CHECK(peers[1].port() == 7000);
  CHECK(peers[1].fingerprint() == "fp-n2");
  CHECK(peers[2].node() == "n3");
  CHECK(peers[2].host() == "fd00::3");  // IPv6, port split off
  CHECK(peers[2].port() == 7001);
  CHECK(peers[2].fingerprint() == "fp-n3");
}

TEST_CASE("multi-node launch: a node that is not connected requeues the job and nothing is sent") {
  ControllerHarness h("n[1-3]");
  REQUIRE(h.ok);
  Agents agents;
  for (const char* n : {"n1", "n2", "n3"}) agents.connect(h, n);
  agents.take_all();
  // n3 goes away after the pass placed the job but before its start is durable: the launch
  // finds it gone.
  pb::SubmitRequest req = ControllerHarness::job_request();
  req.mutable_spec()->set_nodes_min(3);
  req.mutable_spec()->set_nodes_max(3);
  req.mutable_spec()->set_nodes_set(true);
  req.mutable_spec()->set_ntasks(3);
  uint64_t id = 0;
  h.ctl->submit(req, ControllerHarness::user(), [&](Result<pb::SubmitReply> r) {
    if (r) id = r->job_id();
  });
  // Run until the job is placed, then cut n3 before the launch goes out.
  for (int i = 0; i < 1000 && !(id != 0 && h.state_of(id) == "RUNNING"); ++i) {
    h.io.restart();
    h.io.run_one_for(std::chrono::milliseconds(5));
  }
  REQUIRE(id != 0);
  REQUIRE(h.state_of(id) == "RUNNING");
  agents.peers.at("n3")->close("cut");
  h.ctl->agent_disconnected("n3", agents.peers.at("n3"));
  h.settle();
  for (const char* n : {"n1", "n2"}) CHECK(launches(agents.take(n)).empty());
  CHECK(h.state_of(id) == "PENDING");
}

TEST_CASE("multi-node launch: a node other than the first re-registering without the job gets its share again") {
  Running3 r;
  r.agents.take_all();
  r.agents.connect(r.h, "n2");  // its agent restarted: it holds nothing
  auto l = launches(r.agents.take("n2"));
  REQUIRE(l.size() == 1);
  CHECK(l[0].alloc_only());
  CHECK(l[0].node_index() == 1);
  CHECK(l[0].job().job_id() == r.id);
  CHECK(r.h.state_of(r.id) == "RUNNING");
  CHECK(r.agents.take("n1").empty());
  CHECK(r.agents.take("n3").empty());
  // Re-registering with it: nothing to do.
  r.agents.connect(r.h, "n3", {r.id});
  for (const auto& m : r.agents.take("n3")) {
    CHECK_FALSE(m.has_launch());
    CHECK_FALSE(m.has_kill());
  }
  CHECK(r.h.state_of(r.id) == "RUNNING");
}

TEST_CASE("multi-node launch: the first node re-registering without the job requeues it, and the others let go before a new run") {
  Running3 r;
  r.agents.take_all();
  r.agents.connect(r.h, "n1");  // lost on the first node: requeued, and runs again on n[1-3]
  r.h.settle();
  for (const char* n : {"n2", "n3"}) {
    auto sent = r.agents.take(n);
    // The old share's release comes before the new run's launch on the same connection.
    int kill_at = -1, launch_at = -1;
    for (size_t i = 0; i < sent.size(); ++i) {
      if (sent[i].has_kill() && sent[i].kill().job_id() == r.id && kill_at < 0) kill_at = static_cast<int>(i);
      if (sent[i].has_launch() && launch_at < 0) launch_at = static_cast<int>(i);
    }
    CAPTURE(n);
    REQUIRE(kill_at >= 0);
    CHECK(sent[static_cast<size_t>(kill_at)].kill().reason() == "unknown");
    REQUIRE(launch_at >= 0);
    CHECK(kill_at < launch_at);
    CHECK(sent[static_cast<size_t>(launch_at)].launch().job().restart_count() == 1);
    CHECK(sent[static_cast<size_t>(launch_at)].launch().alloc_only());
  }
  auto first = launches(r.agents.take("n1"));
  REQUIRE(first.size() == 1);
  CHECK(first[0].job().restart_count() == 1);
  CHECK(r.h.state_of(r.id) == "RUNNING");
}

TEST_CASE("multi-node launch: the job's end releases its other nodes") {
  Running3 r;
  r.agents.take_all();
  r.end_on_first();
  CHECK(r.h.state_of(r.id) == "COMPLETED");
  auto first = r.agents.take("n1");
  CHECK(kills(first, r.id) == 0);
  bool acked = false;
  for (const auto& m : first) acked |= m.has_job_ended_ack() && m.job_ended_ack().job_id() == r.id;
  CHECK(acked);
  for (const char* n : {"n2", "n3"}) {
    auto sent = r.agents.take(n);
    CAPTURE(n);
    REQUIRE(kills(sent, r.id) == 1);
    for (const auto& m : sent)
      if (m.has_kill()) CHECK(m.kill().reason() == "unknown");
  }
}

TEST_CASE("multi-node launch: a cancel kills on every node") {
  Running3 r;
  r.agents.take_all();
  auto c = r.h.cancel({r.id}, "");
  REQUIRE(c);
  for (const char* n : {"n1", "n2", "n3"}) {
    auto sent = r.agents.take(n);
    CAPTURE(n);
    REQUIRE(kills(sent, r.id) == 1);
    for (const auto& m : sent)
      if (m.has_kill()) CHECK(m.kill().reason() == "cancel");
  }
  r.end_on_first("CANCELLED");
  CHECK(r.h.state_of(r.id) == "CANCELLED");
  CHECK(kills(r.agents.take("n2"), r.id) == 1);  // and the release once the end is durable
}

TEST_CASE("multi-node launch: heartbeats from the job's other nodes kill nothing while it runs") {
  Running3 r;
  r.agents.take_all();
  pb::Heartbeat hb;
  hb.add_running_jobs(r.id);
  for (const char* n : {"n1", "n2", "n3"}) r.h.ctl->agent_heartbeat(n, hb);
  r.h.settle();
  for (const char* n : {"n1", "n2", "n3"}) CHECK(kills(r.agents.take(n), r.id) == 0);
  r.end_on_first();
  r.agents.take_all();
  // A share still held after the end (its release was lost): the heartbeat backstop.
  r.h.ctl->agent_heartbeat("n3", hb);
  r.h.settle();
  CHECK(kills(r.agents.take("n3"), r.id) == 1);
}

TEST_CASE("multi-node launch: a JobEnded from a node other than the first is acked and ignored") {
  Running3 r;
  r.agents.take_all();
  pb::JobEnded e;
  e.set_job_id(r.id);
  e.set_state("FAILED");
  r.h.ctl->agent_job_ended("n2", r.agents.peers.at("n2"), e);
  r.h.settle();
  CHECK(r.h.state_of(r.id) == "RUNNING");
  bool acked = false;
  for (const auto& m : r.agents.take("n2")) acked |= m.has_job_ended_ack() && m.job_ended_ack().job_id() == r.id;
  CHECK(acked);
  CHECK(kills(r.agents.take("n3"), r.id) == 0);
}

TEST_CASE("multi-node launch: a disconnected agent's step address is forgotten") {
  ControllerHarness h("n[1-2]");
  REQUIRE(h.ok);
  Agents agents;
  agents.connect(h, "n1");
  agents.connect(h, "n2");
  // n2 re-registers without a step listener: its old address is not kept.
  agents.peers.at("n2")->close("cut");
  h.ctl->agent_disconnected("n2", agents.peers.at("n2"));
  auto peer = std::make_shared<RecordingPeer>("10.0.0.2:40009");
  REQUIRE(h.ctl->agent_register(peer, 1, test::registration("n2")));
  agents.peers["n2"] = peer;
  h.settle();
  agents.take_all();
  pb::SubmitRequest req = ControllerHarness::job_request();
  req.mutable_spec()->set_nodes_min(2);
  req.mutable_spec()->set_nodes_max(2);
  req.mutable_spec()->set_nodes_set(true);
  req.mutable_spec()->set_ntasks(2);
  REQUIRE(h.submit_request(req));
  h.settle();
  auto l = launches(agents.take("n1"));
  REQUIRE(l.size() == 1);
  REQUIRE(l[0].peers_size() == 2);
  CHECK(l[0].peers(1).node() == "n2");
  CHECK(l[0].peers(1).host() == "10.0.0.2");
  CHECK(l[0].peers(1).port() == 0);
  CHECK(l[0].peers(1).fingerprint().empty());
}

// ---- srun/salloc outside a job: allocations (cmd/controller/allocations.cpp) ----
namespace {

pb::AllocateRequest srun_allocation(int nodes, const std::string& key) {
  pb::AllocateRequest req;
  auto* s = req.mutable_spec();
  s->set_name("hostname");
  s->set_alloc_kind(1);
  s->set_nodes_min(nodes);
  s->set_nodes_max(nodes);
  s->set_nodes_set(true);
  s->set_ntasks(nodes);
  s->set_ntasks_set(true);
  s->set_cpus_per_task(1);
  s->set_time_limit(-2);
  req.set_request_key(key);
  return req;
}

struct Allocating {
  std::vector<Result<pb::AllocateReply>> replies;
  void ask(ControllerHarness& h, const pb::AllocateRequest& req, const net::Identity& who = ControllerHarness::user()) {
    h.ctl->allocate(req, who, [this](Result<pb::AllocateReply> r) { replies.push_back(std::move(r)); });
    h.settle();
  }
};

Result<pb::JobCompleteReply> complete(ControllerHarness& h, uint64_t id, int32_t code,
                                      const net::Identity& who = ControllerHarness::user()) {
  pb::JobCompleteRequest req;
  req.set_job_id(id);
  req.set_exit_code(code);
  Result<pb::JobCompleteReply> out = internal("no answer");
  h.ctl->complete(req, who, [&](Result<pb::JobCompleteReply> r) { out = std::move(r); });
  h.settle();
  return out;
}

struct Idle3 {
  ControllerHarness h{"n[1-3]"};
  Agents agents;
  Idle3() {
    REQUIRE(h.ok);
    for (const char* n : {"n1", "n2", "n3"}) agents.connect(h, n);
    agents.take_all();
  }
};

// A 3-node batch job holds every CPU: the allocation asked for with `key` is answered
// pending (its id, no error). Returns its id; `batch`: the batch job's.
uint64_t queue_behind_full_cluster(Idle3& c, Allocating& a, const std::string& key, uint64_t& batch) {
  batch = submit_three_nodes(c.h, true);
  REQUIRE(c.h.state_of(batch) == "RUNNING");
  a.ask(c.h, srun_allocation(1, key));
  REQUIRE(a.replies.size() == 1);
  REQUIRE(a.replies[0]);
  CHECK_FALSE(a.replies[0]->granted());
  CHECK(a.replies[0]->error().empty());
  uint64_t id = a.replies[0]->job_id();
  CHECK(c.h.state_of(id) == "PENDING");
  return id;
}

}  // namespace

TEST_CASE("allocation: srun's job starts at once - one granted answer with the step manager, every node alloc_only") {
  Idle3 c;
  Allocating a;
  a.ask(c.h, srun_allocation(2, "key-1"));
  REQUIRE(a.replies.size() == 1);
  REQUIRE_MESSAGE(a.replies[0], a.replies[0].status().message());
  const pb::AllocateReply& r = *a.replies[0];
  CHECK(r.granted());
  CHECK(r.nodelist() == "n[1-2]");
  CHECK(r.stepmgr().node() == "n1");
  CHECK(r.stepmgr().host() == "10.0.0.1");
  CHECK(r.stepmgr().port() == 6818);
  CHECK(r.stepmgr().fingerprint() == "fp-n1");
  CHECK(r.alloc_size() == 2);
  uint64_t id = r.job_id();
  CHECK(c.h.state_of(id) == "RUNNING");
  auto first = launches(c.agents.take("n1"));
  auto second = launches(c.agents.take("n2"));
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  CHECK(first[0].alloc_only());  // no script anywhere
  CHECK(first[0].peers_size() == 2);
  CHECK(second[0].alloc_only());
  CHECK(first[0].job().spec().name() == "hostname");
  // Retried with the same key: the same job, granted again.
  a.ask(c.h, srun_allocation(2, "key-1"));
  REQUIRE(a.replies.size() == 2);
  REQUIRE(a.replies[1]);
  CHECK(a.replies[1]->job_id() == id);
  CHECK(a.replies[1]->granted());
  // Another user may not end it; its user does: COMPLETED, and both nodes let go.
  auto refused = complete(c.h, id, 0, ControllerHarness::user(2000));
  CHECK_FALSE(refused);
  CHECK(c.h.state_of(id) == "RUNNING");
  auto done = complete(c.h, id, 0);
  REQUIRE_MESSAGE(done, done.status().message());
  CHECK(done->state() == "COMPLETED");
  CHECK(c.h.state_of(id) == "COMPLETED");
  CHECK(kills(c.agents.take("n1"), id) == 1);
  CHECK(kills(c.agents.take("n2"), id) == 1);
  CHECK(kills(c.agents.take("n3"), id) == 0);
}

TEST_CASE("allocation: a busy cluster - answered pending after a pass, granted when the nodes free up - exit code 3 ends it FAILED") {
  Idle3 c;
  Allocating a;
  uint64_t batch = 0, id = queue_behind_full_cluster(c, a, "key-2", batch);
  c.agents.take_all();
  pb::JobEnded e;  // the batch job ends: the allocation starts
  e.set_job_id(batch);
  e.set_state("COMPLETED");
  c.h.ctl->agent_job_ended("n1", c.agents.peers.at("n1"), e);
  c.h.settle();
  REQUIRE(a.replies.size() == 2);
  REQUIRE(a.replies[1]);
  CHECK(a.replies[1]->granted());
  CHECK(a.replies[1]->job_id() == id);
  CHECK(c.h.state_of(id) == "RUNNING");
  auto done = complete(c.h, id, 3);
  REQUIRE(done);
  CHECK(done->state() == "FAILED");
  pb::QueueRequest q;
  q.add_job_ids(id);
  q.set_include_finished(true);
  auto shown = c.h.ctl->queue(q, net::Identity{});
  REQUIRE(shown.jobs_size() == 1);
  CHECK(shown.jobs(0).exit_code() == 3);
}

TEST_CASE("allocation: cancelled while it waits - the waiting srun is told it was revoked") {
  Idle3 c;
  Allocating a;
  uint64_t batch = 0, id = queue_behind_full_cluster(c, a, "key-3", batch);
  REQUIRE(c.h.cancel({id}, "cancel-key"));
  REQUIRE(a.replies.size() == 2);
  REQUIRE(a.replies[1]);
  CHECK_FALSE(a.replies[1]->granted());
  CHECK(a.replies[1]->error() == "Job allocation " + std::to_string(id) + " has been revoked.");
  CHECK(c.h.state_of(id) == "CANCELLED");
}

TEST_CASE("allocation: its first node re-registering without it gets its share again - not requeued - a batch job cannot be completed") {
  Idle3 c;
  Allocating a;
  a.ask(c.h, srun_allocation(2, "key-4"));
  REQUIRE(a.replies.size() == 1);
  uint64_t id = a.replies[0]->job_id();
  c.agents.take_all();
  c.agents.connect(c.h, "n1");  // its agent restarted: it holds nothing
  auto l = launches(c.agents.take("n1"));
  REQUIRE(l.size() == 1);
  CHECK(l[0].alloc_only());
  CHECK(l[0].peers_size() == 2);
  CHECK(c.h.state_of(id) == "RUNNING");
  CHECK(kills(c.agents.take("n2"), id) == 0);
  uint64_t batch = c.h.submit();
  REQUIRE(batch != 0);
  CHECK_FALSE(complete(c.h, batch, 0));
  // A running allocation cancelled: CANCELLED at once (no node reports its end), both nodes let go.
  REQUIRE(c.h.cancel({id}, "cancel-4"));
  CHECK(c.h.state_of(id) == "CANCELLED");
  CHECK(kills(c.agents.take("n1"), id) >= 1);
  CHECK(kills(c.agents.take("n2"), id) >= 1);
}

TEST_CASE("allocation: a SubmitRequest cannot make one, and an AllocateRequest needs srun's or salloc's kind") {
  Idle3 c;
  pb::SubmitRequest sub = ControllerHarness::job_request();
  sub.mutable_spec()->set_alloc_kind(1);
  CHECK_FALSE(c.h.submit_request(sub));
  Allocating a;
  auto req = srun_allocation(1, "key-5");
  req.mutable_spec()->set_alloc_kind(0);
  a.ask(c.h, req);
  REQUIRE(a.replies.size() == 1);
  CHECK_FALSE(a.replies[0]);
}

namespace {
// One 4-CPU node in two partitions: "batch" (tier 1, its jobs cancelled when preempted,
// 30 s of grace) and "high" (tier 2); the clock stands still until the test moves it.
struct Preemptible {
  static constexpr Time kStart = 1'700'000'000;
  ControllerHarness h{"n1", 4, std::make_shared<test::MemoryLog::Disk>(), kStart, [](ClusterConfig& c) {
                        c.scheduler.preempt_partition_prio = true;
                        c.partitions[0].preempt_mode = PreemptMode::kCancel;
                        c.partitions[0].grace_time = 30;
                        PartitionConfig high = c.partitions[0];
                        high.name = "high";
                        high.is_default = false;
                        high.priority_tier = 2;
                        high.preempt_mode = PreemptMode::kOff;
                        c.partitions.push_back(high);
                      }};
  Agents agents;
  Allocating a;
  uint64_t alloc = 0, preemptor = 0;
  Preemptible() {
    REQUIRE(h.ok);
    agents.connect(h, "n1");
    agents.take_all();
    auto req = srun_allocation(1, "key-p");
    req.mutable_spec()->set_exclusive(true);
    a.ask(h, req);
    REQUIRE(a.replies.size() == 1);
    REQUIRE(a.replies[0]);
    alloc = a.replies[0]->job_id();
    REQUIRE(h.state_of(alloc) == "RUNNING");
    agents.take_all();
    pb::SubmitRequest high = ControllerHarness::job_request();
    high.mutable_spec()->set_partition("high");
    high.mutable_spec()->set_exclusive(true);
    auto r = h.submit_request(high);
    REQUIRE_MESSAGE(r, r.status().message());
    preemptor = r->job_id();
    h.settle();
  }
};
}  // namespace

TEST_CASE("allocation: preempted (CANCEL) - its nodes are told at once, it ends PREEMPTED when its grace is over, and the preemptor starts") {
  Preemptible p;
  CHECK(kills(p.agents.take("n1"), p.alloc) == 1);  // its steps get SIGTERM, SIGKILL after the grace
  CHECK(p.h.state_of(p.alloc) == "RUNNING");        // nothing on a node reports an allocation's end
  CHECK(p.h.state_of(p.preemptor) == "PENDING");
  *p.h.clock += 29;
  p.h.ctl->tick();
  p.h.settle();
  CHECK(p.h.state_of(p.alloc) == "RUNNING");
  *p.h.clock += 2;
  p.h.ctl->tick();
  p.h.settle();
  CHECK(p.h.state_of(p.alloc) == "PREEMPTED");
  CHECK(p.h.state_of(p.preemptor) == "RUNNING");
}

TEST_CASE("allocation: preempted, then its srun ends it within the grace - PREEMPTED, not COMPLETED or FAILED") {
  Preemptible p;
  auto done = complete(p.h, p.alloc, 143);  // srun's tasks died of the SIGTERM
  REQUIRE_MESSAGE(done, done.status().message());
  CHECK(done->state() == "PREEMPTED");
  CHECK(p.h.state_of(p.alloc) == "PREEMPTED");
  CHECK(p.h.state_of(p.preemptor) == "RUNNING");
}

TEST_CASE("allocation: preempted, then the controller restarts - the allocation ends at its first tick") {
  Preemptible p;
  CHECK(p.h.state_of(p.alloc) == "RUNNING");
  auto disk = p.h.disk;
  p.h.ctl->shutdown();
  p.h.crashed = true;
  ControllerHarness again("n1", 4, disk, Preemptible::kStart + 1, [](ClusterConfig& c) {
    c.scheduler.preempt_partition_prio = true;
    c.partitions[0].preempt_mode = PreemptMode::kCancel;
    PartitionConfig high = c.partitions[0];
    high.name = "high";
    high.is_default = false;
    high.priority_tier = 2;
    c.partitions.push_back(high);
  });
  REQUIRE(again.ok);
  again.ctl->tick();
  again.settle();
  CHECK(again.state_of(p.alloc) == "PREEMPTED");
}
