// Agent sessions: the agent's state machine (AgentLink) and the controller's side of
// registration, reconciliation and job ends, driven without sockets through a transport
// that reorders, duplicates and cuts, and across controller crashes.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "cmd/agent/agent_link.hpp"
#include "controller_harness.hpp"
#include "net/convert.hpp"

using namespace hq;
using hq::cmd::AgentLink;
using hq::test::ControllerHarness;
using hq::test::RecordingPeer;

namespace {

pb::Envelope kill_msg(uint64_t id) {
  pb::Envelope e;
  e.mutable_kill()->set_job_id(id);
  return e;
}

pb::Envelope ack_msg() {
  pb::Envelope e;
  e.mutable_register_ack()->set_heartbeat_interval(5);
  return e;
}

}  // namespace

TEST_CASE("agent link: messages before the RegisterAck wait for it, in order") {
  AgentLink link;
  CHECK(link.on_message(kill_msg(1)).deliver.empty());
  CHECK(link.on_message(kill_msg(2)).deliver.empty());
  CHECK(link.early() == 2);
  auto step = link.on_message(ack_msg());
  REQUIRE(step.registered);
  CHECK(step.registered->heartbeat_interval() == 5);
  REQUIRE(step.deliver.size() == 2);
  CHECK(step.deliver[0].kill().job_id() == 1);
  CHECK(step.deliver[1].kill().job_id() == 2);
  CHECK(link.state() == AgentLink::State::kActive);
  auto later = link.on_message(kill_msg(3));  // active: handed over at once
  CHECK_FALSE(later.registered);
  REQUIRE(later.deliver.size() == 1);
  auto dup = link.on_message(ack_msg());  // a duplicate ack is just a message now
  CHECK_FALSE(dup.registered);
  CHECK(dup.ended.is_ok());
}

TEST_CASE("agent link: an Error before the ack ends the session") {
  AgentLink link;
  pb::Envelope err;
  err.mutable_error()->set_code(static_cast<int32_t>(Code::kInvalid));
  err.mutable_error()->set_message("unknown node");
  auto step = link.on_message(err);
  CHECK_FALSE(step.ended.is_ok());
  CHECK(step.ended.message() == "unknown node");
  CHECK(link.state() == AgentLink::State::kEnded);
  CHECK_FALSE(link.on_message(ack_msg()).ended.is_ok());
}

TEST_CASE("controller: the RegisterAck goes out before anything reconciliation sends") {
  ControllerHarness h("n1");
  REQUIRE(h.ok);
  auto peer = std::make_shared<RecordingPeer>();
  pb::RegisterNode reg = test::registration("n1");
  reg.add_running_jobs(999);  // unknown here: the controller kills it
  pb::JobEnded* old = reg.add_finished();  // an end the controller cannot use: acked anyway
  old->set_job_id(998);
  old->set_state("COMPLETED");
  REQUIRE(h.ctl->agent_register(peer, 7, reg));
  h.settle();
  auto sent = peer->take();
  REQUIRE(sent.size() >= 3);
  CHECK(sent[0].has_register_ack());
  CHECK(sent[0].seq() == 7);
  bool killed = false, acked = false;
  for (const auto& m : sent) {
    killed |= m.has_kill() && m.kill().job_id() == 999;
    acked |= m.has_job_ended_ack() && m.job_ended_ack().job_id() == 998;
  }
  CHECK(killed);
  CHECK(acked);
}

TEST_CASE("controller: a refused registration gets an Error and no ack") {
  ControllerHarness h("n1");
  auto peer = std::make_shared<RecordingPeer>();
  pb::RegisterNode reg = test::registration("n1", 0);  // no CPUs
  CHECK_FALSE(h.ctl->agent_register(peer, 3, reg));
  auto sent = peer->take();
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].has_error());
}

namespace {

// The agent as the controller sees it: runs what it is launched, ends jobs, reports each
// end until acked, and registers with what it runs and what is unacked (cmd/agent/agent.cpp).
struct ModelAgent {
  std::string name = "n1";
  std::map<uint64_t, int32_t> running;            // job -> run number
  std::map<uint64_t, pb::JobEnded> unacked;
  std::shared_ptr<RecordingPeer> peer;
  AgentLink link;
  int registrations = 0;
  int double_runs = 0;

  void connect(ControllerHarness& h) {
    drop(h);
    peer = std::make_shared<RecordingPeer>();
    link = AgentLink{};
    pb::RegisterNode reg = test::registration(name);
    for (const auto& [id, run] : running) reg.add_running_jobs(id);
    for (const auto& [id, e] : unacked) *reg.add_finished() = e;
    ++registrations;
    if (!h.ctl->agent_register(peer, 1, reg)) peer->close("refused");
  }
  void drop(ControllerHarness& h) {
    if (!peer) return;
    peer->close("cut");
    h.ctl->agent_disconnected(name, peer);
    peer.reset();
  }
  bool active() const { return peer && peer->is_open() && link.state() == AgentLink::State::kActive; }
  void handle(const pb::Envelope& m) {
    if (m.has_launch()) {
      uint64_t id = m.launch().job().job_id();
      int32_t run = m.launch().job().restart_count();
      if (auto e = unacked.find(id); e != unacked.end() && e->second.restart_count() >= run) return;
      if (running.count(id)) {
        if (running[id] != run) ++double_runs;  // two runs of one job at once
        return;
      }
      running[id] = run;
    } else if (m.has_kill()) {
      if (running.count(m.kill().job_id())) end(m.kill().job_id(), "CANCELLED", nullptr);
    } else if (m.has_job_ended_ack()) {
      auto it = unacked.find(m.job_ended_ack().job_id());
      if (it != unacked.end() && it->second.restart_count() == m.job_ended_ack().restart_count()) unacked.erase(it);
    }
  }
  void end(uint64_t id, const std::string& state, ControllerHarness* h) {
    pb::JobEnded e;
    e.set_job_id(id);
    e.set_state(state);
    e.set_restart_count(running.at(id));
    running.erase(id);
    unacked[id] = e;
    if (h && active()) h->ctl->agent_job_ended(name, peer, e);
  }
  // Hands what the controller sent to the link, reordered and duplicated; with `cuts`,
  // the connection may also be cut anywhere.
  void deliver(ControllerHarness& h, std::mt19937& rng, bool cuts) {
    if (!peer) return;
    std::vector<pb::Envelope> batch = peer->take();
    {
      std::shuffle(batch.begin(), batch.end(), rng);
      size_t n = batch.size();
      for (size_t i = 0; i < n; ++i)
        if (rng() % 4 == 0) batch.push_back(pb::Envelope(batch[i]));
    }
    for (size_t i = 0; i < batch.size(); ++i) {
      if (cuts && rng() % 10 == 0) return drop(h);  // the connection is cut mid-way
      AgentLink::Step step = link.on_message(batch[i]);
      if (!step.ended) return drop(h);
      for (const auto& m : step.deliver) handle(m);
    }
  }
};

}  // namespace

TEST_CASE("agent sessions survive reordered, duplicated and cut messages and controller crashes") {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    auto disk = std::make_shared<test::MemoryLog::Disk>();
    auto h = std::make_unique<ControllerHarness>("n1", 4, disk);
    ModelAgent agent;
    std::vector<uint64_t> jobs;
    for (int i = 0; i < 6; ++i) {
      jobs.push_back(h->submit());
      REQUIRE_MESSAGE(jobs.back() != 0, h->error);
    }
    agent.connect(*h);
    for (int round = 0; round < 30; ++round) {  // faults
      h->settle();
      agent.deliver(*h, rng, true);
      switch (rng() % 8) {
        case 0: agent.connect(*h); break;                 // the agent reconnects
        case 1: {                                          // kill -9 of the controller
          agent.peer.reset();
          h->crashed = true;
          h.reset();
          h = std::make_unique<ControllerHarness>("n1", 4, disk);
          REQUIRE(h->ok);
          agent.connect(*h);
          break;
        }
        case 2: case 3:
          if (!agent.running.empty()) agent.end(agent.running.begin()->first, "COMPLETED", h.get());
          break;
        default: break;
      }
      if (!agent.peer) agent.connect(*h);
    }
    // No more cuts or crashes (still reordered and duplicated): one session must come up and
    // stay up, with no registration loop, and every job must end.
    agent.connect(*h);
    int registrations = agent.registrations;
    for (int round = 0; round < 50; ++round) {
      h->settle();
      agent.deliver(*h, rng, false);
      if (!agent.peer) agent.connect(*h);
      if (!agent.running.empty()) agent.end(agent.running.begin()->first, "COMPLETED", h.get());
    }
    h->settle();
    agent.deliver(*h, rng, false);
    CHECK(agent.registrations == registrations);
    CHECK(agent.active());
    CHECK(agent.unacked.empty());
    CHECK(agent.double_runs == 0);
    pb::Node n = h->node("n1");
    CHECK(n.responding());
    CHECK(n.state().find("DOWN") == std::string::npos);
    for (uint64_t id : jobs) CHECK(h->state_of(id) == "COMPLETED");
  }
}

TEST_CASE("controller: a re-registering agent's end of an earlier run does not hide that the current run is gone") {
  ControllerHarness h("n1");
  REQUIRE(h.ok);
  auto peer = std::make_shared<RecordingPeer>();
  REQUIRE(h.ctl->agent_register(peer, 1, test::registration("n1")));
  h.settle();
  pb::SubmitRequest req = ControllerHarness::job_request();
  req.mutable_spec()->set_requeue(-1);  // batch jobs' default: requeued when their node fails
  auto submitted = h.submit_request(req);
  REQUIRE(submitted.is_ok());
  uint64_t id = submitted->job_id();
  auto launches = [](RecordingPeer& p) {
    std::vector<int32_t> runs;
    for (const auto& m : p.take())
      if (m.has_launch()) runs.push_back(m.launch().job().restart_count());
    return runs;
  };
  CHECK(launches(*peer) == std::vector<int32_t>{0});
  // Run 0 was fenced by its agent: requeued and launched again (run 1).
  pb::JobEnded fenced = net::to_pb(JobEnded{JobId{id}, 0, JobState::kNodeFail, 0, 0, JobReason::kNodeFenced});
  fenced.set_restart_count(0);
  h.ctl->agent_job_ended("n1", peer, fenced);
  h.settle();
  CHECK(launches(*peer) == std::vector<int32_t>{1});
  // The agent died before run 1 started; its successor still holds run 0's unacked end.
  h.ctl->agent_disconnected("n1", peer);
  auto again = std::make_shared<RecordingPeer>();
  pb::RegisterNode reg = test::registration("n1");
  *reg.add_finished() = fenced;
  REQUIRE(h.ctl->agent_register(again, 2, reg));
  h.settle();
  CHECK(launches(*again) == std::vector<int32_t>{2});  // run 1 is lost: requeued and launched anew
  CHECK(h.state_of(id) == "RUNNING");
}
