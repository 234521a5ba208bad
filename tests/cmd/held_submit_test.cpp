// A submission of held jobs (sbatch -H) asks for no scheduling pass: a pass would find
// nothing new, its jobs not being in the queue a pass looks at. A plain submission, and a
// held one with a --deadline (a pass still ends it there), do ask for one.
#include <doctest/doctest.h>

#include "controller_harness.hpp"

TEST_CASE("a held submission asks for no scheduling pass - a plain one and a held one with a deadline do") {
  hq::test::ControllerHarness h("n[1-2]", 4, std::make_shared<hq::test::MemoryLog::Disk>(), hq::Time{1'800'000'000});
  REQUIRE(h.ok);
  uint64_t before = h.ctl->schedule_requests();
  auto held = h.job_request();
  held.mutable_spec()->set_hold(true);
  REQUIRE(h.submit_request(held));
  auto held_array = h.job_request("", "1-5");
  held_array.mutable_spec()->set_hold(true);
  REQUIRE(h.submit_request(held_array));
  CHECK(h.ctl->schedule_requests() == before);

  auto with_deadline = held;
  with_deadline.mutable_spec()->set_deadline(1'800'000'000 + 3600);
  REQUIRE(h.submit_request(with_deadline));
  CHECK(h.ctl->schedule_requests() == before + 1);

  REQUIRE(h.submit_request(h.job_request()));
  CHECK(h.ctl->schedule_requests() == before + 2);
}
