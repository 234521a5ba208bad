// The bookkeeping of a step's all-gather (core/step_exchange): rounds strictly in order,
// blobs in node order whatever order they come in, bad contributions refused without
// harm, a failure that ends this round and every later one.
#include <doctest/doctest.h>

#include "core/step_exchange.hpp"

using namespace hq;

using Blobs = std::vector<std::string>;

TEST_CASE("step exchange: a round completes with every node's blob - in node order") {
  ExchangeGather g(3);
  auto a = g.add(2, 0, "c");
  REQUIRE(a);
  CHECK_FALSE(a->has_value());
  REQUIRE(g.add(0, 0, "a"));
  auto done = g.add(1, 0, "b");
  REQUIRE(done);
  REQUIRE(done->has_value());
  CHECK(**done == Blobs{"a", "b", "c"});
  CHECK(g.round() == 1);
  // The next round starts empty; empty blobs count.
  REQUIRE(g.add(1, 1, ""));
  REQUIRE(g.add(0, 1, "x"));
  auto second = g.add(2, 1, "z");
  REQUIRE(second);
  CHECK(**second == Blobs{"x", "", "z"});
}

TEST_CASE("step exchange: one node completes a round at once") {
  ExchangeGather g(1);
  for (uint32_t r = 0; r < 3; ++r) {
    auto done = g.add(0, r, std::to_string(r));
    REQUIRE(done);
    CHECK(**done == Blobs{std::to_string(r)});
  }
}

TEST_CASE("step exchange: bad contributions are refused and change nothing") {
  ExchangeGather g(2);
  CHECK(g.add(2, 0, "x").status().code() == Code::kInvalid);  // no such node
  CHECK(g.add(0, 1, "x").status().code() == Code::kInvalid);  // a round ahead
  REQUIRE(g.add(0, 0, "a"));
  CHECK(g.add(0, 0, "again").status().code() == Code::kInvalid);  // twice in one round
  auto done = g.add(1, 0, "b");
  REQUIRE(done);
  CHECK(**done == Blobs{"a", "b"});
  CHECK(g.add(0, 0, "late").status().code() == Code::kInvalid);  // a round behind
}

TEST_CASE("step exchange: a failure ends this round and every later one") {
  ExchangeGather g(2);
  REQUIRE(g.add(0, 0, "a"));
  g.fail(unavailable("lost the link to n2's agent"));
  CHECK(g.failure().code() == Code::kUnavailable);
  auto after = g.add(1, 0, "b");
  CHECK(after.status().message() == "lost the link to n2's agent");
  g.fail(unavailable("another"));  // the first reason stays
  CHECK(g.failure().message() == "lost the link to n2's agent");
}

TEST_CASE("step exchange: a member runs one round at a time and takes only its answer") {
  ExchangeMember m;
  auto r0 = m.begin();
  REQUIRE(r0);
  CHECK(*r0 == 0);
  CHECK(m.busy());
  CHECK(m.begin().status().code() == Code::kUnavailable);  // still under way
  CHECK_FALSE(m.end(1));                                    // not this round's answer
  CHECK(m.end(0));
  CHECK_FALSE(m.busy());
  CHECK_FALSE(m.end(0));  // twice
  auto r1 = m.begin();
  REQUIRE(r1);
  CHECK(*r1 == 1);
}

TEST_CASE("step exchange: a round's answer is cut into parts of at most the budget, in node order") {
  std::vector<std::string> blobs{std::string(4, 'a'), std::string(3, 'b'), std::string(9, 'c'), "", std::string(2, 'e')};
  auto parts = exchange_parts(blobs, 8);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].first == 0);
  CHECK(parts[0].end == 2);  // 4 + 3 fit 8
  CHECK(parts[1].first == 2);
  CHECK(parts[1].end == 3);  // 9 alone, over the budget: a part holds at least one blob
  CHECK(parts[2].first == 3);
  CHECK(parts[2].end == 5);
  CHECK(exchange_parts({}, 8).size() == 1);
  CHECK(exchange_parts({"x", "y"}).size() == 1);
}

TEST_CASE("step exchange: a member puts an answer's parts back together, in any order") {
  ExchangeMember m;
  REQUIRE(m.begin());
  auto first = m.take(0, 2, 3, {"c"});
  REQUIRE(first);
  CHECK_FALSE(first->has_value());
  CHECK(m.busy());
  CHECK_FALSE(m.take(0, 1, 4, {"b"}));       // another total
  CHECK_FALSE(m.take(0, 2, 3, {"c"}));       // twice
  CHECK_FALSE(m.take(0, 2, 3, {"c", "d"}));  // past the end
  CHECK_FALSE(m.take(1, 0, 3, {"a"}));       // not this round
  auto last = m.take(0, 0, 3, {"a", "b"});
  REQUIRE(last);
  REQUIRE(last->has_value());
  CHECK(**last == std::vector<std::string>{"a", "b", "c"});
  CHECK_FALSE(m.busy());
  CHECK_FALSE(m.take(0, 0, 3, {"a"}));  // the round is over
  REQUIRE(m.begin());
  auto whole = m.take(1, 0, 2, {"x", "y"});
  REQUIRE(whole);
  REQUIRE(whole->has_value());
  CHECK((*whole)->size() == 2);
}

TEST_CASE("step exchange: a part naming more nodes than an exchange may have is refused") {
  ExchangeMember m;
  REQUIRE(m.begin());
  CHECK_FALSE(m.take(0, 0, kExchangeMaxNodes + 1, {"a"}));
  CHECK(m.busy());
}
