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
  p.ran(PassKind::kFull, 10, 10.05);           // a 50 ms full pass: the next one at 11.05
  CHECK(!next_pass(p, 10.06).any);
  p.on_event();
  n = next_pass(p, 10.2);
  CHECK(n.kind == PassKind::kQuick);           // the head of the queue moves first
  CHECK(n.at == doctest::Approx(10.2));
  p.ran(PassKind::kQuick, 10.2, 10.21);
  n = next_pass(p, 10.22);
  CHECK(n.kind == PassKind::kFull);            // and the full pass follows when allowed
  CHECK(n.at == doctest::Approx(11.05));
  p.ran(PassKind::kFull, 11.05, 11.1);
  CHECK(!next_pass(p, 11.2).any);
}

TEST_CASE("pacing: passes of both kinds together take at most a third of the loop") {
  PassPacing p;
  p.ran(PassKind::kFull, 0, 0.01);             // a 10 ms full pass
  p.on_event();
  NextPass n = next_pass(p, 0.011);
  CHECK(n.kind == PassKind::kQuick);           // not before twice the full pass's cost
  CHECK(n.at == doctest::Approx(0.03));
  p.ran(PassKind::kQuick, 0.03, 0.034);        // a 4 ms quick pass
  p.on_event();
  n = next_pass(p, 0.035);
  CHECK(n.kind == PassKind::kQuick);
  CHECK(n.at == doctest::Approx(0.042));       // twice its own cost after it
  p.ran(PassKind::kQuick, 0.042, 0.046);
  n = next_pass(p, 0.05);
  CHECK(n.kind == PassKind::kFull);            // twenty times its own cost after the last
  CHECK(n.at == doctest::Approx(0.21));
  // Requests keep coming: over a second of events, what share of it do passes take?
  PassPacing q;
  double t = 0, busy = 0, full_busy = 0;
  while (t < 1.0) {
    q.on_event();
    NextPass due = next_pass(q, t);
    if (!due.any) break;
    t = due.at;
    double cost = due.kind == PassKind::kFull ? 0.012 : 0.0045;  // 100,000 pending jobs
    q.ran(due.kind, t, t + cost);
    busy += cost;
    if (due.kind == PassKind::kFull) full_busy += cost;
    t += cost;
  }
  CHECK(busy / t <= 1.0 / 3 + 0.01);
  CHECK(full_busy / t <= 1.0 / 21 + 0.01);
  CHECK(full_busy > 0);                        // full passes do run
}

TEST_CASE("pacing: a short full pass is followed by the next after twice its cost, as a quick one") {
  PassPacing p;
  p.ran(PassKind::kFull, 0, 0.0005);          // 0.5 ms: a small queue's
  p.on_event();
  NextPass n = next_pass(p, 0.0006);
  CHECK(n.kind == PassKind::kFull);
  CHECK(n.at == doctest::Approx(0.0015));
  p.ran(PassKind::kFull, 0.0015, 0.003);      // 1.5 ms: twenty times that before the next
  p.on_event();
  n = next_pass(p, 0.0031);
  CHECK(n.kind == PassKind::kQuick);
  CHECK(n.at == doctest::Approx(0.006));
  p.ran(PassKind::kQuick, 0.006, 0.0061);
  n = next_pass(p, 0.0062);
  CHECK(n.kind == PassKind::kFull);
  CHECK(n.at == doctest::Approx(0.033));
}

TEST_CASE("pacing: the last pass of either kind paces the next - the tick adds a full pass per bf_interval") {
  PassPacing p;
  p.ran(PassKind::kFull, 0, 0.01);
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
