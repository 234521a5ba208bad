// Node state through the real Controller on an in-memory journal: what registrations,
// silence, heartbeats and operators change of a node is journaled, so that a crash (kill -9,
// no snapshot) or a clean restart (snapshot) gives it back: a node DOWN for silence stays
// DOWN with its reason until its agent is heard again (return_to_service), a dynamic node
// keeps its features and partitions; liveness (responding) is learned again.
#include <doctest/doctest.h>

#include "controller_harness.hpp"

using namespace hq;
using hq::test::ControllerHarness;
using hq::test::RecordingPeer;

namespace {

constexpr Time kStart = 1'700'000'000;

using Harness = std::unique_ptr<ControllerHarness>;
using Configure = std::function<void(ClusterConfig&)>;

Harness start(std::shared_ptr<test::MemoryLog::Disk> disk, Time at, const Configure& configure = {}) {
  auto h = std::make_unique<ControllerHarness>("n[1-2]", 4, std::move(disk), at, configure);
  REQUIRE(h->ok);
  return h;
}

// kill -9 (nothing but the journal survives) or a clean stop (a snapshot), then a start.
Harness restart(Harness h, bool crash, const Configure& configure = {}) {
  auto disk = h->disk;
  Time at = *h->clock;
  h->crashed = crash;
  h.reset();
  return start(disk, at, configure);
}

std::shared_ptr<RecordingPeer> connect(ControllerHarness& h, const pb::RegisterNode& reg) {
  auto peer = std::make_shared<RecordingPeer>();
  REQUIRE(h.ctl->agent_register(peer, 1, reg));
  h.settle();
  return peer;
}

// The controller's clock moves past node_timeout without a word from the agents.
void fall_silent(ControllerHarness& h) {
  *h.clock += h.ctl->config().node_timeout + 1;
  h.ctl->tick();
  h.settle();
}

}  // namespace

TEST_CASE("node state: a node the timeout set DOWN stays DOWN with its reason after a crash, and returns when its agent registers") {
  for (bool crash : {true, false}) {
    CAPTURE(crash);
    Harness h = start(std::make_shared<test::MemoryLog::Disk>(), kStart);
    auto peer = connect(*h, test::registration("n1"));
    CHECK(h->node("n1").state() == "IDLE");
    fall_silent(*h);
    CHECK(h->node("n1").state() == "DOWN");
    CHECK(h->node("n1").reason() == "Not responding");
    CHECK(h->node("n2").state() == "UNKNOWN");  // never heard, runs nothing: not DOWN

    h = restart(std::move(h), crash);
    pb::Node n1 = h->node("n1");
    CHECK(n1.state() == "DOWN");
    CHECK(n1.reason() == "Not responding");
    CHECK(!n1.responding());
    uint64_t job = h->submit();
    REQUIRE(job != 0);
    CHECK(h->state_of(job) == "PENDING");  // nowhere to run: n1 DOWN, n2 unknown

    peer = connect(*h, test::registration("n1"));  // return_to_service = 1
    n1 = h->node("n1");
    CHECK(n1.state() != "DOWN");
    CHECK(n1.reason().empty());
    CHECK(n1.responding());
    CHECK(h->state_of(job) == "RUNNING");
    h = restart(std::move(h), crash);  // the return was journaled too
    CHECK(h->node("n1").state().find("DOWN") == std::string::npos);
    CHECK(h->state_of(job) == "RUNNING");
  }
}

TEST_CASE("node state: a heartbeat returns a silent node - with return_to_service = 0 only a resume does, also after a crash") {
  Harness h = start(std::make_shared<test::MemoryLog::Disk>(), kStart);
  auto peer = connect(*h, test::registration("n1"));
  fall_silent(*h);
  REQUIRE(h->node("n1").state() == "DOWN");
  h->ctl->agent_heartbeat("n1", pb::Heartbeat{});
  h->settle();
  CHECK(h->node("n1").state() == "IDLE");
  h = restart(std::move(h), true);
  CHECK(h->node("n1").state() == "UNKNOWN");  // up when it crashed: waits for its agent

  auto rts0 = [](ClusterConfig& c) { c.return_to_service = 0; };
  h = restart(std::move(h), true, rts0);
  peer = connect(*h, test::registration("n1"));
  fall_silent(*h);
  h->ctl->agent_heartbeat("n1", pb::Heartbeat{});
  h->settle();
  CHECK(h->node("n1").state() == "DOWN");
  h = restart(std::move(h), true, rts0);
  peer = connect(*h, test::registration("n1"));
  CHECK(h->node("n1").state() == "DOWN");
  CHECK(h->node("n1").reason() == "Not responding");
  CHECK(h->node("n1").responding());
  CHECK(h->node_control("resume", "n1").empty());
  CHECK(h->node("n1").state() == "IDLE");
  h = restart(std::move(h), true, rts0);
  CHECK(h->node("n1").state() == "UNKNOWN");
}

TEST_CASE("node state: a node short of its configured GPUs is DOWN with the reason across a restart, until it registers them all") {
  auto gres = [](ClusterConfig& c) { c.nodes[0].gres = {{"h100", 2}}; };
  Harness h = start(std::make_shared<test::MemoryLog::Disk>(), kStart, gres);
  pb::RegisterNode reg = test::registration("n1");
  auto* gpu = reg.add_gpus();
  gpu->set_type("h100");
  connect(*h, reg);
  CHECK(h->node("n1").state() == "DOWN");
  CHECK(h->node("n1").reason().find("gres/gpu count reported lower than configured") != std::string::npos);
  h = restart(std::move(h), true, gres);
  CHECK(h->node("n1").state() == "DOWN");
  CHECK(h->node("n1").reason().find("gres/gpu count reported lower than configured") != std::string::npos);
  *reg.add_gpus() = *gpu;
  connect(*h, reg);
  CHECK(h->node("n1").state() == "IDLE");
  CHECK(h->node("n1").gres() == "gpu:h100:2");
}

TEST_CASE("node state: a dynamic node comes back with its features, labels and partitions - a deleted one does not") {
  auto by_feature = [](ClusterConfig& c) {
    PartitionConfig p;
    p.name = "gpu";
    REQUIRE(parse_partition_nodes("feature{gpu}", p).is_ok());
    c.partitions.push_back(p);
  };
  for (bool crash : {true, false}) {
    CAPTURE(crash);
    Harness h = start(std::make_shared<test::MemoryLog::Disk>(), kStart, by_feature);
    pb::RegisterNode reg = test::registration("dyn1", 8);
    reg.add_features("gpu");
    reg.set_block("b1");
    auto peer = connect(*h, reg);
    h = restart(std::move(h), crash, by_feature);
    pb::Node d = h->node("dyn1");
    CHECK(d.dynamic());
    CHECK(d.cpus() == 8);
    CHECK(d.block() == "b1");
    REQUIRE(d.features_size() == 1);
    CHECK(d.features(0) == "gpu");
    REQUIRE(d.partitions_size() == 1);
    CHECK(d.partitions(0) == "gpu");
    CHECK(d.state() == "UNKNOWN");  // until its agent is back
    CHECK(h->node_control("delete", "n1").find("in the config") != std::string::npos);
    CHECK(h->node_control("delete", "dyn1").empty());
    CHECK(h->node("dyn1").name().empty());
    h = restart(std::move(h), crash, by_feature);
    CHECK(h->node("dyn1").name().empty());
  }
}

TEST_CASE("node state: heartbeats and a registration that changes nothing journal nothing") {
  Harness h = start(std::make_shared<test::MemoryLog::Disk>(), kStart);
  pb::RegisterNode reg = test::registration("n1");
  reg.set_boot_time(kStart - 100);
  auto peer = connect(*h, reg);
  size_t events = h->disk->events.size();
  CHECK(events == 1);  // the registration: n1's boot time (its size is the config's)
  for (int i = 0; i < 100; ++i) {
    *h->clock += 1;
    h->ctl->agent_heartbeat("n1", pb::Heartbeat{});
    h->ctl->tick();
  }
  h->settle();
  peer = connect(*h, reg);  // the agent reconnects, as it was
  CHECK(h->disk->events.size() == events);
  CHECK(h->node("n1").state() == "IDLE");
  CHECK(peer->sent.size() >= 1);
  CHECK(peer->sent.front().has_register_ack());
}
