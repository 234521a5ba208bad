#include <doctest/doctest.h>

#include "core/pass_pacing.hpp"

using namespace hq;

TEST_CASE("pacing: an event runs a full pass when its pacing allows, else a quick one first") {
  PassPacing p;
  CHECK(!next_pass(p, 0).any);
  p.on_event();
  NextPass n = next_pass(p, 10);
  CHECK(n.any);
  CHECK(n.kind == PassKind::kFull);
  CHECK(n.at == 10);
  p.ran(PassKind::kFull, 10, 10.5);            // a 0.5 s full pass: next one at 11.5
  CHECK(!next_pass(p, 10.6).any);
  p.on_event();
  n = next_pass(p, 10.6);
  CHECK(n.kind == PassKind::kQuick);           // the head of the queue moves at once
  CHECK(n.at == 10.6);
  p.ran(PassKind::kQuick, 10.6, 10.61);
  n = next_pass(p, 10.62);
  CHECK(n.kind == PassKind::kFull);            // and the full pass follows when allowed
  CHECK(n.at == doctest::Approx(11.5));
  p.ran(PassKind::kFull, 11.5, 12.0);
  CHECK(!next_pass(p, 12.1).any);
}

TEST_CASE("pacing: quick passes are paced by their own cost - the tick adds a full pass per bf_interval") {
  PassPacing p;
  p.ran(PassKind::kFull, 0, 1);
  p.ran(PassKind::kQuick, 1, 1.2);             // next quick no sooner than 1.6
  p.on_tick(1.3, 30);
  NextPass n = next_pass(p, 1.3);
  CHECK(n.kind == PassKind::kQuick);
  CHECK(n.at == doctest::Approx(1.6));
  p.ran(PassKind::kQuick, 1.6, 1.7);
  CHECK(!next_pass(p, 1.8).any);               // no full pass: bf_interval has not passed
  p.on_tick(31.5, 30);
  n = next_pass(p, 31.5);
  CHECK(n.kind == PassKind::kFull);
}
