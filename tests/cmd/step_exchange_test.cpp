// A step's all-gather as the agents run it (cmd/agent/step_exchange): members on three
// nodes and the gatherer wired directly (no links), on one io_context: each round's
// blobs in node order on every node, answers never inline, a lost node failing the round
// under way and later ones.
#include <doctest/doctest.h>

#include <asio/io_context.hpp>
#include <algorithm>
#include <memory>

#include "cmd/agent/step_exchange.hpp"

using namespace hq;
using namespace hq::cmd;

namespace {

struct Step {
  asio::io_context io;
  std::vector<std::shared_ptr<StepExchange>> nodes;
  std::unique_ptr<StepGatherer> gather;
  std::vector<Result<std::vector<std::string>>> got;

  explicit Step(size_t n) : got(n) {
    gather = std::make_unique<StepGatherer>(7, 1, n, [this](const pb::Envelope& out) {
      for (auto& node : nodes) node->deliver(out.step_exchange_out());
    });
    for (size_t i = 0; i < n; ++i)
      nodes.push_back(std::make_shared<StepExchange>(io, 7, 1, static_cast<uint32_t>(i), [this](const pb::Envelope& in) {
        REQUIRE(gather->add(in.step_exchange_in()));
      }));
  }
  void contribute(size_t node, std::string blob) {
    nodes[node]->all_gather(std::move(blob), [this, node](Result<std::vector<std::string>> r) { got[node] = std::move(r); });
  }
};

}  // namespace

TEST_CASE("step exchange (agent): every node gets every blob in node order - answers come from the loop") {
  Step s(3);
  s.contribute(2, "c");
  s.contribute(0, "a");
  s.contribute(1, "b");
  CHECK_FALSE(s.got[0]);  // the round is complete, but the answers wait for the loop
  s.io.run();
  for (auto& r : s.got) {
    REQUIRE(r);
    CHECK(*r == std::vector<std::string>{"a", "b", "c"});
  }
  // A second round while the first is under way on a node is refused there.
  s.io.restart();
  s.contribute(0, "x");
  s.contribute(0, "y");
  s.io.run();
  CHECK(s.got[0].status().code() == Code::kUnavailable);
}

TEST_CASE("step exchange (agent): a lost node fails the round under way and every later one") {
  Step s(2);
  s.contribute(0, "a");
  s.gather->fail(unavailable("lost the link to e2's agent"));
  s.io.run();
  CHECK(s.got[0].status().message() == "lost the link to e2's agent");
  s.io.restart();
  s.contribute(1, "late");  // a node that had not heard: its round fails too
  s.io.run();
  CHECK(s.got[1].status().message() == "lost the link to e2's agent");
  s.nodes[0]->fail(unavailable("the link to the manager closed"));
  s.io.restart();
  s.contribute(0, "again");
  s.io.run();
  CHECK(s.got[0].status().message() == "the link to the manager closed");
}

TEST_CASE("step exchange (agent): a round too big for one frame reaches every node in parts") {
  Step s(4);
  size_t frames = 0;
  size_t biggest = 0;
  s.gather = std::make_unique<StepGatherer>(7, 1, 4, [&](const pb::Envelope& out) {
    ++frames;
    biggest = std::max(biggest, out.ByteSizeLong());
    for (auto& node : s.nodes) node->deliver(out.step_exchange_out());
  });
  for (size_t i = 0; i < 4; ++i) s.contribute(i, std::string(kExchangeBlobMax, static_cast<char>('a' + i)));
  s.io.run();
  CHECK(frames == 4);                    // 4 x 6 MiB would be 24 MiB in one frame
  CHECK(biggest < kExchangeBlobMax + 1024);
  for (auto& r : s.got) {
    REQUIRE(r);
    REQUIRE(r->size() == 4);
    CHECK((*r)[3] == std::string(kExchangeBlobMax, 'd'));
  }
}

TEST_CASE("step exchange (agent): a node's blob over the limit fails the round on every node, saying why") {
  Step s(2);
  Status logged;
  s.nodes[1] = std::make_shared<StepExchange>(s.io, 7, 1, 1, [&](const pb::Envelope& in) {
    logged = s.gather->add(in.step_exchange_in());
  });
  s.contribute(0, "a");
  s.contribute(1, std::string(kExchangeBlobMax + 1, 'x'));
  s.io.run();
  CHECK_FALSE(logged);
  for (auto& r : s.got) {
    REQUIRE_FALSE(r);
    CHECK(r.status().message().find("node 1 of the step has 6291457 bytes") != std::string::npos);
  }
}

TEST_CASE("step exchange (agent): an answer without parts (an older manager's) is whole - a bad part fails the round") {
  asio::io_context io;
  Result<std::vector<std::string>> got;
  StepExchange node(io, 7, 1, 0, [](const pb::Envelope&) {});
  node.all_gather("a", [&](Result<std::vector<std::string>> r) { got = std::move(r); });
  pb::StepExchangeOut old;  // first and total unset, as before parts
  old.set_round(0);
  old.add_blobs("a");
  old.add_blobs("b");
  node.deliver(old);
  io.run();
  REQUIRE(got);
  CHECK(*got == std::vector<std::string>{"a", "b"});

  node.all_gather("c", [&](Result<std::vector<std::string>> r) { got = std::move(r); });
  pb::StepExchangeOut stale;  // round 0 again: ignored
  stale.set_round(0);
  stale.set_total(1);
  stale.add_blobs("x");
  node.deliver(stale);
  pb::StepExchangeOut bad;  // round 1, but past its own end
  bad.set_round(1);
  bad.set_first(3);
  bad.set_total(2);
  bad.add_blobs("x");
  node.deliver(bad);
  io.restart();
  io.run();
  REQUIRE_FALSE(got);
  CHECK(got.status().message().find("exchange: a part for nodes 3..4 of 2") != std::string::npos);
}
